"""A care rule said in words by a caregiver (docs/care.md, "Rules in words"): "tell me if Mum
hasn't moved by 10", "let me know if dad's blood pressure is over 150/95", "tell me straight
away if mum falls". Its cue phrases (an ask to be told, and a condition fayd can watch) and
its slots, parsed in code: who, the kind of rule, the sensor, the time, the room, the limits.

What the words do not say is left out, never guessed: a reading with no number has no limit,
and the skill says what is missing. One reading is chosen for a bare hour ("by 10"): a
missing-by rule watches the day from midnight, so it is the morning one, and it is read back
as an absolute time before anything is kept."""

from __future__ import annotations

import re
from datetime import datetime, time
from typing import Any

from fayd.agent.clock.times import Ambiguous, When, parse_when
from fayd.agent.language.phrases import FAMILY, FAMILY_ZH

ROOMS = (
    r"(kitchen|living room|lounge|sitting room|front room|bedroom|bathroom|hall|hallway|"
    r"dining room|landing|study|conservatory)"
)
ROOMS_ZH = {"厨房": "kitchen", "客厅": "living room", "卧室": "bedroom", "卫生间": "bathroom"}

# The conditions fayd can watch, as said.
_MISSING = (
    r"(has ?n[o']t|has not|is ?n[o']t|is not|isn't|did ?n[o']t|did not|does ?n[o']t|"
    r"does not|not|no one has|nobody has)( yet)?( been| got| gotten| come| gone)?"
    r" ?(moved|up|stirred|about|out of bed|in the|into the|been in|been into|been up|"
    r"moving|got up|gotten up|come down|downstairs|"
    r"(done|checked|measured|taken|had) (her|his|their) (blood pressure|bp)( taken| done| checked)?)"
    r"|\bno (movement|motion|sign of (her|him|them|life))\b|\b(been|stayed|kept) still\b"
)
_PANIC = (
    r"\b(press(es|ed)?|push(es|ed)?|hits?|uses?|sets? off|pulls?)\b.{0,20}"
    r"\b(alarm|panic|button|pendant|cord)\b|\bpanic (button|alarm)\b"
)
_FALL = r"\b(falls?|fell|fallen|has a fall|have a fall|takes a tumble)\b"
_HELP = r"\b(calls?|shouts?|asks?|cries) (out )?for help\b"
_READING = (
    r"(blood pressure|\bbp\b|heart ?rate|pulse|heart ?beat|oxygen|spo2|saturation|\bsats\b|"
    r"temperature|fever|\bdegrees\b|colder|warmer|hotter|cooler|too (cold|hot|warm|chilly))"
)
_DIRECTION = (
    r"(over|above|higher than|more than|greater than|exceeds?|rises? (above|over)|"
    r"goes (over|above|up)|under|below|lower than|less than|drops?|dips?|falls? below|"
    r"colder|warmer|hotter|cooler|too (high|low|cold|hot|warm|chilly)|gets? (high|low))"
)
_CONDITION = rf"({_MISSING}|{_PANIC}|{_FALL}|{_HELP}|\b(colder|warmer|hotter|cooler) than\b|{_READING}.{{0,30}}{_DIRECTION}|{_DIRECTION}.{{0,30}}{_READING})"
_TELL_ME = (
    r"\b(tell|let|alert|warn|message|text|ping|notify|call|ring|phone|email|wake) me"
    r"( know)?( (straight|right) away| at once| immediately| right now| please)?"
)

#: The care.rule intent's cue phrases (fayd.agent.understand.cues): an ask to be told and a
#: condition fayd can watch, in either order; a reminder or a timer has no condition.
CUES = [
    rf"{_TELL_ME}\b.{{0,16}}\b(if|when|in case|should)\b(?=.*{_CONDITION})",
    rf"^((so|and|fay|please)[ ,]+)*(if|when|should)\b.*{_CONDITION}.*{_TELL_ME}\b",
    rf"{FAMILY_ZH}.{{0,12}}(还没|没有|没动|没活动|超过|高于|低于|摔倒|跌倒|摔了|按).{{0,20}}"
    r"(告诉我|通知我|跟我说|让我知道|叫我)",
]

_NOT_A_PERSON = frozenset(
    "the it its there theres there's anyone anybody someone somebody nobody no i me you he "
    "she they her his their a an this that what my our your".split()
)
_WHO = re.compile(
    r"\b(?:if|when|in case|should)\s+(?:my |our )?(?P<who>[a-z]+)(?:'s)?\b"
    rf"|\b(?:my |our )?(?P<owner>{FAMILY}|[a-z]+)'s (?:{ROOMS}|house|flat|home|place|room)\b"
    rf"|\b(?:from|of) (?:my |our )?(?P<kin>{FAMILY})\b"
)
_ROOM = re.compile(rf"\b(?:in|into|to|of) (?:the |her |his |their |\w+'s )?{ROOMS}\b|\b{ROOMS}\b")
_NUMBER = r"(?P<a>\d{1,3}(?:\.\d)?)"
_LIMIT = re.compile(
    rf"(?P<dir>{_DIRECTION})\D{{0,20}}?{_NUMBER}(?:\s*(?:/|over)\s*(?P<b>\d{{2,3}}))?"
)
_LIMIT_ZH = re.compile(
    rf"(?P<dir>超过|高于|高过|大于|低于|小于|不到|低过){_NUMBER}(?:/(?P<b>\d{{2,3}}))?"
)
#: How long without moving: "for 3 hours", "for over an hour", "for half an hour", 三个小时.
_FOR = re.compile(
    r"\bfor (?:more than |over |longer than |at least )?(?P<n>\d{1,3}(?:\.5)?|an?|one|two|"
    r"three|four|five|six|seven|eight|nine|ten|twelve|half an) (?P<unit>hours?|hrs?|minutes?|mins?)\b"
)
_FOR_ZH = re.compile(
    r"(?P<n>\d{1,3}|半|一|两|二|三|四|五|六|七|八|九|十|十二)个?(?P<unit>小时|钟头|分钟)"
)
_COUNT = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "half an": 0.5,
    "半": 0.5, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9, "十": 10, "十二": 12,
}  # fmt: skip
_BELOW = re.compile(
    r"under|below|lower|less|drop|dip|falls? below|cold|cool|chilly|low|低于|小于|不到|低过"
)


def _lower(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def _sensor(low: str, room: str | None) -> str | None:
    if re.search(r"blood pressure|\bbp\b|血压", low):
        return "bp"
    if re.search(r"heart ?rate|pulse|heart ?beat|心率|心跳|脉搏", low):
        return "heart_rate"
    if re.search(r"oxygen|spo2|saturation|\bsats\b|血氧", low):
        return "spo2"
    if re.search(r"colder|warmer|hotter|cooler|too (cold|hot|warm|chilly)|室温|房间温度", low) or (
        room and re.search(r"temperature|degrees|温度|度", low)
    ):
        return "room_temperature"
    if re.search(r"temperature|fever|体温|发烧", low):
        return "temperature"
    return None


def _limits(low: str, sensor: str, lang: str) -> dict[str, Any]:
    """ "over 150/95" → above sys=150, dia=95; "colder than 16" → below 16; {} when no
    number was said (the limit is never guessed)."""
    found = (_LIMIT_ZH if lang == "zh" else _LIMIT).search(low)
    if found is None:
        return {}
    side = "below" if _BELOW.search(found.group("dir")) else "above"
    first = float(found.group("a"))
    second = float(found.group("b")) if found.group("b") else None
    if sensor == "bp":
        limit = {"sys": first} | ({"dia": second} if second is not None else {})
    else:
        limit = {"value": first}
    return {side: {k: int(v) if v.is_integer() else v for k, v in limit.items()}}


def _by(text: str, now: datetime, lang: str) -> time | None:
    """The time of day a missing-by rule is due: a bare hour is the morning's."""
    found = parse_when(text, now, lang)
    if found is None:
        return None
    slot = found[0]
    if isinstance(slot, Ambiguous):
        slot = slot.candidates[0]  # the morning reading, as the question would say first
    if isinstance(slot, When):
        return slot.at.time().replace(second=0, microsecond=0)
    return None


def _minutes(low: str, lang: str) -> float | None:
    """ "for 3 hours" → 180; None when no length of time was said."""
    found = (_FOR_ZH if lang == "zh" else _FOR).search(low)
    if found is None:
        return None
    n = found.group("n")
    count = float(n) if n[0].isdigit() else _COUNT[n]
    return count * (1 if found.group("unit").startswith(("min", "分")) else 60)


def _who(low: str, lang: str) -> str | None:
    if lang == "zh":
        found = re.search(FAMILY_ZH, low)
        return found.group(0) if found else None
    for m in _WHO.finditer(low):
        name = m.group("who") or m.group("owner") or m.group("kin")
        if name and name not in _NOT_A_PERSON:
            return name
    return None


def _room(low: str, lang: str) -> str | None:
    if lang == "zh":
        return next((en for zh, en in ROOMS_ZH.items() if zh in low), None)
    found = _ROOM.search(low)
    return (found.group(1) or found.group(2)) if found else None


def care_rule_slots(text: str, now: datetime, lang: str) -> dict[str, Any]:
    """who, kind (missing/inactivity/threshold/event), sensor, by, minutes, room,
    above/below — what was said."""
    low = _lower(text)
    slots: dict[str, Any] = {}
    if (who := _who(low, lang)) is not None:
        slots["who"] = who
    room = _room(low, lang)
    if re.search(_PANIC, low) or re.search(r"按.{0,4}(紧急|报警|求救|呼叫)?(按钮|按键|铃)", low):
        slots.update(kind="event", sensor="panic")
    elif re.search(_FALL, low) or re.search(r"摔倒|跌倒|摔了", low):
        slots.update(kind="event", sensor="fall")
    elif re.search(_HELP, low) or "求救" in low:
        slots.update(kind="event", sensor="emergency")
    elif re.search(_MISSING, low) or re.search(r"还没|没有?(起床|动|活动|起来|进|去)", low):
        bp = re.search(r"blood pressure|\bbp\b|血压", low)
        if not bp and (minutes := _minutes(low, lang)) is not None:
            slots.update(kind="inactivity", minutes=minutes)  # still for so long
        else:
            slots.update(kind="missing", sensor="bp" if bp else "motion")
            if (by := _by(text, now, lang)) is not None:
                slots["by"] = by
    elif (sensor := _sensor(low, room)) is not None:
        slots.update(kind="threshold", sensor=sensor, **_limits(low, sensor, lang))
    if room is not None and slots.get("sensor") in ("motion", "room_temperature"):
        slots["room"] = room
    return slots
