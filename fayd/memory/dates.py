"""Absolute dates of what a turn says: "last Saturday" said on Thu 8 May 2025 is 2025-05-03.

Write time: every date a turn names (``yesterday``, ``last Saturday``, ``two weeks ago``,
``on 14 March``, 昨天, 上周六, 三天前, 5月6日) becomes a ``when:YYYY-MM-DD`` tag, resolved
against the turn's own datetime, and its words go into the lexical row ("3 May 2025",
"2025年5月3日"), so a question that names the day finds the turn by BM25 and by tag. Query
time: :func:`query_days` gives the days a question names, against the search's ``now``.

The pieces come from fayd's own time scanner (fayd.agent.clock.times, English and Chinese);
only the direction is decided here, because the scanner resolves forward (reminders) and a
conversation mostly tells what happened:

- ``last <weekday>`` / 上周<X>: that day of the previous calendar week for 上周, the latest
  such day before the turn's date for "last"; ``next <weekday>``: of the next week; a bare
  weekday: the nearest such day, either side (told or planned).
- yesterday / last night / 昨天 / 昨晚 → the day before; 前天 → two days before; today,
  tomorrow, the day after → forward as said.
- a duration followed by "ago" / 前 → that many days before (days and weeks).
- a day of a month without a year: the occurrence nearest the turn's date.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fayd.memory.index import UserIndex

log = logging.getLogger(__name__)

NAMESPACE = "when:"
#: Dates one turn may tag: a turn listing a whole calendar is not about any one day.
MAX_DATES = 4
_MONTHS = "January February March April May June July August September October November December"
_MONTH_NAMES = _MONTHS.split()
_CJK = re.compile(r"[\u4e00-\u9fff]")
_AGO = re.compile(r"\s*(?:ago|before|earlier|前|以前|之前)")
_LAST = re.compile(r"(?:last|past|previous)\s+$")
_ZH_LAST_WEEK = re.compile(r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])")
_ZH_WEEKDAYS = "一二三四五六日"


def _lang(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def _nearest(day: date, month: int, dom: int) -> date | None:
    found = []
    for year in (day.year - 1, day.year, day.year + 1):
        try:
            found.append(date(year, month, dom))
        except ValueError:
            continue
    return min(found, key=lambda d: abs((d - day).days), default=None)


def _weekday(day: date, weekday: int, before: str, after: bool) -> date:
    if after:  # next <weekday>: that day of the next calendar week
        return day + timedelta(days=7 - day.weekday() + weekday)
    back = (day.weekday() - weekday) % 7 or 7
    if _LAST.search(before):
        return day - timedelta(days=back)
    ahead = (weekday - day.weekday()) % 7
    return day + timedelta(days=ahead) if ahead <= back else day - timedelta(days=back)


def _resolve(fields: dict, text: str, span: tuple[int, int], day: date) -> date | None:
    start, end = span
    if "duration" in fields:
        if not _AGO.match(text, end):
            return None
        return day - timedelta(days=round(fields["duration"] / 86400))
    if "delta" in fields:  # "in two days", 两天后
        return day + timedelta(days=round(fields["delta"] / 86400))
    found = fields.get("day")
    if found is None:
        return None
    kind = found[0]
    piece = text[start:end]
    if kind == "passed":
        if m := _ZH_LAST_WEEK.search(piece):
            wd = m.group(1)
            weekday = (
                6 if wd in "日天7" else _ZH_WEEKDAYS.index(wd) if not wd.isdigit() else int(wd) - 1
            )
            return day - timedelta(days=day.weekday() + 7 - weekday)
        return day - timedelta(days=2 if "前天" in piece else 1)
    if kind == "offset":
        return day + timedelta(days=found[1])
    if kind == "weekday":
        return _weekday(day, found[1], text[max(0, start - 12) : start], found[2])
    if kind == "date":
        _, year, month, dom = found
        if month is None:
            return None  # "on the 14th": too weak to tag
        if year is not None:
            try:
                return date(year, month, dom)
            except ValueError:
                return None
        return _nearest(day, month, dom)
    return None


def mentioned(content: str, said: datetime) -> list[date]:
    """The days ``content`` names, resolved against ``said`` (at most ``MAX_DATES``)."""
    # Imported here: fayd.agent imports memory at package load (a cycle at import time).
    from fayd.agent.clock import times

    text = times._normalize(content)
    lang = _lang(text)
    try:
        pieces = times._LANGS[lang].scan(text)
    except (ValueError, OverflowError) as exc:  # a numeral cn2an cannot read
        log.debug("no dates read from a turn: %s", exc)
        return []
    out: list[date] = []
    for start, end, fields, weak in pieces:
        if weak:
            continue
        try:
            found = _resolve(fields, text, (start, end), said.date())
        except (ValueError, OverflowError):  # a date out of the calendar's range
            continue
        # The turn's own day is its datetime already ("today" adds nothing).
        if found is not None and found != said.date() and found not in out:
            out.append(found)
    return out[:MAX_DATES]


def tags(content: str, said: datetime) -> list[str]:
    return [f"{NAMESPACE}{d.isoformat()}" for d in mentioned(content, said)]


def words(tag: str) -> str:
    """A ``when:`` tag as the lexical row gets it: "3 May 2025 2025年5月3日"."""
    d = date.fromisoformat(tag[len(NAMESPACE) :])
    return f"{d.day} {_MONTH_NAMES[d.month - 1]} {d.year} {d.year}年{d.month}月{d.day}日"


def query_days(query: str, now: datetime) -> list[date]:
    """The days a question names, against the time of asking."""
    return mentioned(query, now)


def rows_on(index: UserIndex, days: list[date]) -> np.ndarray:
    """Positions of the rows said on one of ``days`` (local time) or naming one of them."""
    found: set[int] = set()
    created = index.created[: index.n]
    for d in days:
        start = datetime.combine(d, datetime.min.time()).timestamp()
        found.update(np.flatnonzero((created >= start) & (created < start + 86400)).tolist())
        found.update(index.tag_rows.get(f"{NAMESPACE}{d.isoformat()}", []))
    return np.array(sorted(found), np.int64)
