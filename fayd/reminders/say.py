"""What a fired reminder says, in the user's language: on time, late (and how late, never
pretending), a timer's alarm, the medication question. Plain text, no I/O."""

from __future__ import annotations

from datetime import datetime

#: A fire more than this late says so.
LATE_S = 120.0

_EN_NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()


def _en_count(n: int, unit: str) -> str:
    word = (
        "an"
        if n == 1 and unit == "hour"
        else "a"
        if n == 1
        else (_EN_NUMBERS[n - 1] if n <= 12 else str(n))
    )
    return f"{word} {unit}{'' if n == 1 else 's'}"


def how_late(seconds: float, lang: str) -> str:
    """ "20 minutes ago", "two hours ago", "3 days ago" (rounded down, never less)."""
    minutes = int(seconds // 60)
    if lang == "zh":
        if minutes < 60:
            return f"{minutes}分钟前"
        if minutes < 48 * 60:
            return f"{minutes // 60}个小时前"
        return f"{minutes // 1440}天前"
    if minutes < 60:
        return f"{_en_count(minutes, 'minute')} ago"
    if minutes < 48 * 60:
        return f"{_en_count(minutes // 60, 'hour')} ago"
    return f"{_en_count(minutes // 1440, 'day')} ago"


def fired(text: str, kind: str, name: str, due: datetime, said_at: datetime, lang: str) -> str:
    """The words of a fire said at ``said_at`` (both aware, in the user's zone)."""
    zh = lang == "zh"
    late = (said_at - due).total_seconds()
    if kind == "timer":
        label = name or ("计时" if zh else "")
        core = f"{label}时间到了。" if zh else f"Your {label + ' ' if label else ''}timer is done."
    elif kind == "medication":
        core = f"该{text}了。你吃了吗？" if zh else f"It's time to {text}. Did you take them?"
    else:
        core = f"提醒你：{text}。" if zh else f"A reminder: {text}."
    if late <= LATE_S:
        return core
    if kind == "reminder":
        core = f"{text}。" if zh else f"{text}."
    elif not zh:
        core = core[0].lower() + core[1:]
    at = f"{due:%H:%M}"
    if due.date() != said_at.date():
        at = f"{due.month}月{due.day}日{at}" if zh else f"{at} on {due:%A} {due.day} {due:%B}"
    if zh:
        return f"这本来是{at}的提醒，{how_late(late, lang)}：{core}"
    return f"This was due at {at}, {how_late(late, lang)}: {core}"


def ask_again(text: str, lang: str) -> str:
    if lang == "zh":
        return f"我再问一下：你{text}了吗？"
    return f"Just checking: did you {text}?"
