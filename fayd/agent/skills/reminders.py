"""Reminders, timers and medication check-ins as skills (docs/reminders.md): set (read back
with the absolute time: "…on Sunday 6 December at 17:00"), list and "what's on today",
cancel (several matches: asks which), snooze; timers (named, several, "how long is left",
cancel); "did I take my medicine today?" from the check-ins' records. A time that passed, a
date no calendar has or a rule that never comes round gets a clear answer, nothing kept."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from fayd.agent.skills import words
from fayd.agent.skills.memory import recall
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.agent.understand.times import Recurrence, When
from fayd.reminders import BadReminder, Rule
from fayd.reminders.book import content_words

_MEDICATION = re.compile(
    r"\b(pills?|tablets?|medicines?|medication|meds|insulin|inhaler|eye ?drops|capsules?|"
    r"prescription|dose)\b|药"
)
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
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        strict=True,
    )
)


def _rule(r: Recurrence) -> Rule:
    return Rule(r.every, at=r.at, days=r.days, hours=r.hours, between=r.between)


def _zh(ctx: Context) -> bool:
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


async def set_reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = _zh(ctx)
    book = ctx.reminders
    said = str(args.get("what") or "").strip()
    what = said if zh else words.turned_round(said)
    when = args.get("when") or args.get("recurrence")
    if not isinstance(when, When | Recurrence):
        return Outcome("什么时候提醒你？" if zh else "When should I remind you?")
    if book is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    kind = "medication" if _MEDICATION.search(said.lower()) else "reminder"
    try:
        if isinstance(when, When):
            row = await book.add(
                ctx.user,
                what,
                at=when.at,
                kind=kind,
                lang=ctx.lang,
                source=str(args.get("said") or said),
                device=ctx.device,
            )
        else:
            row = await book.add(
                ctx.user,
                what,
                rule=_rule(when),
                kind=kind,
                lang=ctx.lang,
                source=str(args.get("said") or said),
                device=ctx.device,
            )
    except BadReminder as exc:
        return Outcome(_refusal(str(exc), zh), detail={"refused": str(exc)})
    detail = {"reminder": row["id"], "kind": kind}
    first = datetime.fromtimestamp(row["next_at"], ctx.tz)
    if isinstance(when, When):
        at = when_said(first, ctx.now, ctx.lang)
        if zh:
            return Outcome(f"好的，我会在{at}提醒你{what}。", detail=detail)
        return Outcome(f"I'll remind you to {what} {at}.", detail=detail)
    every = every_said(_rule(when), ctx.lang)
    start = when_said(first, ctx.now, ctx.lang)
    if zh:
        return Outcome(f"好的，我会{every}提醒你{what}，第一次是{start}。", detail=detail)
    return Outcome(f"I'll remind you to {what} {every}, starting {start}.", detail=detail)


def _refusal(reason: str, zh: bool) -> str:
    """BadReminder's "field: words" as a sentence for the person."""
    words_ = reason.split(": ", 1)[-1]
    if zh:
        return {"that time has already passed": "那个时间已经过去了，我没有设置提醒。"}.get(
            words_, f"这个提醒我设不了：{words_}。"
        )
    return f"I can't set that reminder: {words_}."


async def set_timer(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = _zh(ctx)
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
        return Outcome(_refusal(str(exc), zh))
    length = words.duration(int(seconds), ctx.lang)
    if zh:
        return Outcome(f"好的，{name}计时{length}，{ends:%H:%M}到。", detail={"timer": row["id"]})
    label = f"The {name} timer" if name else "A timer"
    return Outcome(f"{label} is set for {length}, until {ends:%H:%M}.", detail={"timer": row["id"]})


async def list_reminders(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = _zh(ctx)
    if ctx.reminders is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    today = bool(args.get("today"))
    rows = await (ctx.reminders.today(ctx.user) if today else ctx.reminders.list(ctx.user))
    rows = [r for r in rows if r["kind"] != "timer"]
    if not rows:
        if zh:
            return Outcome("今天没有别的提醒了。" if today else "你现在没有提醒。")
        return Outcome("Nothing more for today." if today else "You have no reminders.")
    items = [_today(r, ctx) if today else describe(r, ctx) for r in rows[:8]]
    more = len(rows) - len(items)
    if zh:
        return Outcome(("今天：" if today else "你的提醒：") + "；".join(items) + "。")
    head = "Today: " if today else f"You have {len(rows)} reminder{'s' if len(rows) > 1 else ''}: "
    tail = f", and {more} more" if more > 0 else ""
    return Outcome(head + "; ".join(items) + tail + ".")


def _today(row: dict[str, Any], ctx: Context) -> str:
    """One of today's reminders: "at 17:00, call your son"."""
    at = datetime.fromtimestamp(row["next_at"], ctx.tz)
    return f"{at:%H:%M}，{row['text']}" if _zh(ctx) else f"at {at:%H:%M}, {row['text']}"


async def cancel_reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    return await _cancel(args, ctx, kind=None)


async def cancel_timer(args: dict[str, Any], ctx: Context) -> Outcome:
    return await _cancel(args, ctx, kind="timer")


async def _cancel(args: dict[str, Any], ctx: Context, kind: str | None) -> Outcome:
    zh = _zh(ctx)
    book = ctx.reminders
    if book is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    said = str(args.get("words") or "")
    rows = await book.find(ctx.user, said, kind)
    if kind is None:
        rows = [r for r in rows if r["kind"] != "timer"]
    thing = "timer" if kind == "timer" else "reminder"
    if not rows:
        return Outcome("我没找到这个提醒。" if zh else f"I couldn't find that {thing}.")
    if len(rows) == 1:
        await book.cancel(rows[0]["id"])
        if zh:
            return Outcome(f"好的，取消了：{describe(rows[0], ctx)}。")
        return Outcome(f"All right, I've cancelled it: {describe(rows[0], ctx)}.")
    choices = rows[:4]
    return _ask_which(choices, ctx, thing)


# Ordinals before bare numbers: "the second one" is the second.
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3,
             "4th": 3, "last": -1, "one": 0, "two": 1, "three": 2, "four": 3}  # fmt: skip
_ZH_ORDINALS = {"第一": 0, "第二": 1, "第三": 2, "第四": 3, "最后": -1}


def _ask_which(choices: list[dict[str, Any]], ctx: Context, thing: str) -> Outcome:
    zh = _zh(ctx)
    said = [describe(r, ctx) for r in choices]
    book, expectations = ctx.reminders, ctx.expect

    def read(text: str) -> int | None:
        low = text.lower()
        if re.search(r"\b(all|both|every one|all of them)\b|全部|都", low):
            return -2
        for word, index in (_ZH_ORDINALS if zh else _ORDINALS).items():
            if re.search(rf"\b{word}\b" if not zh else word, low):
                return index if index >= 0 else len(choices) - 1
        hits = [
            i
            for i, r in enumerate(choices)
            if content_words(low) & content_words(r["text"] + " " + r["name"])
        ]
        return hits[0] if len(hits) == 1 else None

    async def then(index: int) -> str:
        chosen = choices if index == -2 else [choices[index]]
        for row in chosen:
            await book.cancel(row["id"])
        listed = "; ".join(describe(r, ctx) for r in chosen)
        return f"好的，取消了：{listed}。" if zh else f"All right, I've cancelled it: {listed}."

    if expectations is not None:
        expectations.expect(ctx.user, read, then, 120.0)
    if zh:
        return Outcome(
            "取消哪一个？" + "；".join(f"第{i + 1}个，{s}" for i, s in enumerate(said)) + "。"
        )
    numbered = [
        f"{('the first', 'the second', 'the third', 'the fourth')[i]}, {s}"
        for i, s in enumerate(said)
    ]
    return Outcome(f"Which {thing}: " + "; or ".join(numbered) + "?", detail={"asked": "which"})


async def snooze_reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = _zh(ctx)
    book = ctx.reminders
    if book is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    row = await book.last_fired(ctx.user)
    if row is None:
        return Outcome("没有刚响过的提醒。" if zh else "There's no reminder to put off just now.")
    seconds = int(args.get("duration_s") or 600)
    until = await book.snooze(row["id"], seconds)
    if until is None:
        return Outcome("我没找到这个提醒。" if zh else "I couldn't find that reminder.")
    at = until.astimezone(ctx.tz)
    length = words.duration(seconds, ctx.lang)
    if zh:
        return Outcome(f"好的，{length}后（{at:%H:%M}）再提醒你。")
    return Outcome(f"All right, I'll remind you again in {length}, at {at:%H:%M}.")


async def timer_left(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = _zh(ctx)
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
    zh = _zh(ctx)
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
        "set_reminder",
        "Keep a reminder (one-off or recurring) and say it at its time on the user's devices.",
        {"type": "object", "properties": {"what": {"type": "string", "maxLength": 500}}},
        set_reminder,
    ),
    Skill(
        "set_timer",
        "Start a timer (named or not; several can run); it rings on the user's devices.",
        {"type": "object", "properties": {"duration_s": _SECONDS, "name": {"type": "string"}}},
        set_timer,
    ),
    Skill(
        "list_reminders",
        "Say the user's reminders (or what is left today).",
        {"type": "object", "properties": {"today": {"type": "boolean"}}},
        list_reminders,
    ),
    Skill(
        "cancel_reminder",
        "Cancel a reminder by its words (asks which when several match).",
        {"type": "object", "properties": {"words": {"type": "string"}}},
        cancel_reminder,
    ),
    Skill(
        "snooze_reminder",
        "Say the last reminder again later (10 minutes unless said).",
        {"type": "object", "properties": {"duration_s": _SECONDS}},
        snooze_reminder,
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
