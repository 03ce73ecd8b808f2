"""The days a text names, as a conversation means them: "last Saturday" said on Thu 8 May
2025 is 2025-05-03 (long-term memory tags turns with them: fayd.memory.dates).

The pieces come from the time scanner (times.py, English and Chinese); only the direction
is decided here, because the scanner resolves forward (reminders) and a conversation
mostly tells what happened:

- ``last <weekday>`` / 上周<X>: that day of the previous calendar week for 上周, the latest
  such day before the text's date for "last"; ``next <weekday>``: of the next week; a bare
  weekday: the nearest such day, either side (told or planned).
- yesterday / last night / 昨天 / 昨晚 → the day before; 前天 → two days before; today,
  tomorrow, the day after → forward as said.
- a duration followed by "ago" / 前 → that many days before (days and weeks).
- a day of a month without a year: the occurrence nearest the text's date.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime, timedelta

from fayd.agent.clock.times import scan

log = logging.getLogger(__name__)

#: Dates one text may name: a text listing a whole calendar is not about any one day.
MAX_DATES = 4
_AGO = re.compile(r"\s*(?:ago|before|earlier|前|以前|之前)")
_LAST = re.compile(r"(?:last|past|previous)\s+$")
_ZH_LAST_WEEK = re.compile(r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])")
_ZH_WEEKDAYS = "一二三四五六日"


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


def named(content: str, said: datetime) -> list[date]:
    """The days ``content`` names, resolved against ``said`` (at most ``MAX_DATES``)."""
    try:
        text, pieces = scan(content)
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
