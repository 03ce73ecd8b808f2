"""The Chinese half of times.py: finds the pieces of a time expression in a sentence
("明天" "早上" "八点", "每周一和周四", "十五分钟后"), says what each means in the fields the
English scanner uses, and has the Chinese words fayd says back. times.py joins the pieces
and works out the moment.

Numerals go through cn2an (十五 → 15, 两 → 2, 二〇二七 → 2027) one numeral at a time: its
whole-sentence transform() reads 十点一刻 as "10.1刻" and gives up on 八点四十五, so the
点/分/刻/半 structure around the numbers is ours."""

from __future__ import annotations

import re
from collections.abc import Callable

import cn2an

# A piece: (start, end, fields, weak). A weak piece ("一点", a lone "下午") is a time only
# beside another piece, after a cue (在, 到 …) or as the whole reply: "大声一点" is no time.
Piece = tuple[int, int, dict, bool]


def plain(pattern: str) -> str:
    """The pattern without its group names, to use it twice in one regex."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


_DIGIT = r"零〇一二两三四五六七八九十百千\d"
_N = rf"[{_DIGIT}]{{1,6}}"  # a numeral, Chinese or Arabic
_WD = r"[一二三四五六日天1-7]"
_WEEK = r"(?:周|星期|礼拜)"
_DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_PERIODS = {
    "凌晨": "early", "半夜": "early", "深夜": "night", "夜里": "night", "夜间": "night",
    "清晨": "morning", "早上": "morning", "早晨": "morning", "早": "morning", "上午": "morning",
    "中午": "noon", "正午": "noon", "下午": "afternoon", "傍晚": "evening", "晚上": "night",
    "晚": "night",
}  # fmt: skip
_PERIOD = (
    rf"(?:凌晨|清晨|早上|早晨|上午|中午|正午|下午|傍晚|晚上|夜里|夜间|深夜|半夜|[早晚](?={_N}))"
)
_CLOCK = (  # 20:30 | 差一刻九点 | 九点差五分 | 八点, 八点半, 十点一刻, 八点四十五(分)
    rf"(?P<hh>\d{{1,2}}):(?P<mm>\d{{2}})"
    rf"|差(?:(?P<q1>一刻)|(?P<b1>{_N})分钟?)(?P<h1>{_N})[点點]"
    rf"|(?P<h2>{_N})[点點]差(?:(?P<q2>一刻)|(?P<b2>{_N})分钟?)"
    rf"|(?P<h>{_N})[点點时]钟?整?(?:(?P<half>半)|(?P<q>[一三13])刻|零?(?P<m>{_N})(?![{_DIGIT}点點时])(?:分钟?)?)?"
    r"|(?P<midnight>午夜)"
)
_CLOCK_RE = re.compile(rf"(?:{_PERIOD})?(?:{_CLOCK})")
# One term of a duration: 十五分钟, 半个小时, 一个半小时, 两个半小时, 一刻钟, 三天.
_TERM = (
    rf"(?:(?P<n>{_N})个?(?P<h1>半)?|(?P<h2>半)个?)(?P<u>小时|钟头|分钟|分|秒钟|秒|天|星期|礼拜|周)"
    rf"(?P<h3>半)?|(?P<q>{_N})刻钟"
)
_TERM_RE = re.compile(_TERM)
_DURATION = rf"(?:{plain(_TERM)})+"
_UNIT_SECONDS = {
    "小时": 3600, "钟头": 3600, "分钟": 60, "分": 60, "秒钟": 1, "秒": 1, "天": 86400,
    "星期": 604800, "礼拜": 604800, "周": 604800,
}  # fmt: skip


def number(text: str) -> int | None:
    """十五 → 15, 两 → 2, 08 → 8; None for what is no whole number."""
    try:
        value = cn2an.cn2an(text, "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return int(value) if float(value).is_integer() else None


def spoken(value: int) -> str:
    """25 → 二十五, 2 → 两 (两点), for the words fayd says."""
    return "两" if value == 2 else cn2an.an2cn(value)


def duration_seconds(text: str) -> int | None:
    total = 0.0
    for m in _TERM_RE.finditer(text):
        count = number(m["q"] or m["n"]) if (m["q"] or m["n"]) else 0.5
        if count is None:
            return None
        if m["q"]:
            total += count * 900  # 刻钟
        else:
            total += (count + (0.5 if m["h1"] or m["h3"] else 0)) * _UNIT_SECONDS[m["u"]]
    return round(total) or None


def clock(text: str) -> dict | None:
    """One clock time ("八点四十五", "十点一刻", "差五分九点", "20:30", "下午三点") as
    {"h", "m", "marked", "period"}; None when it is no time."""
    m = _CLOCK_RE.fullmatch(text)
    if not m:
        return None
    lead = re.match(_PERIOD, text)
    found = {"period": _PERIODS[lead.group()] if lead else None, "marked": False}
    if m["midnight"]:
        return found | {"h": 0, "m": 0, "marked": True, "midnight": True}
    if m["hh"]:
        h = int(m["hh"])
        return found | {"h": h, "m": int(m["mm"]), "marked": m["hh"][0] == "0" or h >= 13}
    if m["h1"] or m["h2"]:
        before = 15 if (m["q1"] or m["q2"]) else number(m["b1"] or m["b2"])
        h = number(m["h1"] or m["h2"])
        if before is None or h is None or not 0 < before < 60:
            return None
        return found | {"h": (h - 1) % 24, "m": 60 - before}
    h = number(m["h"])
    minute = 30 if m["half"] else (15 if m["q"] in "一1" else 45) if m["q"] else 0
    if m["m"] is not None:
        minute = number(m["m"])
    if h is None or minute is None:
        return None
    return found | {"h": h, "m": minute, "marked": h == 0 or h >= 13}


def _weekday(char: str) -> int:
    return int(char) - 1 if char.isdigit() else 6 if char in "日天" else "一二三四五六".index(char)


def _every(m: re.Match) -> dict | None:
    text = m.group()
    if hours := re.fullmatch(rf"每隔?({_N})?个?(小时|钟头|分钟)", text):
        n = number(hours[1]) if hours[1] else 1
        return {"every": ("minutes" if hours[2] == "分钟" else "hours", (), n)} if n else None
    if re.search(rf"工作日|一(?:到|至){_WEEK}?五", text):
        return {"every": ("weekday", (), None)}
    if "周末" in text:
        return {"every": ("week", ("sat", "sun"), None)}
    if re.search(_WEEK, text):
        days = re.findall(_WD, re.sub(rf"^每个?{_WEEK}", "", text))
        return {"every": ("week", tuple(_DAY_NAMES[_weekday(d)] for d in days), None)}
    fields: dict = {"every": ("day", (), None)}
    if "晚" in text or "早" in text:
        fields["period"] = "night" if "晚" in text else "morning"
    return fields


def _range(m: re.Match) -> dict | None:
    start, end = clock(m["a"]), clock(m["b"])
    return {"range": (start, end)} if start and end else None


def _relative(m: re.Match) -> dict | None:
    seconds = duration_seconds(m["d"] or m["d2"])
    return {"delta": seconds} if seconds else None


def _duration(m: re.Match) -> dict | None:
    seconds = duration_seconds(m.group())
    return {"duration": seconds} if seconds else None


def _date(m: re.Match) -> dict | None:
    year, month, day = (number(m[k]) if m[k] else None for k in ("y", "mo", "d"))
    if day is None or (m["mo"] and month is None) or (m["y"] and year is None):
        return None
    return {"day": ("date", year, month, day)}


def _day(m: re.Match) -> dict:
    text = m.group()
    if text in ("昨天", "昨晚", "前天"):
        return {"day": ("passed",)}
    fields: dict = {"day": ("offset", {"今": 0, "明": 1, "后": 2, "大": 3}[text[0]])}
    if text[1] in "晚早":
        fields["period"] = "night" if text[1] == "晚" else "morning"
    return fields


def _weekday_piece(m: re.Match) -> dict:
    prefix = m["pre"] or ""
    if prefix.startswith("上"):
        return {"day": ("passed",)}
    return {"day": ("weekday", _weekday(m["wd"]), prefix.startswith("下"))}


def _period(m: re.Match) -> dict:
    return {"period": _PERIODS[m.group()]}


def _clock_piece(m: re.Match) -> dict | None:
    found = clock(m.group())
    return {"clock": found} if found else None


# Tried in this order at each character; the first that matches (and whose reader does not
# say None) makes a piece. The last column: weak.
_PIECES: list[tuple[re.Pattern, Callable[[re.Match], dict | None], bool]] = [
    (
        re.compile(
            rf"每隔?(?:{_N})?个?(?:小时|钟头|分钟)|(?:每个?|每逢)?工作日|(?:每|从)?{_WEEK}一(?:到|至){_WEEK}?五"
            rf"|每个?周末|每个?{_WEEK}(?:{_WD}(?:(?:和|、|跟|与|及|,)?{_WEEK}?{_WD})*)?(?![次遍回])"
            r"|每天早上|每天晚上|每天|每日|天天|每晚|每早"
        ),
        _every,
        False,
    ),
    (
        re.compile(
            rf"从?(?P<a>(?:{_PERIOD})?(?:{plain(_CLOCK)}))(?:到|至|-|~)"
            rf"(?P<b>(?:{_PERIOD})?(?:{plain(_CLOCK)}))(?:之间|为止)?"
        ),
        _range,
        False,
    ),
    (
        re.compile(rf"(?:再?过)?(?P<d>{_DURATION})(?:以后|之后|过后|后)|再?过(?P<d2>{_DURATION})"),
        _relative,
        False,
    ),
    (
        re.compile(
            rf"(?:(?P<y>\d{{4}}|[零〇一二三四五六七八九]{{4}})年)?(?P<mo>{_N})月份?(?P<d>{_N})[号日]?"
        ),
        _date,
        False,
    ),
    (re.compile(rf"(?P<y>)(?P<mo>)(?P<d>{_N})[号日](?![子本元])"), _date, False),
    (
        re.compile(r"大后天|后天|明天|明日|今天|今日|明早|明晚|今早|今晚|昨天|昨晚|前天"),
        _day,
        False,
    ),
    (re.compile(rf"(?P<pre>下个?|这个?|本|上个?)?{_WEEK}(?P<wd>{_WD})"), _weekday_piece, False),
    (re.compile(_DURATION), _duration, False),
    (re.compile(_PERIOD), _period, True),
    (re.compile(plain(_CLOCK)), _clock_piece, False),
]


def scan(text: str) -> list[Piece]:
    """The pieces of time expressions in (normalized) Chinese text, left to right."""
    pieces: list[Piece] = []
    pos = 0
    while pos < len(text):
        for pattern, read, weak in _PIECES:
            m = pattern.match(text, pos)
            if m and m.end() > pos and (fields := read(m)) is not None:
                # "大声一点", "快一点": 一点 is "a bit" more often than one o'clock.
                weak = weak or bool(re.fullmatch(r"[一1][点點]钟?", m.group()))
                pieces.append((pos, m.end(), fields, weak))
                pos = m.end()
                break
        else:
            pos += 1
    return pieces


FILLER = re.compile(r"[\s,，、的在于]*")  # between two pieces of one time
CUE = re.compile(r"(?:在|到|等|于|是|约|大约|大概|差不多)\s*$")  # before a weak piece
PREFIX = re.compile(r"(?:在|于)\s*$")  # taken into the span

# Answers to "是早上八点还是晚上八点？"
FIRST = re.compile(r"第一|前一个|前面|头一个|早的那个")
SECOND = re.compile(r"第二|后一个|后面|另一个|晚的那个")
AM_WORDS = re.compile(r"早上|早晨|上午|清晨|凌晨|白天|早")
PM_WORDS = re.compile(r"晚上|下午|傍晚|夜里|晚")

_MESSAGES = {
    "passed": "这个时间已经过去了。",
    "hour": "一天里没有{h}点。",
    "minute": "没有{h}点{m}分这个时间。",
    "ampm": "没有{when}{h}点。",
    "date": "{month}月没有{day}号。",
    "date_year": "{year}年{month}月没有{day}号。",
    "day_of_month": "没有哪个月有{day}号。",
}
_WHEN_WORDS = {
    "am": "上午", "pm": "下午", "morning": "上午", "early": "凌晨", "noon": "中午",
    "afternoon": "下午", "evening": "傍晚", "night": "晚上",
}  # fmt: skip


def impossible(kind: str, **values: int | str) -> str:
    """What to say when a time can't be: impossible("hour", h=25) → 一天里没有二十五点。"""
    words = {}
    for key, value in values.items():
        if key == "when":
            words[key] = _WHEN_WORDS.get(str(value), str(value))
        elif key == "h":
            words[key] = spoken(int(value))
        elif key == "year":
            words[key] = str(value)
        else:
            words[key] = cn2an.an2cn(value)
    return _MESSAGES[kind].format(**words)


def say_time(h: int, m: int) -> str:
    """8:00 → 八点, 8:30 → 八点半, 8:05 → 八点零五分."""
    words = f"{spoken(h)}点"
    if m == 30:
        return words + "半"
    if m:
        return words + ("零" if m < 10 else "") + f"{cn2an.an2cn(m)}分"
    return words


def question(h: int, m: int) -> str:
    """The question for an hour said without 早上/晚上 (h is 6 to 11)."""
    morning = "早上" if h < 9 else "上午"
    return f"是{morning}{say_time(h, m)}还是晚上{say_time(h, m)}？"
