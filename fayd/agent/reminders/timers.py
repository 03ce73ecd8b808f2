"""Timers as skills (named, several at once, "how long is left", cancel) and "did I take my
medicine today?" answered from the medication check-ins' records, then from what the person
told fayd — never guessed (docs/reminders.md)."""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from typing import Any

from fayd.agent.recall.skill import recall
from fayd.agent.reminders.said import in_chinese
from fayd.agent.reminders.skill import cancel_any, refusal
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.errors import FaydError
from fayd.reminders import BadReminder

log = logging.getLogger(__name__)


async def set_timer(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = in_chinese(ctx)
    seconds = args.get("duration_s")
    if not seconds:
        return Outcome("要计时多久？" if zh else "For how long?")
    if ctx.reminders is None:
        return Outcome("计时器现在用不了。" if zh else "I can't run timers right now.")
    name = str(args.get("name") or "").strip()
    ends = ctx.now + timedelta(seconds=int(seconds))
    try:
        row = await ctx.reminders.add(
            ctx.user,
            name or "timer",
            at=ends,
            kind="timer",
            name=name,
            lang=ctx.lang,
            source=str(args.get("said") or ""),
            device=ctx.device,
        )
    except BadReminder as exc:
        return Outcome(refusal(str(exc), zh))
    except FaydError as exc:  # a full disk: no timer runs, and none is said to
        log.error("could not keep a timer: %s", exc)
        return Outcome("对不起，计时器没能设好。" if zh else "Sorry, I couldn't set that timer.")
    ends = datetime.fromtimestamp(row["next_at"], ctx.tz)  # as kept: what will ring
    length = words.duration(int(seconds), ctx.lang)
    if zh:
        return Outcome(f"好的，{name}计时{length}，{ends:%H:%M}到。", detail={"timer": row["id"]})
    label = f"The {name} timer" if name else "A timer"
    return Outcome(f"{label} is set for {length}, until {ends:%H:%M}.", detail={"timer": row["id"]})


async def cancel_timer(args: dict[str, Any], ctx: Context) -> Outcome:
    return await cancel_any(args, ctx, kind="timer")


async def timer_left(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = in_chinese(ctx)
    if ctx.reminders is None:
        return Outcome("计时器现在用不了。" if zh else "I can't run timers right now.")
    rows = await ctx.reminders.list(ctx.user)
    timers = [r for r in rows if r["kind"] == "timer" and r["next_at"]]
    if not timers:
        return Outcome("现在没有计时器在走。" if zh else "There's no timer running.")
    parts = []
    for row in timers:
        left = max(0, int(row["next_at"] - ctx.now.timestamp()))
        length = (
            words.duration(left, ctx.lang)
            if left >= 60
            else (f"{left}秒" if zh else f"{left} seconds")
        )
        label = row["name"] or ("计时器" if zh else "")
        parts.append(
            f"{label}还剩{length}"
            if zh
            else f"{length} left on the {label + ' ' if label else ''}timer"
        )
    text = "；".join(parts) + "。" if zh else "; ".join(parts) + "."
    return Outcome(text[0].upper() + text[1:])


async def medication_taken(args: dict[str, Any], ctx: Context) -> Outcome:
    """From the check-ins' records, never guessed."""
    zh = in_chinese(ctx)
    if ctx.reminders is None:
        return Outcome("我没有这方面的记录。" if zh else "I have no record of that.")
    rows = await ctx.reminders.medication_today(ctx.user)
    if not rows and ctx.memory is not None and args.get("said"):
        told = await recall({"query": str(args["said"])}, ctx)  # what they told fayd
        if told.detail.get("from"):
            return told
    if not rows:
        if zh:
            return Outcome("今天我没有你吃药的记录。")
        return Outcome("I have no record of your medicine today: I haven't asked you about it.")
    said = []
    for row in rows:
        asked = datetime.fromtimestamp(row["asked_at"], ctx.tz)
        answered = (
            datetime.fromtimestamp(row["answered_at"], ctx.tz) if row["answered_at"] else None
        )
        what = row["text"]
        if row["state"] == "yes" and answered:
            said.append(
                f"{answered:%H:%M}你说已经{what}了"
                if zh
                else f"at {answered:%H:%M} you told me you'd {_past(what)}"
            )
        elif row["state"] == "no" and answered:
            said.append(
                f"{answered:%H:%M}你说还没{what}"
                if zh
                else f"at {answered:%H:%M} you said you hadn't yet"
            )
        else:
            said.append(
                f"{asked:%H:%M}我问过你{what}，你还没回答"
                if zh
                else f"I asked at {asked:%H:%M} ({what}) but you didn't tell me"
            )
    if zh:
        return Outcome("今天：" + "；".join(said) + "。")
    text = "Today " + "; ".join(said) + "."
    return Outcome(text)


def _past(what: str) -> str:
    """ "take your pills" → "taken your pills" (what was said back to them)."""
    return re.sub(r"^take\b", "taken", what)


_SECONDS = {"type": "integer", "minimum": 1, "maximum": 7 * 86400}
_OBJ: dict[str, Any] = {"type": "object"}
SKILLS = [
    Skill(
        "set_timer",
        "Start a timer (named or not; several can run); it rings on the user's devices.",
        {"type": "object", "properties": {"duration_s": _SECONDS, "name": {"type": "string"}}},
        set_timer,
    ),
    Skill("timer_left", "Say how long is left on each running timer.", _OBJ, timer_left),
    Skill(
        "cancel_timer",
        "Cancel a timer by its name (asks which when several run).",
        {"type": "object", "properties": {"words": {"type": "string"}}},
        cancel_timer,
    ),
    Skill(
        "medication_taken",
        "Say whether the user confirmed their medicine today (records).",
        _OBJ,
        medication_taken,
    ),
]
