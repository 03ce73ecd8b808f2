"""When a reminder fires: its rule (once, daily, weekdays, weekly on days, every N hours
between two times) and the pure "next occurrence" of it. Plain data, no I/O.

Occurrences are wall-clock times in the user's zone ("08:00 every day" is 08:00 in winter
and in summer); each local date gives exactly one instant, so a daylight-saving change never
doubles or skips a fire: a time the spring change skips (01:30 in London on the last Sunday
of March) fires at the same distance after the change (02:30 BST), a time the autumn change
repeats (01:30 on the last Sunday of October) fires once, at its first reading (BST). "Every
N hours" without a window counts elapsed hours from the first fire (no DST effect at all)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import rrule

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
EVERY = ("once", "day", "weekday", "week", "hours")
_RR_DAYS = (rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU)


class BadRule(ValueError):
    """A rule that cannot be read or never fires; the message names the field."""


@dataclass(frozen=True)
class Rule:
    every: str = "once"  # one of EVERY
    at: dtime | None = None  # time of day (day/weekday/week)
    days: tuple[str, ...] = ()  # for "week": "mon".."sun"
    hours: int | None = None  # for "hours"
    between: tuple[dtime, dtime] | None = None  # for "hours": the daily window

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """``{"every", "at", "days", "hours", "between"}`` without the empty ones."""
        out: dict[str, Any] = {"every": self.every}
        if self.at is not None:
            out["at"] = self.at.strftime("%H:%M")
        if self.days:
            out["days"] = list(self.days)
        if self.hours is not None:
            out["hours"] = self.hours
        if self.between:
            out["between"] = [t.strftime("%H:%M") for t in self.between]
        return out

    @classmethod
    def from_json(cls, text: str) -> Rule:
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise BadRule(f"rule: not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise BadRule("rule: must be an object")
        return cls.of(data)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Rule:
        every = data.get("every", "once")
        if every not in EVERY:
            raise BadRule(f"rule.every: {every!r} is not one of {', '.join(EVERY)}")
        at = _hhmm(data["at"], "rule.at") if data.get("at") is not None else None
        days = tuple(data.get("days") or ())
        if any(d not in DAYS for d in days):
            raise BadRule(f"rule.days: {list(days)} (known: {', '.join(DAYS)})")
        hours = data.get("hours")
        if hours is not None and (not isinstance(hours, int) or not 1 <= hours <= 24):
            raise BadRule(f"rule.hours: {hours!r} must be a whole number from 1 to 24")
        between = None
        if data.get("between") is not None:
            pair = data["between"]
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise BadRule("rule.between: two times, HH:MM")
            between = (_hhmm(pair[0], "rule.between"), _hhmm(pair[1], "rule.between"))
            if between[1] < between[0]:
                raise BadRule("rule.between: the window ends before it starts")
        if every in ("day", "weekday", "week") and at is None:
            raise BadRule(f"rule.at: every {every} needs a time of day")
        if every == "hours" and hours is None:
            raise BadRule("rule.hours: every N hours needs N")
        return cls(every, at, days, hours, between)


def _hhmm(value: Any, key: str) -> dtime:
    try:
        return dtime.fromisoformat(str(value)).replace(second=0, microsecond=0)
    except ValueError as exc:
        raise BadRule(f"{key}: {value!r} is not a time HH:MM") from exc


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise BadRule(f"tz: no time zone {name!r}") from exc


def local_instant(naive: datetime, tz: ZoneInfo) -> datetime:
    """A wall-clock time as one UTC instant: fold=0 takes the first reading of a repeated
    hour and moves a skipped one on by the size of the gap."""
    return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)


def next_occurrence(rule: Rule, first: datetime, after: datetime, tz: ZoneInfo) -> datetime | None:
    """The first fire of ``rule`` strictly after ``after`` (aware), in UTC; ``first`` is the
    first fire (aware): a one-off's moment, the start of "every N hours". None: no more."""
    after = after.astimezone(UTC)
    if rule.every == "once":
        return first.astimezone(UTC) if first.astimezone(UTC) > after else None
    if rule.every == "hours" and rule.between is None:
        assert rule.hours
        step = timedelta(hours=rule.hours)
        start = first.astimezone(UTC)
        if start > after:
            return start
        n = (after - start) // step + 1
        return start + n * step
    # Wall-clock rules: candidates from the local date before `after`, on naive local times.
    local_after = after.astimezone(tz).replace(tzinfo=None)
    start = max(
        local_after.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1),
        first.astimezone(tz).replace(tzinfo=None, second=0, microsecond=0)
        if rule.every == "hours"
        else datetime.min,
    )
    weekday = first.astimezone(tz).weekday()
    for naive in _candidates(rule, start, weekday):
        at = local_instant(naive, tz)
        if at > after:
            return at
    return None


def _candidates(rule: Rule, start: datetime, weekday: int) -> rrule.rrule:
    """Local wall-clock candidates from ``start``; "every week" with no days is on the
    first fire's ``weekday``."""
    if rule.every == "hours":
        assert rule.between and rule.hours
        begin, end = rule.between
        hours = [h for h in range(begin.hour, 24, rule.hours) if dtime(h, begin.minute) <= end]
        return rrule.rrule(
            rrule.DAILY, dtstart=start, byhour=hours, byminute=begin.minute, bysecond=0, count=400
        )
    assert rule.at is not None
    if rule.every == "day":
        days = None
    elif rule.every == "weekday":
        days = _RR_DAYS[:5]
    else:
        days = tuple(_RR_DAYS[DAYS.index(d)] for d in rule.days) or (_RR_DAYS[weekday],)
    return rrule.rrule(
        rrule.DAILY,
        dtstart=start,
        byweekday=days,
        byhour=rule.at.hour,
        byminute=rule.at.minute,
        bysecond=0,
        count=400,
    )
