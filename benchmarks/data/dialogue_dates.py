"""Relative dates as people say them, from a session's date: "last Saturday", "上周六".

``phrase(event, said_on, lang)`` words an event's date relative to the day it is mentioned;
the gold answers keep the absolute date. Weeks are calendar weeks from Monday (the reading
of 上周六 in Chinese; in English "last Saturday" said on a Monday is then the Saturday two
days before, as most people mean it).
"""

from __future__ import annotations

from datetime import date, timedelta

EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ZH_DAYS = ["一", "二", "三", "四", "五", "六", "日"]
EN_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def week_gap(event: date, said_on: date) -> int:
    """Calendar weeks from the week of ``said_on`` to the week of ``event`` (Monday-first)."""
    monday = said_on - timedelta(days=said_on.weekday())
    return (event - timedelta(days=event.weekday()) - monday).days // 7


def phrase(event: date, said_on: date, lang: str) -> str:
    days, weeks = (event - said_on).days, week_gap(event, said_on)
    wd = event.weekday()
    if lang == "zh":
        near = {-2: "前天", -1: "昨天", 0: "今天", 1: "明天", 2: "后天"}
        if days in near:
            return near[days]
        by_week = {0: "这周", -1: "上周", -2: "上上周", 1: "下周"}
        if weeks in by_week:
            return f"{by_week[weeks]}{ZH_DAYS[wd]}"
        return f"{event.month}月{event.day}号"
    near = {-2: "the day before yesterday", -1: "yesterday", 0: "today", 1: "tomorrow"}
    if days in near:
        return near[days]
    if weeks == 0:
        return f"on {EN_DAYS[wd]}" if days < 0 else f"this {EN_DAYS[wd]}"
    if weeks == -1:
        return f"last {EN_DAYS[wd]}"
    if weeks == -2:
        return f"the {EN_DAYS[wd]} before last"
    if weeks == 1:
        return f"next {EN_DAYS[wd]}"
    return f"on the {ordinal(event.day)} of {EN_MONTHS[event.month - 1]}"


def resolve(text: str, said_on: date, lang: str) -> date | None:
    """The date a phrase of :func:`phrase` names (the tests check the gold dates with it)."""
    if lang == "zh":
        near = {"前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2}
        if text in near:
            return said_on + timedelta(days=near[text])
        by_week = {"这周": 0, "上上周": -2, "上周": -1, "下周": 1}
        for word, weeks in by_week.items():
            if text.startswith(word) and text[len(word) :] in ZH_DAYS:
                return _in_week(said_on, weeks, ZH_DAYS.index(text[len(word) :]))
        month, _, day = text.rstrip("号").partition("月")
        return _in_year(said_on, int(month), int(day))
    text = text[:1].lower() + text[1:]  # at the start of a sentence
    near = {"the day before yesterday": -2, "yesterday": -1, "today": 0, "tomorrow": 1}
    if text in near:
        return said_on + timedelta(days=near[text])
    words = text.split()
    if (words[0] == "on" and words[1] in EN_DAYS) or words[0] == "this":
        return _in_week(said_on, 0, EN_DAYS.index(words[1]))
    if words[0] in ("last", "next"):
        return _in_week(said_on, -1 if words[0] == "last" else 1, EN_DAYS.index(words[1]))
    if words[-1] == "last":
        return _in_week(said_on, -2, EN_DAYS.index(words[1]))
    day = int("".join(c for c in words[2] if c.isdigit()))
    return _in_year(said_on, EN_MONTHS.index(words[4]) + 1, day)


def _in_week(said_on: date, weeks: int, weekday: int) -> date:
    return said_on - timedelta(days=said_on.weekday()) + timedelta(days=7 * weeks + weekday)


def _in_year(said_on: date, month: int, day: int) -> date:
    """The date nearest ``said_on`` with that month and day (a year either side)."""
    options = []
    for y in (-1, 0, 1):
        try:
            options.append(date(said_on.year + y, month, day))
        except ValueError:  # 29 February of a common year
            continue
    return min(options, key=lambda d: abs((d - said_on).days))
