"""Times, dates, durations and recurrences in what people say, English and Chinese, as ASR
writes them ("8", "eight", "10.30", "half past ten", "tomorrow at 8", "every weekday at 8",
"明天早上八点", "十点一刻", "十五分钟后"). Plain code, no model, no I/O.

Why hand-written: measured on 40 sentences of these forms (28 English, 12 Chinese, said at
Tue 2026-12-01 10:00; a bare "eight" counted right at either 08:00 or 20:00, and so was this
module's Ambiguous when its two candidates were those two):

    library                   English  Chinese  recurrences (of 7)  notes
    ctparse 0.3.6               22/28     0/12  0    no "in 15 minutes"/"in an hour" at all,
                                                     noon → 00:00; last release 2022
    dateparser 1.5.0            16/28     1/12  0    no "half past"/"quarter to", "eight" →
                                                     August 2027, "tomorrow at 8" → 10:00
    cn2an.transform+dateparser  16/28     2/12  0    transform makes 十点一刻 "10.1刻"
    timefhuman 0.1.5            13/28     0/12  0
    parsedatetime 2.6           12/28     0/12  0
    jionlp 1.5.31                1/28    10/12  0    三月五号 → last March, 八点四十五 → 08:45
                                                     only; 271 MB installed
    this module                 28/28    12/12  7

(The libraries give one datetime for "every weekday at 8", never a recurrence.) None of
them says whether am/pm was said or only guessed, whether a date was given or implied, or
why a time can't be (None, or some other date, for "25 o'clock" and "30th of February"),
so asking, refusing and recurrences would need code of our own around any of them. The
grammar is therefore ours: English number words from a small table here, Chinese numerals
through cn2an (times_zh.py), the calendar from datetime and zoneinfo. About 0.15 ms a
sentence.

Rules (what the tests hold):
- A time of day with no date is the next one ahead: today if still ahead, else tomorrow.
- Am or pm, when nothing marks it (no am/pm, no morning/evening/晚上/下午, not a 24-hour
  "20:00"/"08:00", not noon/midnight): 12 is noon; 1 to 5 are afternoon ("on Sunday at
  five" → 17:00: nobody sets a 3 a.m. reminder by saying "at three"); 6 to 11 have two
  readings. When both readings that are still ahead fall within the next 24 hours fayd asks
  (Ambiguous: "at eight" said at 06:00 or at 10:00, "today at 11" said at 10:00); otherwise
  it takes the earlier ("tomorrow at 8" → 08:00, "on Sunday at 8" → 08:00 Sunday, "today
  at 8" said at 10:00 → 20:00). A missed pill at the wrong half of the day costs more than
  one short question. Rules take 6 to 11 as morning.
- A weekday name is the next such day (today if the time is still ahead); "next Tuesday",
  下周二 is that day in the next calendar week (weeks start on Monday).
- A date without a year is the next one ahead; "on the 14th" is the next 14th.
- Only a period ("tonight", "this afternoon", 下午): morning 08:00, noon 12:00, afternoon
  15:00, evening 19:00, night 20:00, 凌晨 05:00; only a date: 09:00. Said when that hour
  has passed but the period has not, the next whole hour.
- Impossible: hour over 24, minute over 59, "13 pm", a date no calendar has, a one-off
  time already passed ("today at 8 am" at 10:00, yesterday).
- "in 15 minutes" is now + 15 minutes of elapsed time (across a DST change too); clock
  times are built with the zone of `now` (zoneinfo), so 08:00 on a DST day is 08:00 local.
- Pieces of one time said apart ("tomorrow … at eight") are joined; the span then reaches
  from the first to the last piece. time_spans() gives each piece's span.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from typing import Any

from fayd.agent.clock import times_zh as zh
from fayd.agent.language.phrases import WEEKDAYS
from fayd.reminders.rules import Rule  # a recurring time is the reminders' own rule

__all__ = [
    "Ambiguous",
    "Duration",
    "Impossible",
    "Rule",
    "Slot",
    "When",
    "answer_ambiguous",
    "parse_duration",
    "parse_when",
    "slot_json",
    "time_spans",
]


@dataclass(frozen=True)
class When:
    """A one-off moment."""

    at: datetime  # timezone-aware, in the zone of `now`


@dataclass(frozen=True)
class Duration:
    seconds: int


@dataclass(frozen=True)
class Ambiguous:
    question: str  # what to ask, in the sentence's language
    candidates: tuple[When, ...]  # morning reading first, as the question says them


@dataclass(frozen=True)
class Impossible:
    reason: str  # what to say, in the sentence's language


Slot = When | Rule | Duration | Ambiguous | Impossible

MAX_TEXT = 2000  # longer text is read only this far: a time is said early, not in chapter 3

# ---------------------------------------------------------------------------------------
# English pieces. Matched on _normalize()d text (lower case, one kind of apostrophe).

_ONES = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_VALUES = (
    {w: i + 1 for i, w in enumerate(_ONES)}
    | {w: i + 10 for i, w in enumerate(_TEENS.split())}
    | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
    | {"zero": 0, "oh": 0, "o": 0, "a": 1, "an": 1, "one": 1}
)
_ONE = "|".join(_ONES)
_TEEN = _TEENS.replace(" ", "|")
_NUM = rf"(?:\d{{1,6}}|(?:{'|'.join(_TENS)})(?:[\s-](?:{_ONE}))?|{_TEEN}|{_ONE}|zero)"
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORD_WORD = (
    rf"(?:(?:twenty|thirty)[\s-](?:{'|'.join(_ORDINALS[:9])})|{'|'.join(_ORDINALS)}|thirtieth)"
)
_ORD = rf"(?:\d{{1,2}}(?:st|nd|rd|th)|{_ORD_WORD})"
_MONTHS = "january february march april may june july august september october november december"
_MONTH_NUMBERS = {name[:3]: i + 1 for i, name in enumerate(_MONTHS.split())}
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WD = rf"(?:{'|'.join(WEEKDAYS)})"
_AMPM = r"(?:\s*(?P<ampm>[ap])\.?\s?m\b\.?|\s+o'?\s?clock)"
_CLOCK = (
    rf"(?:(?P<noon>noon|midday|lunchtime)|(?P<midnight>midnight)"
    rf"|(?P<rel>{_NUM}|(?:a\s)?quarter|half)(?:\sminutes?)?\s(?P<dir>past|after|to|before|till)\s(?P<rh>{_NUM})"
    rf"|half\s(?P<half>{_NUM})|(?P<h>\d{{1,2}})[:.](?P<m>\d{{2}})|(?P<hhmm>\d{{3,4}})"
    rf"|(?P<wh>{_NUM})(?:[\s-](?P<wm>(?:oh|o)\s(?:{_ONE})|{_NUM}))?){_AMPM}?"
)
_CLOCK_RE = re.compile(_CLOCK + r"(?![a-z0-9])")
_UNIT = r"(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?)"
_TERM = (
    rf"(?:(?P<q>{_NUM}|an?|a\scouple\sof|\d+\.\d+)(?P<and_half>\sand\sa\shalf)?\s?(?P<u>{_UNIT})"
    rf"(?P<half_after>\sand\sa\shalf)?|half\san?\s(?P<hu>{_UNIT})|(?:a\s)?quarter\s(?:of\san\s)?hour)"
)
_TERM_RE = re.compile(_TERM)


_DURATION = rf"{zh.plain(_TERM)}(?:(?:\s?,\s?|\sand\s|\s){zh.plain(_TERM)})*"
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1, "d": 86400, "w": 604800}


def _number(text: str) -> int:
    if text.isdigit():
        return int(text)
    return sum(_VALUES[word] for word in re.split(r"[\s-]+", text) if word in _VALUES)


def _duration_seconds(text: str) -> int | None:
    total = 0.0
    for m in _TERM_RE.finditer(text):
        if m["q"]:
            q = m["q"]
            count = float(q) if "." in q else 2 if "couple" in q else _number(q)
            count += 0.5 if m["and_half"] or m["half_after"] else 0
            total += count * _UNIT_SECONDS[m["u"][0]]
        elif m["hu"]:
            total += _UNIT_SECONDS[m["hu"][0]] / 2
        else:
            total += 900  # a quarter of an hour
    return round(total) or None


def _clock(m: re.Match) -> dict | None:
    """{"h", "m", "ampm", "marked"} from a _CLOCK_RE match; None when it is no time."""
    ampm = m["ampm"]
    if m["noon"]:
        return {"h": 12, "m": 0, "marked": True}
    if m["midnight"]:
        return {"h": 0, "m": 0, "marked": True, "midnight": True}
    if m["rel"]:
        rel = m["rel"]
        minutes = 15 if "quarter" in rel else 30 if rel == "half" else _number(rel)
        if minutes > 59 or (rel == "half" and m["dir"] not in ("past", "after")):
            return None
        h = _number(m["rh"])
        if m["dir"] in ("to", "before", "till"):
            h, minutes = (h - 1) % 24 if h else 23, 60 - minutes
        return {"h": h, "m": minutes, "ampm": ampm, "marked": False}
    if m["half"]:
        return {"h": _number(m["half"]), "m": 30, "ampm": ampm, "marked": False}
    if m["hhmm"]:
        digits = m["hhmm"]
        h, minutes = int(digits[:-2]), int(digits[-2:])
        if h > 24 or minutes > 59:
            return None
        return {"h": h, "m": minutes, "ampm": ampm, "marked": digits[0] == "0" or h >= 13}
    if m["h"]:
        h = int(m["h"])
        return {"h": h, "m": int(m["m"]), "ampm": ampm, "marked": m["h"][0] == "0" or h >= 13}
    if len(m["wh"]) > 2 and m["wh"].isdigit():
        return None
    h = _number(m["wh"])
    minutes = _number(m["wm"]) if m["wm"] else 0
    return {"h": h, "m": minutes, "ampm": ampm, "marked": h >= 13 or m["wh"] == "00"}


def _clock_piece(m: re.Match) -> dict | None:
    found = _clock(m)
    return {"clock": found} if found else None


def _weak_clock(m: re.Match) -> bool:
    """A bare number ("8", "eight thirty", "1030") is a time only after "at", "by" … or
    beside another piece: "take 2 pills" has no time in it."""
    return not (
        m["ampm"] or m["noon"] or m["midnight"] or m["rel"] or m["h"] or "clock" in m.group()
    )


def _every(m: re.Match) -> dict | None:
    text = m.group()
    if hours := re.fullmatch(rf"(?:every|each)\s(?:(?P<n>{_NUM})\s)?(?P<u>hours?|minutes?)", text):
        n = _number(hours["n"]) if hours["n"] else 1
        return {"every": (hours["u"].rstrip("s") + "s", (), n)} if n else None
    if re.search(r"week\s?days?|working day|monday\s(?:to|through|till|until|-)\sfriday", text):
        return {"every": ("weekday", (), None)}
    if "weekend" in text:
        return {"every": ("week", ("sat", "sun"), None)}
    if days := re.findall(_WD, text):
        return {"every": ("week", tuple(d[:3] for d in days), None)}
    if text.endswith("week"):
        return {"every": ("week", (), None)}
    fields: dict = {"every": ("day", (), None)}
    if period := re.search(r"morning|afternoon|evening|night", text):
        fields["period"] = period.group()
    return fields


def _day(m: re.Match) -> dict:
    text = m.group()
    if text in ("yesterday", "last night"):
        return {"day": ("passed",)}
    if text.startswith("this "):
        return {"day": ("offset", 0), "period": text[5:]}
    if text.startswith(("tonight", "tonite")):
        return {"day": ("offset", 0), "period": "night"}
    return {"day": ("offset", 2 if "after" in text else 1 if text.startswith("tom") else 0)}


def _weekday(m: re.Match) -> dict:
    if m["plural"]:
        return {"every": ("week", tuple(d[:3] for d in re.findall(_WD, m.group())), None)}
    return {"day": ("weekday", WEEKDAYS.index(m["wd"]), m["next"] == "next")}


def _day_number(text: str) -> int:
    if text[0].isdigit():
        return int(re.match(r"\d+", text).group())
    words = re.split(r"[\s-]", text)
    tens = {"twenty": 20, "thirty": 30, "twentieth": 20, "thirtieth": 30}
    return sum(tens.get(w, _ORDINALS.index(w) + 1 if w in _ORDINALS else 0) for w in words)


def _date(m: re.Match) -> dict:
    month_text = m["mo1"] or m["mo2"]
    month = _MONTH_NUMBERS[month_text[:3]] if month_text else None
    year = int(m["y1"] or m["y2"]) if (m["y1"] or m["y2"]) else None
    return {"day": ("date", year, month, _day_number(m["d1"] or m["d2"] or m["d3"]))}


def _range(m: re.Match) -> dict | None:
    start, end = _CLOCK_RE.fullmatch(m["a"]), _CLOCK_RE.fullmatch(m["b"])
    start, end = (_clock(start) if start else None), (_clock(end) if end else None)
    return {"range": (start, end)} if start and end else None


def _seconds_piece(key: str, *groups: str) -> Callable[[re.Match], dict | None]:
    def read(m: re.Match) -> dict | None:
        seconds = _duration_seconds(next(m[g] for g in groups if m[g]))
        return {key: seconds} if seconds else None

    return read


def _period(m: re.Match) -> dict:
    return {"period": m["p"] or "night"}


# Tried in this order at each word; the first that matches (and whose reader does not say
# None) makes a piece. The last column: a weak piece, or a function saying so.
_EN: list[tuple[re.Pattern, Callable[[re.Match], dict | None], Any]] = [
    (
        rf"(?:every|each)\s(?:{_NUM}\s)?(?:hours?|minutes?)|(?:every\s|on\s)?(?:week\s?days|working\sdays)"
        rf"|every\s(?:week\s?day|working\sday)|(?:from\s)?monday\s(?:to|through|till|until|-)\sfriday"
        rf"|every\sweekend|(?:every|each)\s{_WD}(?:(?:,\s|,?\sand\s|\s&\s|\s)(?:on\s)?{_WD}s?)*"
        r"|(?:every|each)\s(?:single\s)?(?:day|morning|afternoon|evening|night)|daily|nightly"
        r"|(?:every|each)\sweek",
        _every,
        False,
    ),
    (
        rf"(?:between|from)\s(?P<a>{zh.plain(_CLOCK)})\s(?:and|to|till|until|-)\s(?P<b>{zh.plain(_CLOCK)})",
        _range,
        False,
    ),
    (
        rf"(?:in|within|after)\s(?P<d>{_DURATION})(?:'?s?\stime)?|(?P<d2>{_DURATION})\s(?:from\snow|later)",
        _seconds_piece("delta", "d", "d2"),
        False,
    ),
    (
        rf"(?:the\s)?(?P<d1>\d{{1,2}}|{_ORD})\s(?:of\s)?(?P<mo1>{_MONTH})(?:,?\s(?P<y1>\d{{4}}))?"
        rf"|(?P<mo2>{_MONTH})\s(?:the\s)?(?P<d2>\d{{1,2}}|{_ORD})(?:,?\s(?P<y2>\d{{4}}))?"
        rf"|(?:on|by|for|until|till)\sthe\s(?P<d3>{_ORD})(?!\s(?:of\s)?{_MONTH})",
        _date,
        False,
    ),
    (
        r"(?:the\s)?day\safter\stomorrow|tomorrow|tmrw|today|tonight|tonite|yesterday|last\snight"
        r"|this\s(?:morning|afternoon|evening)",
        _day,
        False,
    ),
    (
        rf"(?:on\s)?(?:(?P<next>next|this|coming|this\scoming)\s)?(?P<wd>{_WD})(?P<plural>s"
        rf"(?:(?:,\s|,?\sand\s|\s&\s)(?:on\s)?{_WD}s?)*)?",
        _weekday,
        False,
    ),
    (rf"(?:for\s)?(?P<d>{_DURATION})", _seconds_piece("duration", "d"), False),
    (r"(?:in|during)\sthe\s(?P<p>morning|afternoon|evening|night)|at\snight", _period, False),
    (r"(?P<p>morning|afternoon|evening|night)", _period, True),
    (_CLOCK, _clock_piece, _weak_clock),
]
_EN_COMPILED = [(re.compile(rf"(?:{p})(?![a-z0-9])"), read, weak) for p, read, weak in _EN]
_EN_FILLER = re.compile(r"(?:[\s,]|\b(?:at|on|the|of|by|around|about)\b)*")
_EN_CUE = re.compile(r"\b(?:at|by|around|about|for|until|till|til|before|after|from)\s*$")
_EN_PREFIX = re.compile(r"\b(?:at|on|by|for|around|about|until|till)\s+$")
_WORD_START = re.compile(r"(?<![a-z0-9'])[a-z0-9]")

Piece = zh.Piece


def _scan_en(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    pos = 0
    while (start := _WORD_START.search(text, pos)) is not None:
        pos = start.start()
        for pattern, read, weak in _EN_COMPILED:
            m = pattern.match(text, pos)
            if m and (fields := read(m)) is not None:
                pieces.append((pos, m.end(), fields, weak(m) if callable(weak) else weak))
                pos = m.end()
                break
        else:
            pos += 1
    return pieces


# ---------------------------------------------------------------------------------------
# Joining pieces into one time


@dataclass(frozen=True)
class _Lang:
    scan: Callable[[str], list[Piece]]
    filler: re.Pattern  # what may stand between two pieces of one time
    cue: re.Pattern  # what makes a weak piece a time ("at" 8)
    prefix: re.Pattern  # what the span takes in before the time ("at", "for", 在)


_LANGS = {
    "en": _Lang(_scan_en, _EN_FILLER, _EN_CUE, _EN_PREFIX),
    "zh": _Lang(zh.scan, zh.FILLER, zh.CUE, zh.PREFIX),
}
_SENTENCE_END = re.compile(r"[?!;。？！；]|\.(?!\d)")
_APOSTROPHES = {"\u2019", "\u2018", "\u02bc", "`"}


def scan(text: str) -> tuple[str, list[Piece]]:
    """``text`` normalized (one character for one: spans are spans of ``text``) and the
    time pieces found in it, in its language; ValueError/OverflowError on numerals the
    scanner cannot read."""
    norm = _normalize(text)
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", norm) else "en"
    return norm, _LANGS[lang].scan(norm)


def _normalize(text: str) -> str:
    """NFKC (full-width → ASCII), lower case, one apostrophe: one character for one, so a
    span found here is a span of `text`."""
    out = []
    for ch in text[:MAX_TEXT]:
        new = "'" if ch in _APOSTROPHES else unicodedata.normalize("NFKC", ch).lower()
        out.append(new if len(new) == 1 else ch)
    return "".join(out)


def _fits(fields: dict, new: dict) -> bool:
    """Whether two pieces can be one time: "tomorrow" + "at 8" can, "at 8" + "at 9" can't."""
    if fields.keys() & new.keys():
        return False
    kinds = fields.keys() | new.keys()
    if "duration" in kinds and len(kinds) > 1:
        return False
    if "delta" in kinds and kinds - {"delta", "clock", "period"}:
        return False
    return not ("every" in kinds and "day" in kinds)


def _merge(pieces: list[Piece]) -> dict:
    fields: dict = {}
    for piece in pieces:
        fields |= piece[2]
    return fields


def _find(text: str, lang: str) -> tuple[dict, list[tuple[int, int]]] | None:
    """The fields of the first time in `text` and the spans of its pieces."""
    norm = _normalize(text)
    how = _LANGS[lang]
    groups: list[list[Piece]] = []
    for piece in how.scan(norm):
        last = groups[-1] if groups else None
        if (
            last
            and how.filler.fullmatch(norm, last[-1][1], piece[0])
            and _fits(_merge(last), piece[2])
        ):
            last.append(piece)
        else:
            groups.append([piece])
    kept = [g for g in groups if not all(p[3] for p in g) or _cued(norm, g, how)]
    if not kept:
        return None
    fields, spans = {}, []
    for group in kept:
        new = _merge(group)
        if spans and (
            not _fits(fields, new) or _SENTENCE_END.search(norm, spans[-1][1], group[0][0])
        ):
            break
        fields |= new
        start = group[0][0]
        if m := how.prefix.search(norm, 0, start):
            start = m.start()
        spans.append((start, group[-1][1]))
    return fields, spans


def _cued(norm: str, group: list[Piece], how: _Lang) -> bool:
    before, after = norm[: group[0][0]], norm[group[-1][1] :]
    return bool(how.cue.search(before)) or not re.search(r"\w", before + after)


# ---------------------------------------------------------------------------------------
# Working out the moment

_PERIODS = {  # period: (hour when only the period is said, hour the period ends)
    "early": (5, 6), "morning": (8, 12), "noon": (12, 14), "afternoon": (15, 18),
    "evening": (19, 23), "night": (20, 24),
}  # fmt: skip
_DATE_ONLY = (9, 21)
_DAY = timedelta(days=1)
Reading = tuple[int, int, int, int | None]  # hour, minute, days to add, period's end hour


class _Nope(Exception):
    """The time can't be: kind is a key of the messages, values fill them in."""

    def __init__(self, kind: str, **values: int | str) -> None:
        super().__init__(kind)
        self.kind, self.values = kind, values

    def say(self, lang: str) -> str:
        if lang == "zh":
            return zh.impossible(self.kind, **self.values)
        values = dict(self.values)
        if "month" in values:
            values["month"] = _MONTHS.split()[int(values["month"]) - 1].capitalize()
        if "when" in values:
            values["when"] = _EN_WHEN.get(str(values["when"]), str(values["when"]))
        return _EN_MESSAGES[self.kind].format(**values)


_EN_MESSAGES = {
    "passed": "That time has already passed.",
    "hour": "There is no {h} o'clock.",
    "minute": "There is no {h}:{m:02d}.",
    "ampm": "There is no {h} {when}.",
    "date": "There is no {day} {month}.",
    "date_year": "There is no {day} {month} in {year}.",
    "day_of_month": "No month has a day {day}.",
}
_EN_WHEN = {"early": "at night", "noon": "at noon", "night": "at night"}
_EN_WHEN |= {p: f"in the {p}" for p in ("morning", "afternoon", "evening")}


def _readings(clock: dict | None, period: str | None) -> list[Reading]:
    """The times of day a clock (and period) can mean: one, or two when am/pm is open."""
    if clock is None:
        hour, end = _PERIODS[period] if period else _DATE_ONLY
        return [(hour, 0, 0, end)]
    h, m, ampm = clock["h"], clock["m"], clock.get("ampm")
    period = clock.get("period") or period
    if m > 59:
        raise _Nope("minute", h=h, m=m)
    if h > 24 or (h == 24 and m):
        raise _Nope("hour", h=h)
    if h == 24 or clock.get("midnight"):
        return [(0, m, 1, None)]
    if ampm:
        if h == 0 or h > 12:
            raise _Nope("ampm", h=h, when=f"{ampm}m")
        return [(h % 12 + (12 if ampm == "p" else 0), m, 0, None)]
    if period and not (h >= 13 and period in ("afternoon", "evening", "night", "noon")):
        return [_with_period(h, m, period)]
    if clock["marked"] or h == 0 or h >= 12:
        return [(h, m, 0, None)]
    if h <= 5:
        return [(h + 12, m, 0, None)]
    return [(h, m, 0, None), (h + 12, m, 0, None)]


def _with_period(h: int, m: int, period: str) -> Reading:
    if h >= 13 or (h == 0 and period in ("morning", "afternoon", "noon")):
        raise _Nope("ampm", h=h, when=period)
    if period in ("morning", "early"):
        return (0 if h == 12 and period == "early" else h, m, 0, None)
    if period == "noon":
        return (h + 12 if 1 <= h <= 5 else h, m, 0, None)
    if period == "afternoon":
        return (h if h == 12 else h + 12, m, 0, None)
    if h in (0, 12) or (period == "night" and h <= 3):
        return (h % 12, m, 1, None)  # 晚上十二点, "tonight at 1": after midnight
    return (h + 12, m, 0, None)


def _utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo else at


def _after(now: datetime, seconds: int) -> datetime:
    """now + seconds of elapsed time: across a DST change the wall clock moves by more or less."""
    if now.tzinfo is None:
        return now + timedelta(seconds=seconds)
    return (now.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(now.tzinfo)


def _moment(day: tuple | None, reading: Reading, now: datetime) -> datetime:
    """The reading on the day said; a day that isn't fixed ("at 8", "on Sunday", "the 14th")
    moves on until the moment is ahead, a fixed one ("today", 2027-05-03) may have passed."""
    h, m, plus, period_end = reading
    today = now.date()

    def on(d: date, said: bool = True) -> datetime:
        """The reading on day d; a day said takes a reading past midnight to the next day,
        and when it is today, a period that has begun moves to the next whole hour."""
        at = datetime.combine(d + timedelta(days=plus if said else 0), dtime(h, m), now.tzinfo)
        if (
            said
            and period_end
            and d == today
            and _utc(at) <= _utc(now)
            and now.hour + 1 < period_end
        ):
            at = datetime.combine(
                today, dtime(now.hour + 1), now.tzinfo
            )  # "this afternoon" at 16:10
        return at

    def ahead(at: datetime) -> bool:
        return _utc(at) > _utc(now)

    if day is None:
        at = on(today, said=False)
        return at if ahead(at) else on(today + _DAY, said=False)
    if day[0] == "offset":
        return on(today + day[1] * _DAY)
    if day[0] == "weekday":
        _, weekday, next_week = day
        if next_week:
            return on(today + timedelta(days=7 - today.weekday() + weekday))
        d = today + timedelta(days=(weekday - today.weekday()) % 7)
        return at if ahead(at := on(d)) else on(d + 7 * _DAY)
    _, year, month, dom = day
    if not 1 <= dom <= 31 or (month is not None and not 1 <= month <= 12):
        raise _Nope("day_of_month", day=dom)
    if month is not None and dom > (29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31):
        raise _Nope("date", day=dom, month=month)
    if year is not None:
        try:
            return on(date(year, month, dom))
        except ValueError:
            raise _Nope("date_year", day=dom, month=month, year=year) from None
    y, mo = today.year, month or today.month
    for _ in range(2 if month else 13):
        try:
            if ahead(at := on(date(y, mo, dom))):
                return at
        except ValueError:
            pass  # 29 February in a common year, or the 31st in a short month
        y, mo = (y + 1, mo) if month else (y + mo // 12, mo % 12 + 1)
    raise _Nope("date_year", day=dom, month=month, year=y - 1) if month else _Nope("passed")


#: Hours no one is asked whether they meant: "at eleven" with both still to come is 11:00.
_NIGHT_HOURS = frozenset({23, 0, 1, 2, 3, 4, 5})


def _resolve(fields: dict, now: datetime, lang: str) -> Slot:
    if "every" in fields:
        return _recurrence(fields)
    if "duration" in fields:
        return Duration(fields["duration"])
    has_time = "clock" in fields or "period" in fields or "range" in fields
    if "delta" in fields:
        if not (has_time and fields["delta"] % 86400 == 0):
            return When(_after(now, fields["delta"]))
        fields = {**fields, "day": ("offset", fields["delta"] // 86400)}  # "in 2 days at 8"
    day = fields.get("day")
    if day == ("passed",):
        raise _Nope("passed")
    clock = fields.get("clock") or (fields["range"][0] if "range" in fields else None)
    readings = _readings(clock, fields.get("period"))
    moments = [_moment(day, reading, now) for reading in readings]
    ahead = [at for at in moments if _utc(at) > _utc(now)]
    if not ahead:
        raise _Nope("passed")
    soon = _utc(now) + timedelta(hours=24)
    awake = [at for at in ahead if at.hour not in _NIGHT_HOURS]
    if len(ahead) == 2 and awake == [min(ahead, key=_utc)]:  # "half eleven" at nine: not 23:30
        return When(awake[0])
    if len(ahead) == 2 and all(_utc(at) <= soon for at in ahead):
        h, m = readings[0][:2]
        question = (
            zh.question(h, m)
            if lang == "zh"
            else f"{_say_en(h, m)} in the morning or in the evening?"
        )
        return Ambiguous(question, tuple(When(at) for at in ahead))
    return When(min(ahead, key=_utc))


def _recurrence(fields: dict) -> Rule:
    every, days, hours = fields["every"]
    if every == "hours":
        between = None
        if "range" in fields:
            first, last = fields["range"]
            h, m, *_ = _readings(first, None)[0]
            start = dtime(h, m)
            ends = [dtime(h, m) for h, m, *_ in _readings(last, None)]
            between = (start, next((end for end in ends if end > start), ends[-1]))
        return Rule("hours", hours=hours, between=between)
    at = None
    if "clock" in fields or "period" in fields:
        h, m, *_ = _readings(fields.get("clock"), fields.get("period"))[0]
        at = dtime(h, m)
    return Rule(every, at=at, days=days)


_HOUR_WORDS = ["twelve", *_ONES, "ten", "eleven", "twelve"]


def _say_en(h: int, m: int) -> str:
    """8:00 → "Eight", 10:30 → "Half past ten", 8:45 → "Quarter to nine"."""
    word = _HOUR_WORDS[h % 12]
    if m == 0:
        return word.capitalize()
    if m in (15, 30):
        return f"{'Quarter' if m == 15 else 'Half'} past {word}"
    if m == 45:
        return f"Quarter to {_HOUR_WORDS[h % 12 + 1]}"
    return f"{h}:{m:02d}"


# ---------------------------------------------------------------------------------------
# The API


def _lang(lang: str) -> str:
    return "zh" if lang.lower().startswith("zh") else "en"


def parse_when(text: str, now: datetime, lang: str = "en") -> tuple[Slot, tuple[int, int]] | None:
    """The time expression in `text` and its (start, end) character span in `text` (so a
    caller can cut "take my pills" out of "remind me to take my pills at eight"), or None."""
    lang = _lang(lang)
    found = _find(text, lang)
    if found is None:
        return None
    fields, spans = found
    if fields.get("every", ("",))[0] == "minutes":
        return None  # "every 30 minutes": no such recurrence (yet), and no 30-minute timer
    try:
        slot = _resolve(fields, now, lang)
    except _Nope as nope:
        slot = Impossible(nope.say(lang))
    except OverflowError:  # "in 999999 weeks": past year 9999
        return None
    return slot, (spans[0][0], spans[-1][1])


def time_spans(text: str, lang: str = "en") -> list[tuple[int, int]]:
    """The spans of the pieces parse_when joined into one time, to cut each of them out of
    "remind me tomorrow to call Anna at three"."""
    found = _find(text, _lang(lang))
    return found[1] if found else []


def parse_duration(text: str, lang: str = "en") -> Duration | None:
    """ "15 minutes", "in an hour and a half", "十五分钟", "半个小时后" → Duration."""
    how = _LANGS[_lang(lang)]
    for _, _, fields, _ in how.scan(_normalize(text)):
        seconds = fields.get("duration") or fields.get("delta")
        if seconds:
            return Duration(seconds)
    return None


_EN_FIRST = re.compile(r"\b(?:first|1st|former|earlier one)\b")
_EN_SECOND = re.compile(r"\b(?:second|2nd|latter|later one|last one|other one)\b")
_EN_AM = re.compile(r"\b(?:morning|a\.?\s?m\b|breakfast|daytime|day)")
_EN_PM = re.compile(r"\b(?:evening|night|tonight|afternoon|p\.?\s?m\b|dinner|supper)")


def answer_ambiguous(
    pending: Ambiguous, answer: str, now: datetime, lang: str = "en"
) -> When | Ambiguous | None:
    """The user's reply to the question ("in the evening", "morning", "8 pm", "晚上", "the
    first one"): the candidate it picks, another time it names in full, the same question
    when it settles nothing ("eight"), or None when it is no answer."""
    lang = _lang(lang)
    text = _normalize(answer)
    if not pending.candidates or not text.strip():
        return None
    first, second, am, pm = (
        (zh.FIRST, zh.SECOND, zh.AM_WORDS, zh.PM_WORDS)
        if lang == "zh"
        else (_EN_FIRST, _EN_SECOND, _EN_AM, _EN_PM)
    )
    if first.search(text):
        return pending.candidates[0]
    if second.search(text):
        return pending.candidates[-1]
    found = _find(text, lang)
    if found and "clock" in found[0]:
        parsed = parse_when(text, now, lang)
        slot = parsed[0] if parsed else None
        if isinstance(slot, Ambiguous):
            return pending
        if isinstance(slot, When):
            same = [c for c in pending.candidates if c.at.time() == slot.at.time()]
            return same[0] if same else slot
        return None
    says_am, says_pm = bool(am.search(text)), bool(pm.search(text))
    if says_am != says_pm:
        wanted = [c for c in pending.candidates if (c.at.hour < 12) == says_am]
        return wanted[0] if wanted else None
    return None


def slot_json(slot: Slot) -> Any:
    """For the evaluation: When → "YYYY-MM-DDTHH:MM" (local), Duration → seconds,
    Rule → {"every", "at", "days", "hours", "between"} without empty keys, else None."""
    if isinstance(slot, When):
        return slot.at.strftime("%Y-%m-%dT%H:%M")
    if isinstance(slot, Duration):
        return slot.seconds
    if isinstance(slot, Rule):
        return slot.to_dict()
    return None
