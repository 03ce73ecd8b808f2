"""How reminders are said back: the absolute moment ("on Sunday 6 December at 17:00"), a
rule ("every weekday at 08:00"), a reminder in a list. Plain text, no I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fayd.agent.language.phrases import WEEKDAYS
from fayd.agent.skills.registry import Context
from fayd.reminders import Rule

_WEEKDAYS_ZH = "一二三四五六日"


def when_said(at: datetime, now: datetime, lang: str) -> str:
    """The absolute moment: "today at 17:00", "tomorrow, Wednesday 2 December, at 09:00",
    "on Sunday 6 December at 17:00" (the year when it is not this one)."""
    days = (at.date() - now.date()).days
    if lang == "zh":
        day = {0: "今天", 1: "明天"}.get(days, "")
        date = f"{at.month}月{at.day}日（星期{_WEEKDAYS_ZH[at.weekday()]}）"
        year = f"{at.year}年" if at.year != now.year else ""
        return f"{day}{year}{date}{at:%H:%M}"
    date = f"{at:%A} {at.day} {at:%B}" + (f" {at.year}" if at.year != now.year else "")
    if days == 0:
        return f"today at {at:%H:%M}"
    if days == 1:
        return f"tomorrow, {date}, at {at:%H:%M}"
    return f"on {date} at {at:%H:%M}"


def every_said(rule: Rule, lang: str) -> str:
    at = rule.at.strftime("%H:%M") if rule.at else ""
    zh = lang == "zh"
    if rule.every == "weekday":
        return f"每个工作日{at}" if zh else f"every weekday at {at}"
    if rule.every == "week" and rule.days:
        names = [_DAY_NAMES[d] for d in rule.days]
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        return f"每周{'、'.join(rule.days)}{at}" if zh else f"every {listed} at {at}"
    if rule.every == "week":
        return f"每周{at}" if zh else f"every week at {at}"
    if rule.every == "hours":
        span = ""
        if rule.between:
            a, b = (t.strftime("%H:%M") for t in rule.between)
            span = f"（{a}到{b}之间）" if zh else f" between {a} and {b}"
        return f"每{rule.hours}小时{span}" if zh else f"every {rule.hours} hours{span}"
    return f"每天{at}" if zh else f"every day at {at}"


_DAY_NAMES = dict(
    zip(
        ("mon", "tue", "wed", "thu", "fri", "sat", "sun"),
        (day.title() for day in WEEKDAYS),
        strict=True,
    )
)


def in_chinese(ctx: Context) -> bool:
    return ctx.lang == "zh"


def describe(row: dict[str, Any], ctx: Context) -> str:
    """One reminder as said in a list: what, and when it comes next."""
    rule = Rule.from_json(row["rule"])
    nxt = datetime.fromtimestamp(row["next_at"], ctx.tz) if row["next_at"] else None
    if row["kind"] == "timer" and nxt:
        label = f"{row['name']} " if row["name"] else ""
        if ctx.lang == "zh":
            return f"{label}计时器（{nxt:%H:%M}到）"
        return f"the {label}timer that would ring at {nxt:%H:%M}"
    what = row["text"]
    if rule.every == "once":
        return f"{what} {when_said(nxt, ctx.now, ctx.lang)}" if nxt else what
    return f"{what} {every_said(rule, ctx.lang)}"


def today_line(row: dict[str, Any], ctx: Context) -> str:
    """One of today's reminders: "at 17:00, call your son"."""
    at = datetime.fromtimestamp(row["next_at"], ctx.tz)
    return f"{at:%H:%M}，{row['text']}" if in_chinese(ctx) else f"at {at:%H:%M}, {row['text']}"


def task_said(what: str, how: str, medication: bool, zh: bool) -> tuple[str, str]:
    """(the words kept and said when it fires, the words read back after "I'll remind you")
    of a task said in everyday words: "to take your tablets"; "about the bins" (fires "the
    bins"); "not to burn the cookies" (fires "don't burn the cookies"); "that the bus is
    coming". Medicine asked about ("a nudge about my tablets") is to be taken."""
    if zh:
        return what, what
    if how == "about" and medication:
        what, how = f"take {what}", "to"
    if how == "not":
        return f"don't {what}", f"not to {what}"
    if how in ("about", "that"):
        return what, f"{how} {what}"
    return what, f"to {what}"


def no_task(zh: bool) -> str:
    """What a reminder with nothing to do says when it fires ("give me a shout at 3")."""
    return "你让我这个时候叫你" if zh else "you asked me to let you know at this time"
