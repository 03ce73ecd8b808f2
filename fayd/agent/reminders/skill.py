"""Reminders as skills (docs/reminders.md): set (read back with the absolute time: "…on
Sunday 6 December at 17:00"), list and "what's on today", cancel (several matches: asks
which), snooze. A time that passed, a date no calendar has or a rule that never comes round
gets a clear answer, nothing kept. Timers and "did I take my medicine?": ``timers.py``."""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Any

from fayd.agent.care.skill import people_meant
from fayd.agent.clock.times import Rule, When
from fayd.agent.language.phrases import MEDICINE
from fayd.agent.reminders.said import (
    describe,
    every_said,
    in_chinese,
    no_task,
    task_said,
    today_line,
    when_said,
)
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.errors import FaydError
from fayd.reminders import BadReminder, ReminderBook
from fayd.reminders.book import content_words

log = logging.getLogger(__name__)
_MEDICATION = re.compile(rf"\b({MEDICINE}|inhaler|eye ?drops|prescription|dose)\b|药")


async def set_reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = in_chinese(ctx)
    book = ctx.reminders
    said = str(args.get("what") or "").strip()
    when = args.get("when") or args.get("recurrence")
    if not isinstance(when, When | Rule):
        return Outcome("什么时候提醒你？" if zh else "When should I remind you?")
    if book is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    whose, called = ctx.user, ""
    if word := str(args.get("for") or "").strip().lower():
        found = await _looked_after(word, ctx, zh)
        if isinstance(found, Outcome):
            return found
        whose, called = found
    medication = bool(_MEDICATION.search(said.lower()))
    kind = "medication" if medication else "reminder"
    if said:  # kept, said when it fires / read back after "I'll remind you"
        told = said if zh else words.turned_round(said)
        what, back = task_said(told, str(args.get("how") or ""), medication, zh)
    else:  # "give me a shout at 3": the time itself is the reminder
        what, back = no_task(zh), ""
    try:
        row = await book.add(
            whose,
            what,
            at=when.at if isinstance(when, When) else None,
            rule=None if isinstance(when, When) else when,
            kind=kind,
            lang=ctx.lang,
            source=str(args.get("said") or said),
            device=ctx.device if whose == ctx.user else "",
        )
    except BadReminder as exc:
        return Outcome(refusal(str(exc), zh), detail={"refused": str(exc)})
    except FaydError as exc:  # a full disk: nothing kept, and nothing said to be
        log.error("could not keep a reminder: %s", exc)
        return Outcome(_NOT_KEPT[zh], detail={"refused": "store"})
    # Read back from what was stored: only a kept reminder is promised.
    detail = {"reminder": row["id"], "kind": kind}
    first = datetime.fromtimestamp(row["next_at"], ctx.tz)
    start = when_said(first, ctx.now, ctx.lang)
    if called:
        return Outcome(_for_them(called, what, back, start, when, ctx.lang), detail=detail)
    if isinstance(when, When):
        if zh:
            doing = f"提醒你{what}" if said else "叫你"
            return Outcome(f"好的，我会在{start}{doing}。", detail=detail)
        if not said:
            return Outcome(f"I'll let you know {start}.", detail=detail)
        return Outcome(f"I'll remind you {back} {start}.", detail=detail)
    every = every_said(when, ctx.lang)
    if zh:
        doing = f"提醒你{what}" if said else "叫你"
        return Outcome(f"好的，我会{every}{doing}，第一次是{start}。", detail=detail)
    if not said:
        return Outcome(f"I'll let you know {every}, starting {start}.", detail=detail)
    return Outcome(f"I'll remind you {back} {every}, starting {start}.", detail=detail)


async def _looked_after(word: str, ctx: Context, zh: bool) -> tuple[str, str] | Outcome:
    """Whom "remind Mum to …" is for, and how to name them ("Mum"); or why not: only on the
    speaker's own device, and only for someone they look after (docs/security.md)."""
    called = word if zh else word[:1].upper() + word[1:]
    if ctx.days is None:
        return Outcome("我只能给你自己设提醒。" if zh else "I can only keep reminders for you.")
    for name in await people_meant(word, ctx):
        person = await ctx.days.person(name)
        if person is None:
            continue
        if person.casefold() == ctx.user.casefold():
            return ctx.user, ""
        if not ctx.vouched:
            if zh:
                return Outcome("给别人设提醒只能在你自己的设备上：共用的设备上我分不清是谁在说话。")
            return Outcome(
                f"I can only set a reminder for {called} from your own device: on a shared "
                "one, I can't be sure who is speaking."
            )
        if await ctx.days.watches(ctx.user, person):
            return person, called
        if zh:
            return Outcome(f"抱歉，你不在照顾{called}的家人名单上，所以我不能给{called}设提醒。")
        return Outcome(
            f"I'm sorry, you aren't down as one of the people who look after {called}, so I "
            f"can't set a reminder for them."
        )
    if zh:
        return Outcome(f"我这里没有叫{called}的家人，所以没法给他们设提醒。")
    return Outcome(f"I have no one called {called} in the household to remind.")


def _for_them(called: str, what: str, back: str, start: str, when: Any, lang: str) -> str:
    """The read-back of a reminder kept for someone else: "I'll remind Mum to drink some
    water today at 15:00." (said to her as "drink some water")."""
    if lang == "zh":
        every = "" if isinstance(when, When) else every_said(when, lang)
        return f"好的，我会{every or start}提醒{called}{what}。"
    task = back or f"about {what}"
    him, _, his = words.pronouns(called)
    task = re.sub(r"\byou\b", him, re.sub(r"\byour\b", his, task))
    if isinstance(when, When):
        return f"I'll remind {called} {task} {start}."
    return f"I'll remind {called} {task} {every_said(when, lang)}, starting {start}."


#: Said when the reminder could not be written down (a full disk): never "I'll remind you".
_NOT_KEPT = {
    False: "Sorry, I couldn't keep that reminder: something went wrong with my storage.",
    True: "对不起，这个提醒我没能记下来，存储出了问题。",
}


def refusal(reason: str, zh: bool) -> str:
    """BadReminder's "field: words" as a sentence for the person."""
    words_ = reason.split(": ", 1)[-1]
    if zh:
        return {"that time has already passed": "那个时间已经过去了，我没有设置提醒。"}.get(
            words_, f"这个提醒我设不了：{words_}。"
        )
    return f"I can't set that reminder: {words_}."


#: What is said with no reminders, and before the list: (English, Chinese) by day asked.
_NONE = {
    "tomorrow": ("I have nothing down for tomorrow.", "明天我这里没有提醒。"),
    "today": ("Nothing more for today.", "今天没有别的提醒了。"),
    "": ("You have no reminders.", "你现在没有提醒。"),
}
_HEAD = {"tomorrow": ("Tomorrow: ", "明天："), "today": ("Today: ", "今天：")}


async def list_reminders(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = in_chinese(ctx)
    book = ctx.reminders
    if book is None:
        return Outcome("提醒现在用不了。" if zh else "I can't keep reminders right now.")
    day = "tomorrow" if args.get("tomorrow") else "today" if args.get("today") else ""
    rows = await {"tomorrow": book.tomorrow, "today": book.today, "": book.list}[day](ctx.user)
    rows = [r for r in rows if r["kind"] != "timer"]
    if not rows:
        return Outcome(_NONE[day][zh])
    items = [today_line(r, ctx) if day else describe(r, ctx) for r in rows[:8]]
    more = len(rows) - len(items)
    if zh:
        return Outcome(_HEAD.get(day, ("", "你的提醒："))[1] + "；".join(items) + "。")
    head = _HEAD[day][0] if day else f"You have {len(rows)} reminder{'s' * (len(rows) > 1)}: "
    tail = f", and {more} more" if more > 0 else ""
    return Outcome(head + "; ".join(items) + tail + ".")


async def cancel_reminder(args: dict[str, Any], ctx: Context) -> Outcome:
    return await cancel_any(args, ctx, kind=None)


async def cancel_any(args: dict[str, Any], ctx: Context, kind: str | None) -> Outcome:
    zh = in_chinese(ctx)
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
        if not await _cancelled([rows[0]], book):  # it fired or went meanwhile
            return Outcome("我没找到这个提醒。" if zh else f"I couldn't find that {thing}.")
        if zh:
            return Outcome(f"好的，取消了：{describe(rows[0], ctx)}。")
        return Outcome(f"All right, I've cancelled it: {describe(rows[0], ctx)}.")
    choices = rows[:4]
    return _ask_which(choices, ctx, thing)


async def _cancelled(rows: list[dict[str, Any]], book: ReminderBook) -> list[dict[str, Any]]:
    """The rows of ``rows`` this call cancelled: only those are said to be cancelled (one
    that fired or was cancelled meanwhile is not)."""
    return [row for row in rows if await book.cancel(row["id"])]


# Ordinals before bare numbers: "the second one" is the second.
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3,
             "4th": 3, "last": -1, "one": 0, "two": 1, "three": 2, "four": 3}  # fmt: skip
_ZH_ORDINALS = {"第一": 0, "第二": 1, "第三": 2, "第四": 3, "最后": -1}


def _ask_which(choices: list[dict[str, Any]], ctx: Context, thing: str) -> Outcome:
    zh = in_chinese(ctx)
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
        chosen = await _cancelled(choices if index == -2 else [choices[index]], book)
        if not chosen:
            return "我没找到这个提醒。" if zh else f"I couldn't find that {thing} any more."
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
    zh = in_chinese(ctx)
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
        return Outcome(f"好的，{length}后（{at:%H:%M}）再提醒你{row['text']}。")
    # The text may be a task, a thing or a "don't": it follows the time, as it will be said.
    return Outcome(f"All right, I'll remind you again in {length}, at {at:%H:%M}: {row['text']}.")


_SECONDS = {"type": "integer", "minimum": 1, "maximum": 7 * 86400}
SKILLS = [
    Skill(
        "set_reminder",
        "Keep a reminder (one-off or recurring) and say it at its time on the user's devices.",
        {
            "type": "object",
            "properties": {
                "what": {"type": "string", "maxLength": 500},
                "for": {"type": "string", "maxLength": 64},
            },
        },
        set_reminder,
    ),
    Skill(
        "list_reminders",
        "Say the user's reminders (or what is left today).",
        {
            "type": "object",
            "properties": {"today": {"type": "boolean"}, "tomorrow": {"type": "boolean"}},
        },
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
]
