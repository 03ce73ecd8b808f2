"""Slots, parsed in code for each intent (docs/understanding.md): times and durations
(fayd.agent.clock.times), gestures, volume and brightness, facts to remember, quiet
hours. A slot the sentence leaves ambiguous becomes a :class:`Pending` question whose answer,
in the user's next turn, completes it."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any

import cn2an

from fayd.agent.care.rule_words import care_rule_slots
from fayd.agent.clock.pending import Pending
from fayd.agent.clock.times import (
    Ambiguous,
    Rule,
    When,
    parse_duration,
    parse_when,
    time_spans,
)
from fayd.agent.language.phrases import FAMILY_ZH
from fayd.agent.reminders import everyday
from fayd.agent.skills.devices import GESTURES
from fayd.agent.skills.registry import ME

# 招个手, 点个头, 鞠一躬, 摇个头: a measure word may stand between verb and object.
_ZH_GESTURES = [
    ("wave", r"(挥|招).{0,2}手"),
    ("nod", r"点.{0,2}头"),
    ("shake_head", r"摇.{0,2}头"),
    ("bow", r"鞠.{0,2}躬"),
    ("dance", r"跳.{0,2}舞"),
    ("look", r"(看|瞧).{0,2}我|转过来"),
]
HOLIDAYS = {
    "spring_festival": ("chinese new year", "spring festival", "lunar new year", "春节", "过年"),
    "mid_autumn": ("mid autumn", "mid-autumn", "moon festival", "中秋"),
    "christmas": ("christmas day", "christmas", "xmas", "圣诞"),
    "new_year": ("new year", "new year's", "元旦"),
    "easter": ("easter", "复活节"),
}
# Days with a fixed date, given as the date (month, day).
FIXED_DAYS = {
    "christmas eve": (12, 24),
    "boxing day": (12, 26),
    "new year's eve": (12, 31),
    "valentine's day": (2, 14),
    "valentine's": (2, 14),
    "halloween": (10, 31),
    "bonfire night": (11, 5),
    "st patrick's day": (3, 17),
    "burns night": (1, 25),
    "australia day": (1, 26),
    "anzac day": (4, 25),
    "independence day": (7, 4),
    "fourth of july": (7, 4),
    "st george's day": (4, 23),
    "remembrance day": (11, 11),
    "canada day": (7, 1),
    "平安夜": (12, 24),
    "情人节": (2, 14),
    "国庆": (10, 1),
    "劳动节": (5, 1),
    "儿童节": (6, 1),
    "妇女节": (3, 8),
    "教师节": (9, 10),
}
# Complaints come first: "it's too dim" wants it brighter, "you're too quiet" louder.
UP = re.compile(
    r"\b(louder|speak up|can't hear|cannot hear|can't see|barely (hear|read|see)|"
    r"(too|so|ever so|very|a bit|rather) (quiet|soft|dim|dark|low)|brighter|more light|"
    r"turn (it |yourself |the \w+ )?up|light (the \w+ |it )?up|up more|crank|pump|raise|"
    r"increase|up a bit|volume up)\b|"
    r"(大声|大一?点|大点|太小|听不见|听不清|调高|亮一?点|太暗|调亮)|\b(brighten|lighten)\b"
)
DOWN = re.compile(
    r"\b(quieter|softer|(too|so|ever so|very|a bit|rather) (loud|bright|noisy)|dazzling|"
    r"glaring|not so loud|dimmer|darker|turn (it |yourself |the \w+ )?down|lower|reduce|"
    r"decrease|volume down|dim (the|your|it))\b|"
    r"(小声|小一?点|小点|太吵|太响|调低|暗一?点|太亮|刺眼|调暗|弄暗)"
)
TOPICS = {
    "weather": (
        "weather",
        "rain",
        "sunny",
        "umbrella",
        "temperature",
        "forecast",
        "snow",
        "cold",
        "hot out",
        "warm out",
        "coat",
        "brolly",
        "frost",
        "icy",
        "windy",
        "天气",
        "下雨",
        "多少度",
        "气温",
        "冷不冷",
        "热不热",
        "降温",
        "下雪",
        "刮风",
        "穿",
    ),
    "news": ("news", "headlines", "新闻"),
    "sport": ("football", "match", "cricket", "score", "game", "比赛"),
    "tv": ("telly", "tv", "television", "电视"),
    "stocks": ("stock", "shares", "market", "股票"),
}
_NUMBER = re.compile(r"(?<![\d.:])(\d{1,3})(?![\d:.]\d)")
_ONES = "zero one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_NUMBER = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(_TENS)})(?:[\s-](?P<ones>{'|'.join(_ONES[1:])}))?"
    rf"|(?P<teen>{'|'.join(_TEENS)})|(?P<one>{'|'.join(_ONES)})|(?P<hundred>a hundred|one hundred))\b"
)
_FULL = re.compile(r"\b(full|max|maximum|all the way( up)?|as (loud|bright) as)\b|最大|最亮|开满")
_HALF = re.compile(r"\b(half|halfway)\b|一半")
_LEAST = re.compile(r"\b(minimum|lowest)\b|最小|最低")


def pending_for(intent: str, slots: dict[str, Any], lang: str, now: float) -> Pending | None:
    """The question to ask when a slot came out ambiguous, else None."""
    for key, value in slots.items():
        if isinstance(value, Ambiguous):
            return Pending(intent, slots, key, value, lang, now)
    return None


def extract_slots(intent: str, text: str, now: datetime, lang: str) -> dict[str, Any]:
    extract = _EXTRACTORS.get(intent)
    return extract(text, now, lang) if extract else {}


def _lower(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def _number(text: str, lang: str) -> int | None:
    """A level said as digits, words ("eighty"), Chinese numerals (三十) or "full"/"half"."""
    if lang == "zh":
        try:
            text = cn2an.transform(text, "cn2an")
        except (ValueError, KeyError, IndexError):
            pass
    if found := _NUMBER.search(text):
        return int(found.group(1))
    if found := _WORD_NUMBER.search(text):
        if found.group("hundred"):
            return 100
        if found.group("tens"):
            ones = _ONES.index(found.group("ones")) if found.group("ones") else 0
            return 20 + 10 * _TENS.index(found.group("tens")) + ones
        if found.group("teen"):
            return 10 + _TEENS.index(found.group("teen"))
        return _ONES.index(found.group("one"))
    if _FULL.search(text):
        return 100
    if _HALF.search(text):
        return 50
    if _LEAST.search(text):
        return 0
    return None


def _gesture(text: str, now: datetime, lang: str) -> dict[str, Any]:
    low = _lower(text)
    if lang == "zh":
        for name, pattern in _ZH_GESTURES:
            if re.search(pattern, low):
                return {"gesture": name}
    for name, (_, en, zh) in GESTURES.items():
        words = zh if lang == "zh" else en
        if any(re.search(rf"\b{re.escape(w)}\b", low) if lang != "zh" else w in low for w in words):
            return {"gesture": name}
    return {}


# A level is said as one: "to 40", "volume 70", "at eighty", "40 percent", "调到三十", "一半".
_LEVEL_EN = re.compile(
    r"\b(to|at|volume|brightness|level|about|around|on)\s+(?P<n>[\w-]+( [\w-]+)?)"
    r"|(?P<m>\d{1,3}|[a-z-]+)\s*(%|percent|per cent)"
)
_LEVEL_ZH = re.compile(
    r"(调到|开到|设为|设成|调成|放到|到)(?P<n>[\d零一二两三四五六七八九十百半]+)|一半|最大|最小"
)


def _level(text: str, lang: str) -> int | None:
    if _FULL.search(text):
        return 100
    if lang == "zh":
        if m := _LEVEL_ZH.search(text):
            said = m.group("n") or m.group(0)
            return 50 if "半" in said else _number(said, lang)
        return None
    if m := _LEVEL_EN.search(text):
        return _number(m.group("n") or m.group("m"), lang)
    return None


def _level_or_change(text: str, now: datetime, lang: str, kind: str) -> dict[str, Any]:
    low = _lower(text)
    if kind == "volume":
        if re.search(
            r"\bunmute\b|off mute|sound (back )?on|turn the sound (back )?on|取消静音|声音打开|把声音打开",
            low,
        ):
            return {"mute": False}
        if re.search(r"\bmute\b|sound off|静音|声音关(了|掉)|把声音关", low):
            return {"mute": True}
    level = _level(low, lang)
    if level is not None and 0 <= level <= 100:
        return {"level": level}
    if DOWN.search(low):
        return {"change": "down"}
    if UP.search(low):
        return {"change": "up"}
    return {}


def _volume(text: str, now: datetime, lang: str) -> dict[str, Any]:
    return _level_or_change(text, now, lang, "volume")


def _brightness(text: str, now: datetime, lang: str) -> dict[str, Any]:
    return _level_or_change(text, now, lang, "brightness")


def _sleep(text: str, now: datetime, lang: str) -> dict[str, Any]:
    if re.search(r"\b(until|till|til|before)\b|到|直到|以前|之前", _lower(text)):
        found = parse_when(text, now, lang)
        if found is not None:
            return {"until": found[0]}
    duration = parse_duration(text, lang)
    return {"duration_s": duration.seconds} if duration else {}


def _thanksgiving(year: int) -> date:
    """The fourth Thursday of November (the United States')."""
    first = date(year, 11, 1)
    return date(year, 11, 1 + (3 - first.weekday()) % 7 + 21)


def _until(text: str, now: datetime, lang: str) -> dict[str, Any]:
    low = _lower(text)
    if "thanksgiving" in low:
        day = _thanksgiving(now.year)
        return {"date": day if day >= now.date() else _thanksgiving(now.year + 1)}
    for name, (month, day) in FIXED_DAYS.items():
        if name in low:
            this_year = date(now.year, month, day)
            return {
                "date": this_year if this_year >= now.date() else date(now.year + 1, month, day)
            }
    for holiday, words in HOLIDAYS.items():
        if any(w in low for w in words):
            return {"holiday": holiday}
    found = parse_when(text, now, lang)
    if found is not None and isinstance(found[0], When):
        return {"date": found[0].at.date()}
    return {}


# "remind me to …", "can you remind me …", "don't let me forget to …", "提醒我…"
_REMIND_EN = re.compile(
    r"^.*?\b(remind me( to| about| that)?|don't let me forget( to| about)?|"
    r"set (a|up a) reminder( for| to)?|tell me( at .*?)? to|reminder (for|to|about))\s*",
    re.I,
)
#: "remind me about the dentist": said back "about the dentist", not "to the dentist".
_ABOUT = re.compile(r"\bremind (me|us) about\b|\breminder (for|about)\b(?! (to|\d))", re.I)
_FILLER = re.compile(
    r"^(please|can you|could you|would you|to|about|that|and|then)\b\s*|"
    r"\s*\b(please|thanks|thank you|dear|for me|at|on|in|by|every|tomorrow|today|tonight)$",
    re.I,
)


def _task(text: str, lang: str) -> str:
    """The task of a reminder, in the user's words, without the time or "remind me to"."""
    for start, end in sorted(time_spans(text, lang), reverse=True):  # every piece of the time
        text = (text[:start] + " " + text[end:]).strip()
    text = re.sub(r"\s+", " ", text)
    if lang == "zh":
        return everyday.zh_task(text)
    text = _REMIND_EN.sub("", text.strip(" .,!?")) if _REMIND_EN.search(text) else text
    return _tidy(text)


def _tidy(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _FILLER.sub("", text.strip(" .,!?")).strip()
    return text


#: "remind Mum to drink some water at three", 提醒妈妈三点喝水: a reminder for someone else.
_FOR_EN = re.compile(
    r"\bremind (?:my |our )?(?!(?:me|you|us|him|her|them|myself|everyone)\b)([a-z]+)"
    r"(?= (?:to|about|that)\b)",
    re.I,
)
_FOR_ZH = re.compile(rf"提醒{FAMILY_ZH}")


def _first_person(m: re.Match[str]) -> str:
    return "I " + {"has": "have", "is": "am", "were": "was"}.get(m[2].lower(), m[2])


def _for_someone(text: str, lang: str) -> tuple[str, str] | None:
    """Whom a reminder is for when it is not the speaker, and the request as they would
    have said it themselves ("remind me to take my tablets" for "remind Mum to take her
    tablets"), or None."""
    if lang == "zh":
        found = _FOR_ZH.search(text)
        if found is None:
            return None
        return found[1], text[: found.start()] + "提醒我" + text[found.end() :]
    found = _FOR_EN.search(text)
    if found is None:
        return None
    rest = re.sub(r"\b(her|his|their)\b", "my", text[found.end() :], flags=re.I)
    rest = re.sub(r"\b(she|he|they) (has|is|was|were)\b", _first_person, rest, flags=re.I)
    rest = re.sub(r"\b(she|he|they)\b", "I", rest, flags=re.I)
    return found[1].lower(), text[: found.start()] + "remind me" + rest


def _reminder(text: str, now: datetime, lang: str) -> dict[str, Any]:
    someone = _for_someone(text, lang)
    if someone is not None:
        slots = _reminder(someone[1], now, lang)
        return slots | {"for": someone[0]}
    found = parse_when(text, now, lang)
    # Everyday words ("give us a nudge about my tablets", "so I don't burn the cookies")
    # keep how the task is said back: "about your tablets", "not to burn the cookies".
    said = everyday.task(text, lang)
    what, how = (_tidy(said[0]), said[1]) if said else (_task(text, lang), "")
    if not how and _ABOUT.search(text):
        how = "about"
    slots: dict[str, Any] = {"what": what, "how": how} if how else {"what": what}
    if found is not None:
        key = "recurrence" if isinstance(found[0], Rule) else "when"
        slots[key] = found[0]
    return slots


_NAMED_TIMER = re.compile(
    r"\b(?!(?:a|an|the|my|set|start|minute|minutes|hour|second|new|another|that|this|kitchen)\b)"
    r"([a-z]{3,12}) timer\b"
)


def _timer(text: str, now: datetime, lang: str) -> dict[str, Any]:
    duration = parse_duration(text, lang)
    slots: dict[str, Any] = {"duration_s": duration.seconds} if duration else {}
    named = re.search(r"\bfor (the|my) ([a-z ]{2,20}?)(,|$| for | timer)", _lower(text))
    if named and not re.search(r"\d|minute|hour|second", named.group(2)):
        slots["name"] = named.group(2).strip()
    elif name := everyday.timer_name(text, lang):  # "… so I don't burn the cookies"
        slots["name"] = name
    elif found := _NAMED_TIMER.search(_lower(text)):  # "set an oven timer for 10 minutes"
        slots["name"] = found.group(1)
    return slots


# my X's name is Y / my X is called Y / my X is Y / 我(的)X叫Y / 我X的生日是Y; the person's
# own name is the subject "me" ("my name is Margaret", "我叫小红").
#: How people say their own name (also the cue phrases of fayd.agent.understand.cues).
INTRODUCTION = (
    r"^(?:(?:hello|hi|well|oh|so|and)[ ,]+)*(?:my name is|my name's|i'm called|i am called|"
    r"you can call me|everyone calls me|people call me) "
)
INTRODUCTION_ZH = r"^(?:你好[，,]?)?(?:我叫|我的名字(?:是|叫))(\w{1,10})$"
_INTRODUCED = {
    "en": re.compile(INTRODUCTION + r"([A-Za-z][\w'-]*(?: [A-Z][\w'-]*){0,2})", re.I),
    "zh": re.compile(INTRODUCTION_ZH),
}
_FACTS_EN = [
    (re.compile(r"\bmy ([a-z' -]+?)'s name is ([\w' -]+)", re.I), "name"),
    (re.compile(r"\bmy ([a-z' -]+?) is called ([\w' -]+)", re.I), "name"),
    (
        re.compile(
            r"\bmy ([a-z' ]+?)'s (birthday|address|phone number) is (on )?([\w' ,-]+)", re.I
        ),
        None,
    ),
    (re.compile(r"\bmy ([a-z' ]+?) (lives in|lives at) ([\w' ,-]+)", re.I), "lives in"),
]
_FACTS_ZH = [
    (re.compile(r"我(的)?(\w{1,6}?)(叫|名字是)(\w{1,10})"), "name"),
    (re.compile(r"我(的)?(\w{1,6}?)的生日是(\w{1,12})"), "birthday"),
]


def _fact(text: str, lang: str) -> dict[str, str] | None:
    clean = text.strip(" .!?。！？")
    if m := _INTRODUCED[lang].search(clean):  # a name heard in lower case gets its capital
        name = m.group(1).strip()
        return {
            "subject": ME,
            "predicate": "name",
            "object": name.title() if name.islower() else name,
        }
    if lang == "zh":
        for pattern, predicate in _FACTS_ZH:
            if m := pattern.search(clean):
                groups = [g for g in m.groups() if g]
                subject, obj = groups[-3] if predicate == "name" else groups[-2], groups[-1]
                if subject in ("", "的"):
                    continue
                return {"subject": subject, "predicate": predicate, "object": obj}
        return None
    for pattern, predicate in _FACTS_EN:
        if m := pattern.search(clean):
            if predicate is None:  # the predicate is in the sentence
                return {
                    "subject": m.group(1),
                    "predicate": m.group(2).lower(),
                    "object": m.group(4),
                }
            obj = m.groups()[-1]
            return {"subject": m.group(1).strip(), "predicate": predicate, "object": obj.strip()}
    return None


_REMEMBER = re.compile(
    r"^.*?\b(remember( this)?|don't forget|do not forget|make a note|note|keep in mind|"
    r"write down|i want you to remember)( that|,|:)?\s*",
    re.I,
)


def _remember(text: str, now: datetime, lang: str) -> dict[str, Any]:
    if lang == "zh":
        content = re.sub(r"^(请|你要|帮我)?(记住|记一下|记得|记下)(：|,|，)?", "", text.strip())
    else:
        content = _REMEMBER.sub("", text.strip(), count=1)
    content = content.strip(" .!?。！？") or text.strip()
    slots: dict[str, Any] = {"content": content}
    if (fact := _fact(content, lang)) is not None:
        slots["fact"] = fact
    return slots


def _recall(text: str, now: datetime, lang: str) -> dict[str, Any]:
    return {"query": text.strip()}


def _quiet(text: str, now: datetime, lang: str) -> dict[str, Any]:
    """Quiet hours: "after ten at night", "before eight in the morning", "from X to Y",
    "between X and Y", X以后, X以前, X到Y. A bound not said is the default (22:00-07:00)."""
    low = _lower(text)
    start = end = None
    pair = re.search(r"\b(from|between)\b(?P<a>.+?)\b(to|and|until|till)\b(?P<b>.+)", low)
    if lang == "zh" and not pair:
        pair = re.search(r"(?P<a>.+?)(到|至)(?P<b>.+)", low)
    if pair:
        start = _time_in(pair.group("a"), now, lang, night=True)
        end = _time_in(pair.group("b"), now, lang, night=False)
    else:
        after = re.search(r"\b(after|from)\b(?P<x>.+)|(?P<y>.+?)(以后|之后|后)", low)
        before = re.search(r"\b(before|until|till)\b(?P<x>.+)|(?P<y>.+?)(以前|之前)", low)
        if after:
            start = _time_in(after.group("x") or after.group("y"), now, lang, night=True)
        if before:
            end = _time_in(before.group("x") or before.group("y"), now, lang, night=False)
    if start is None and end is None:
        return {}
    return {"start": start or time(22, 0), "end": end or time(7, 0)}


def _time_in(part: str, now: datetime, lang: str, night: bool) -> time | None:
    found = parse_when(part, now, lang)
    return _clock(found[0], night) if found is not None else None


def _clock(slot: Any, night: bool) -> time:
    """The time of day of a parsed slot; for an am/pm question, the evening reading for the
    start of the night and the morning one for its end."""
    if isinstance(slot, Ambiguous):
        candidates = sorted((c.at.time() for c in slot.candidates), key=lambda t: t.hour)
        return candidates[-1] if night else candidates[0]
    if isinstance(slot, When):
        return slot.at.time().replace(second=0, microsecond=0)
    return time(22, 0) if night else time(7, 0)


_ASKED_ABOUT = re.compile(
    r"(?:how(?:'s| is| was| has| did)|has|did|have)( my| our)? (\w+?)(?:'s)?\b(?! i\b)"
)
_ASKED_ABOUT_ZH = re.compile(rf"{FAMILY_ZH}(今天|昨天|吃药|药)")


def _day_of(text: str, now: datetime, lang: str) -> dict[str, Any]:
    """ "How was Mum today?" → who "mum", day today; "yesterday"/昨天 → the day before."""
    low = _lower(text)
    found = _ASKED_ABOUT_ZH.search(low) if lang == "zh" else _ASKED_ABOUT.search(low)
    if found is None:
        return {}
    who = found.group(1) if lang == "zh" else found.group(2)
    yesterday = "yesterday" in low or "昨天" in low
    return {"who": who, "day": (now.date() - timedelta(days=int(yesterday))).isoformat()}


def _topic(text: str, now: datetime, lang: str) -> dict[str, Any]:
    low = _lower(text)
    for topic, words in TOPICS.items():
        if any(w in low for w in words):
            return {"topic": topic}
    return {}


_SWITCHED = (  # "switch on the light", "turn the light off", "close the curtains"
    re.compile(r"\b(?:turn|switch|put|flick|shut) (?P<switch>on|off|up|down) (?P<thing>[a-z' ]+)"),
    re.compile(r"\b(?:turn|switch|put|flick) (?P<thing>[a-z' ]+?) (?P<switch>on|off|up|down)\b"),
    re.compile(r"\b(?P<switch>open|close|shut|draw) (?P<thing>(?:the |my )?(?:curtains|blinds))"),
)


def _appliance(text: str, now: datetime, lang: str) -> dict[str, Any]:
    """ "turn on the kitchen light" → thing "the kitchen light", switch "on"."""
    low = _lower(text).rstrip(" .!?")
    for pattern in _SWITCHED:
        if found := pattern.search(low):
            thing = re.sub(r"( please| for me| now| fay)+$", "", found["thing"].strip())
            return {"thing": thing, "switch": found["switch"]}
    return {}


def _cannot(text: str, now: datetime, lang: str) -> dict[str, Any]:
    low = _lower(text)
    music = re.search(
        r"\b(music|songs?|tunes?|radio|hymns?|records?)\b|音乐|歌|曲子|戏|京剧|评剧|越剧|相声|评书",
        low,
    )
    return {"what": "music" if music else "call"}


def _words(text: str, now: datetime, lang: str) -> dict[str, Any]:
    """What a cancel names: the words, whose content words pick the reminder."""
    return {"words": text.strip()}


def _snooze(text: str, now: datetime, lang: str) -> dict[str, Any]:
    duration = parse_duration(text, lang)
    return {"duration_s": duration.seconds} if duration else {}


def _list(text: str, now: datetime, lang: str) -> dict[str, Any]:
    said = _lower(text)
    return {
        "today": bool(re.search(r"\btoday\b|今天", said)),
        "tomorrow": bool(re.search(r"\btomorrow\b|明天", said)),
    }


_EXTRACTORS = {
    "reminder.cancel": _words,
    "timer.cancel": _words,
    "reminder.snooze": _snooze,
    "reminder.list": _list,
    "device.gesture": _gesture,
    "device.volume": _volume,
    "device.brightness": _brightness,
    "device.sleep": _sleep,
    "clock.until": _until,
    "memory.remember": _remember,
    "memory.recall": _recall,
    "preference.quiet": _quiet,
    "reminder.set": _reminder,
    "timer.set": _timer,
    "info.offline": _topic,
    "home.control": _appliance,
    "info.cannot": _cannot,
    "care.day": _day_of,
    "care.rule": care_rule_slots,
}
