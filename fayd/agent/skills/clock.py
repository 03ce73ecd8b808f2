"""The clock: the time, the date, and how many days until a date or a holiday, in the
household's time zone (``agent.timezone``)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from dateutil.easter import easter

from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill

# Lunar holidays, which no formula in the standard library gives: their dates to 2035.
SPRING_FESTIVAL = {
    2026: (2, 17),
    2027: (2, 6),
    2028: (1, 26),
    2029: (2, 13),
    2030: (2, 3),
    2031: (1, 23),
    2032: (2, 11),
    2033: (1, 31),
    2034: (2, 19),
    2035: (2, 8),
}
MID_AUTUMN = {
    2026: (9, 25),
    2027: (9, 15),
    2028: (10, 3),
    2029: (9, 22),
    2030: (9, 12),
    2031: (10, 1),
    2032: (9, 19),
    2033: (9, 8),
    2034: (9, 27),
    2035: (9, 16),
}
NAMES = {
    "christmas": ("Christmas", "圣诞节"),
    "new_year": ("New Year's Day", "元旦"),
    "easter": ("Easter Sunday", "复活节"),
    "spring_festival": ("the Spring Festival", "春节"),
    "mid_autumn": ("the Mid-Autumn Festival", "中秋节"),
}


def holiday_on(holiday: str, year: int) -> date | None:
    if holiday == "christmas":
        return date(year, 12, 25)
    if holiday == "new_year":
        return date(year, 1, 1)
    if holiday == "easter":
        return easter(year)
    table = SPRING_FESTIVAL if holiday == "spring_festival" else MID_AUTUMN
    found = table.get(year) if holiday in ("spring_festival", "mid_autumn") else None
    return date(year, *found) if found else None


def next_holiday(holiday: str, today: date) -> date | None:
    for year in (today.year, today.year + 1):
        day = holiday_on(holiday, year)
        if day is not None and day >= today:
            return day
    return None


async def tell_time(args: dict[str, Any], ctx: Context) -> Outcome:
    if ctx.lang == "zh":
        return Outcome(f"现在是{words.clock_zh(ctx.now.time())}。")
    return Outcome(f"It's {words.clock_en(ctx.now.time())}.")


async def tell_date(args: dict[str, Any], ctx: Context) -> Outcome:
    today = ctx.now.date()
    if ctx.lang == "zh":
        return Outcome(f"今天是{words.day_zh(today)}。")
    return Outcome(f"Today is {words.day_en(today)}.")


async def days_until(args: dict[str, Any], ctx: Context) -> Outcome:
    today = ctx.now.date()
    zh = ctx.lang == "zh"
    holiday = args.get("holiday")
    target = args.get("date")
    if isinstance(target, str):
        target = date.fromisoformat(target)
    if isinstance(target, datetime):
        target = target.date()
    name = ""
    if holiday:
        target = next_holiday(holiday, today)
        name = NAMES[holiday][1 if zh else 0]
        if target is None:
            return Outcome(f"我不知道{name}的日期。" if zh else f"I don't know when {name} is.")
    if not isinstance(target, date):
        return Outcome("你说的是哪一天？" if zh else "Which day do you mean?")
    days = (target - today).days
    shown = name or words.day(target, ctx.lang)
    if days < 0:
        return Outcome(f"{shown}已经过去了。" if zh else f"{shown} has already passed.")
    if days == 0:
        return Outcome("就是今天！" if zh else f"It's today: {shown}!")
    if zh:
        return Outcome(f"离{shown}还有{days}天（{words.day_zh(target)}）。")
    when = words.day_en(target)
    return Outcome(
        f"{'One day' if days == 1 else f'{days} days'} until {shown}"
        + (f", on {when}." if name else ".")
    )


SKILLS = [
    Skill(
        "clock_time", "Say what time it is now.", {"type": "object", "properties": {}}, tell_time
    ),
    Skill(
        "clock_date",
        "Say today's date and weekday.",
        {"type": "object", "properties": {}},
        tell_date,
    ),
    Skill(
        "days_until",
        "How many days until a date or a holiday.",
        {
            "type": "object",
            "properties": {
                "date": {"type": "string", "description": "YYYY-MM-DD"},
                "holiday": {"enum": sorted(NAMES)},
            },
        },
        days_until,
    ),
]
