"""What a fired reminder says, in the user's language: on time, late (and how late, never
pretending), a timer's alarm, the medication question. Plain text, no I/O."""

from __future__ import annotations

import re
from datetime import datetime

#: Control characters (C0, DEL, C1): a NUL stops the voice (espeak takes C strings), and
#: none of them is anything to say.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def spoken_text(text: str) -> str:
    """``text`` as it can be said: control characters as spaces, runs of spaces as one."""
    return " ".join(_CONTROL.sub(" ", str(text)).split())


#: A fire more than this late says so.
LATE_S = 120.0
#: Kinds whose words are fayd's own templates ("Your … timer is done.", "It's time to …"):
#: a late one may begin in lower case. Anything else may begin with a name: kept as it is.
OWN_WORDS = frozenset({"timer", "medication", "checkin"})
#: How an on-time reminder begins (left out when it is late).
REMINDER = ("A reminder: ", "提醒你：")

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


def fired(text: str, kind: str, name: str, lang: str) -> str:
    """The words of a fire, said on time (``late`` adds how late it is)."""
    zh = lang == "zh"
    text, name = spoken_text(text), spoken_text(name)  # stored before it was checked
    if kind == "timer":
        label = name or ("计时" if zh else "")
        core = f"{label}时间到了。" if zh else f"Your {label + ' ' if label else ''}timer is done."
    elif kind == "medication":
        core = f"该{text}了。你吃了吗？" if zh else f"It's time to {text}. Did you take them?"
    else:
        core = f"{REMINDER[zh]}{text}。" if zh else f"{REMINDER[zh]}{text}."
    return core


def late(core: str, kind: str, due: datetime, said_at: datetime, lang: str) -> str:
    """``core`` as said at ``said_at``: as it is when on time, else with when it was due and
    how long ago ("This was due at 08:00, two hours ago: call your son.")."""
    zh = lang == "zh"
    late_s = (said_at - due).total_seconds()
    if late_s <= LATE_S:
        return core
    if kind == "reminder" and core.startswith(REMINDER[zh]):
        core = core[len(REMINDER[zh]) :]
    elif not zh and kind in OWN_WORDS:  # "Your oven timer…": fayd's words, never a name
        core = core[0].lower() + core[1:]
    at = f"{due:%H:%M}"
    days = (said_at.date() - due.date()).days
    if days == 1:
        at = f"昨天{at}" if zh else f"{at} yesterday"
    elif days > 1:
        at = f"{due.month}月{due.day}日{at}" if zh else f"{at} on {due:%A} {due.day} {due:%B}"
    if kind == "care":  # something that happened ("Anna has seen your alert."), not a task
        return f"{at}的时候：{core}" if zh else f"Earlier, at {at}: {core}"
    if zh:
        return f"这本来是{at}的提醒，{how_late(late_s, lang)}：{core}"
    return f"This was due at {at}, {how_late(late_s, lang)}: {core}"


def greeting(user: str, now: datetime, today: list[tuple[datetime, str]], lang: str) -> str:
    """The morning greeting: the day, and what is planned for it (``today``: (when, what))."""
    user, today = spoken_text(user), [(at, spoken_text(what)) for at, what in today]
    if lang == "zh":
        plan = "；".join(f"{at:%H:%M}，{what}" for at, what in today)
        day = f"{now.month}月{now.day}日，星期{'一二三四五六日'[now.weekday()]}"
        return f"早上好，{user}！今天是{day}。" + (
            f"今天的安排：{plan}。" if plan else "今天没有安排。"
        )
    plan = "; ".join(f"at {at:%H:%M}, {what}" for at, what in today)
    said = f"Good morning, {user.capitalize()}! It's {now:%A} {now.day} {now:%B}."
    return said + (f" Today: {plan}." if plan else " Nothing is planned for today.")


def ask_again(text: str, lang: str) -> str:
    text = spoken_text(text)
    if lang == "zh":
        return f"我再问一下：你{text}了吗？"
    return f"Just checking: did you {text}?"
