"""What an offline box cannot know (the weather, the news) said honestly; and reminders and
timers: understood, with their times read back, but not kept yet (the scheduler that would
say them is still to come, so fayd says so rather than pretend)."""

from __future__ import annotations

from typing import Any

from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.agent.understand.times import Recurrence, When

OFFLINE = {
    "weather": (
        "I can't see the weather from here: I'm not connected to the internet. "
        "The radio or a look out of the window will know better than me.",
        "我没有连接互联网，看不到天气预报。听听收音机或者看看窗外会更准。",
    ),
    "news": (
        "I don't get the news: I'm not connected to the internet. The radio or the television "
        "will have it.",
        "我没有连接互联网，听不到新闻。可以打开收音机或电视看看。",
    ),
}
OTHER = (
    "I can't find that out: I'm not connected to the internet.",
    "我没有连接互联网，查不到这个。",
)


async def offline_info(args: dict[str, Any], ctx: Context) -> Outcome:
    said = OFFLINE.get(str(args.get("topic")), OTHER)
    return Outcome(said[ctx.lang == "zh"])


async def reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    what = str(args.get("what") or "").strip() or ("这件事" if zh else "that")
    when = args.get("when") or args.get("recurrence")
    if isinstance(when, When):
        at = words.moment(when.at, ctx.now, ctx.lang)
    elif isinstance(when, Recurrence):
        at = _every(when, zh)
    else:
        return Outcome("什么时候提醒你？" if zh else "When should I remind you?")
    if zh:
        return Outcome(f"我听明白了：{at}提醒你{what}。不过我现在还不能保存提醒，请先记在本子上。")
    return Outcome(
        f"I understood: remind you to {words.turned_round(what)} {at}. "
        "But I can't keep reminders yet, so please write it down for now."
    )


async def timer(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    seconds = args.get("duration_s")
    if not seconds:
        return Outcome("要计时多久？" if zh else "For how long?")
    length = words.duration(int(seconds), ctx.lang)
    if zh:
        return Outcome(f"我听明白了：计时{length}。不过我现在还不能计时，请用厨房的定时器。")
    return Outcome(
        f"I understood: a timer for {length}. But I can't run timers yet, so please use "
        "your kitchen timer for now."
    )


def _every(r: Recurrence, zh: bool) -> str:
    at = words.clock(r.at, "zh" if zh else "en") if r.at else ""
    if r.every == "weekday":
        return f"每个工作日{at}" if zh else f"every weekday at {at}"
    if r.every == "week" and r.days:
        days = ", ".join(d.capitalize() for d in r.days)
        return f"每周{'、'.join(r.days)}{at}" if zh else f"every {days} at {at}"
    if r.every == "hours" and r.hours:
        return f"每{r.hours}小时" if zh else f"every {r.hours} hours"
    return f"每天{at}" if zh else f"every day at {at}"


SKILLS = [
    Skill(
        "offline_info",
        "Say honestly that the weather, news and the like cannot be known offline.",
        {"type": "object", "properties": {"topic": {"type": "string"}}},
        offline_info,
    ),
    Skill(
        "set_reminder",
        "Read back a reminder that was asked for (reminders are not kept yet).",
        {"type": "object", "properties": {"what": {"type": "string"}}},
        reminder,
    ),
    Skill(
        "set_timer",
        "Read back a timer that was asked for (timers do not run yet).",
        {"type": "object", "properties": {"duration_s": {"type": "integer", "minimum": 1}}},
        timer,
    ),
]
