"""How skills say things: times, dates and durations as people say them aloud, in English
and Chinese, and a user's words turned round ("my daughter" → "your daughter")."""

from __future__ import annotations

import re
from datetime import date, datetime, time

_WEEKDAYS_ZH = "一二三四五六日"
_ORDINAL = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}
_SWAP = {
    "my": "your",
    "mine": "yours",
    "i": "you",
    "me": "you",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "am": "are",
    "your": "my",
    "yours": "mine",
    "you": "I",
    "you're": "I'm",
}


def part_of_day(hour: int) -> str:
    """ "in the morning", "in the afternoon", "in the evening" or "at night"."""
    if hour >= 21 or hour < 5:
        return "at night"
    if hour >= 17:
        return "in the evening"
    return "in the afternoon" if hour >= 12 else "in the morning"


def hhmm(t: time, lang: str) -> str:
    """10:00 → "10:00 in the morning" (上午10点): the exact time, read back unmistakably."""
    return clock_zh(t) if lang == "zh" else f"{t:%H:%M} {part_of_day(t.hour)}"


def clock_en(t: time) -> str:
    """14:05 → "five past two in the afternoon"; 12:00 → "noon"."""
    hour, minute = t.hour, t.minute
    if (hour, minute) == (12, 0):
        return "noon"
    if (hour, minute) == (0, 0):
        return "midnight"
    part = part_of_day(hour)
    h12 = hour % 12 or 12
    if minute == 0:
        return f"{h12} o'clock {part}"
    if minute == 15:
        return f"quarter past {h12} {part}"
    if minute == 30:
        return f"half past {h12} {part}"
    if minute == 45:
        return f"quarter to {(h12 % 12) + 1} {part}"
    return f"{h12}:{minute:02d} {part}"


def clock_zh(t: time) -> str:
    hour, minute = t.hour, t.minute
    part = (
        "凌晨"
        if hour < 5
        else "早上"
        if hour < 9
        else "上午"
        if hour < 12
        else ("中午" if hour < 13 else "下午" if hour < 18 else "晚上")
    )
    h12 = hour % 12 or 12
    if minute == 0:
        return f"{part}{h12}点"
    if minute == 30:
        return f"{part}{h12}点半"
    return f"{part}{h12}点{minute}分"


def clock(t: time, lang: str) -> str:
    return clock_zh(t) if lang == "zh" else clock_en(t)


def day_en(d: date) -> str:
    """Tuesday 1st December 2026."""
    suffix = _ORDINAL.get(d.day, "th")
    return f"{d:%A} {d.day}{suffix} {d:%B %Y}"


def day_zh(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日，{weekday_zh(d.weekday())}"


def weekday_zh(weekday: int) -> str:
    """0 (Monday) → 星期一."""
    return f"星期{_WEEKDAYS_ZH[weekday]}"


def day(d: date, lang: str) -> str:
    return day_zh(d) if lang == "zh" else day_en(d)


def moment(at: datetime, now: datetime, lang: str) -> str:
    """A moment relative to today, as said after "until": "half past 3 this afternoon",
    "8 o'clock tomorrow morning", "noon tomorrow", "Sunday 6th December at 5 o'clock in the
    morning"."""
    days = (at.date() - now.date()).days
    if lang == "zh":
        when = {0: "今天", 1: "明天", 2: "后天"}.get(days, f"{at.month}月{at.day}日")
        return f"{when}{clock_zh(at.time())}"
    said = clock_en(at.time())
    part = part_of_day(at.hour)
    if days == 1 and at.hour < 5 and now.hour >= 5:  # the small hours after this evening
        return f"{said.removesuffix(part).rstrip()} tonight"
    if days in (0, 1) and said.endswith(part):
        bare = said.removesuffix(part).rstrip()
        if days == 0:
            return f"{bare} {'this morning' if at.hour < 5 else _TODAY[part]}"
        return f"{bare} {_TOMORROW[part]}"
    if days in (0, 1):  # noon, midnight
        return f"{said} {'today' if days == 0 else 'tomorrow'}"
    return f"{at:%A} {at.day}{_ORDINAL.get(at.day, 'th')} {at:%B} at {said}"


_TODAY = {
    "in the morning": "this morning",
    "in the afternoon": "this afternoon",
    "in the evening": "this evening",
    "at night": "tonight",
}
_TOMORROW = {part: "tomorrow " + when.split()[-1] for part, when in _TODAY.items()}
_TOMORROW["at night"] = "tomorrow night"


def duration(seconds: int, lang: str) -> str:
    hours, rest = divmod(int(seconds), 3600)
    minutes = rest // 60
    if lang == "zh":
        parts = ([f"{hours}个小时"] if hours else []) + ([f"{minutes}分钟"] if minutes else [])
        return "".join(parts) or f"{seconds}秒"
    parts = []
    if hours:
        parts.append("an hour" if hours == 1 else f"{hours} hours")
    if minutes:
        parts.append("a minute" if minutes == 1 else f"{minutes} minutes")
    return " and ".join(parts) or f"{seconds} seconds"


def mid_sentence(text: str) -> str:
    """A sentence said after "You told me": "Your daughter…" → "your daughter…" (a name or
    "I" keeps its capital: only the words that are capitalised for starting a sentence)."""
    first = text.split(" ", 1)[0]
    if first.lower() in _SENTENCE_STARTS:
        return text[:1].lower() + text[1:]
    return text


_SENTENCE_STARTS = frozenset(
    "your you my the a an it there this that we they he she his her our their".split()
)


def turned_round(text: str) -> str:
    """The user's words from fayd's side: "my daughter lives in Leeds" → "your daughter lives
    in Leeds"."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        new = _SWAP.get(word.lower(), word)
        keep_case = word[0].isupper() and word != "I" and new != "I"
        return new.capitalize() if keep_case else new

    return re.sub(r"\b[\w']+\b", swap, text)


#: How to speak of whom ("him", "her"; "them" when the word does not say).
HIM = frozenset(
    "husband hubby dad father son brother grandson grandfather grandad grandpa boy lad nephew "
    "uncle boyfriend fella".split()
)
HER = frozenset(
    "wife missus mum mother mom mam daughter sister granddaughter grandmother nan nana gran "
    "granny grandma girl lass niece auntie aunt girlfriend".split()
)


def pronouns(word: str | None) -> tuple[str, str, str]:
    """(object, subject, possessive) for a kin word: "mum" → her, she, her; "dad" → him, he,
    his; a name or any other word → them, they, their."""
    word = (word or "").lower()
    if word in HIM:
        return "him", "he", "his"
    return ("her", "she", "her") if word in HER else ("them", "they", "their")
