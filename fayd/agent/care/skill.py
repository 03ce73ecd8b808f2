"""Emergencies and preferences about being left in peace.

An emergency never waits for the LLM: a fixed, calm reassurance in the user's language; an
alert to every device and to the household's alert topic, sent before anything is said; a
question to learn more; the exchange remembered with importance 10. Quiet hours ("don't talk
to me after ten at night") are kept for the reminders' scheduler and as a rule in memory."""

from __future__ import annotations

import asyncio
import secrets
from datetime import date, time
from typing import Any

from fayd.agent.care.after_emergency import expect_answer
from fayd.agent.language.phrases import ELDER, ELDER_CALLED
from fayd.agent.ports import CareDays
from fayd.agent.prefs import QuietHours
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.protocol import Action, Alert

#: Said at once, before any model runs (English, Chinese); the alert goes out first. What is
#: said of help is only what is true: a caregiver is being told (a care rule watches this
#: person's calls for help, fayd.care), or no one is set up to be called.
TOLD = (
    "I'm here with you. I'm letting your family know right now.",
    "我在这里陪着你。我马上通知你的家人。",
)
ALONE = (
    "I'm here with you. I've raised the alarm, but I have no one to call for you yet, "
    "so if you can, phone for help.",
    "我在这里陪着你。我已经发出警报，但还没有设置可以联系的人。如果可以，请打电话求助。",
)
ADVICE = {
    "fall": (
        "Try not to get up too quickly. Are you hurt anywhere?",
        "先别急着起来。你哪里受伤了吗？",
    ),
    "chest_pain": (
        "Sit down and rest, and keep still. Is the pain getting worse?",
        "先坐下休息，别乱动。疼得越来越厉害吗？",
    ),
    "breathing": (
        "Sit upright and try to breathe slowly. Can you speak to me?",
        "坐直，慢慢呼吸。你还能说话吗？",
    ),
    "stroke": (
        "Stay where you are and keep still. Can you tell me what you're feeling?",
        "待在原地别动。你能告诉我你感觉怎么样吗？",
    ),
    "bleeding": (
        "Press firmly on the wound with a clean cloth. Where are you bleeding?",
        "用干净的布用力按住伤口。哪里在流血？",
    ),
    "burn": (
        "Hold the burn under cool running water, and keep it there. Is it a big burn?",
        "马上用流动的凉水冲烫伤的地方，一直冲着。烫得大吗？",
    ),
    "fire": (
        "Get out of the house now if you can, and close the door behind you. Don't stop for"
        " anything.",
        "如果能走，马上离开房子，把门带上。什么东西都别拿。",
    ),
    "gas": (
        "Don't touch any switches or flames. Open the doors and windows if you can, and go"
        " outside before you phone anyone.",
        "别碰任何开关，也别点火。能的话打开门窗，然后到外面去。",
    ),
    "medicine": (
        "Don't take any more today. Keep the packets by you, so you can say what you took."
        " How are you feeling?",
        "今天别再吃药了。把药盒放在身边，好说清楚吃了什么。你现在感觉怎么样？",
    ),
    "help": ("Can you tell me what's happened?", "能告诉我发生了什么吗？"),
}
CALM = Action("care.emergency", "comfort", "calm", 0.6, 100)


async def emergency(args: dict[str, Any], ctx: Context) -> Outcome:
    kind = args.get("kind") if args.get("kind") in ADVICE else "help"
    alert = Alert(
        id=f"a-{int(ctx.now.timestamp())}-{secrets.token_hex(2)}",
        kind="emergency",
        severity="critical",
        text=str(args.get("said") or kind),
        at=ctx.now.timestamp(),
        user=ctx.user,
        device=ctx.device,
        detail={"emergency": kind},
    )
    told = ctx.devices.raise_alert(alert)
    if ctx.expect is not None:  # an older question ("Shall I remind you?") is over now:
        ctx.expect.drop(ctx.user)  # "好点了" after the alarm is no yes to it
    zh = ctx.lang == "zh"
    said = (TOLD if told else ALONE)[zh] + ("" if zh else " ") + ADVICE[kind][zh]
    expect_answer(ctx, alert.id, kind, told)  # what they say next is read in code
    return Outcome(said, importance=10, action=CALM, detail={"alert": alert.id, "kind": kind})


async def quiet_hours(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    start, end = args.get("start"), args.get("end")
    if not isinstance(start, time) or not isinstance(end, time):
        start = time.fromisoformat(str(start or "22:00"))
        end = time.fromisoformat(str(end or "07:00"))
    await ctx.prefs.set_quiet_hours(ctx.user, QuietHours(start, end))
    begin, finish = words.clock(start, ctx.lang), words.clock(end, ctx.lang)
    rule = f"{ctx.user} does not want fayd to start talking between {start:%H:%M} and {end:%H:%M}."
    if ctx.memory is not None:
        await asyncio.to_thread(
            ctx.memory.remember, rule, ctx.user, "rule", "voice", True, ["domain:preferences"]
        )
    if zh:
        return Outcome(f"好的。从{begin}到{finish}，我不会主动跟你说话。")
    return Outcome(f"All right. I won't start talking to you between {begin} and {finish}.")


#: What a caregiver calls someone → the household names it may be kept under (its words
#: in letters: a household name is one).
PEOPLE = {kin: tuple(w for w in words if w.isascii()) for kin, words in ELDER.items()}


def household_names(word: str) -> list[str]:
    """The household names a caregiver's word may stand for: "mum" → mum, mom, mother …"""
    kin = ELDER_CALLED.get(word)
    return list(dict.fromkeys([word, *(PEOPLE[kin] if kin else ())]))


async def people_meant(word: str, ctx: Context) -> list[str]:
    """The household names ``word`` may stand for, in the order tried: the word, its kin
    variants, and — said by a caregiver of one person ("Mum", 妈妈) — that person, kept
    under her own name ("margaret")."""
    names = household_names(word)
    if word in ELDER_CALLED and ctx.days is not None and ctx.vouched:
        looked_after = await ctx.days.looked_after(ctx.user)
        # Kept under a name of her own ("margaret"), not under a kin word that means someone
        # else ("mum" is no "grandma"). The digest said back names her, so nothing is hidden.
        if len(looked_after) == 1 and looked_after[0].casefold() not in ELDER_CALLED:
            names.append(looked_after[0])
    return list(dict.fromkeys(names))


async def told_day(
    days: CareDays, name: str, day: date, asker: str, vouched: bool, zh: bool
) -> Outcome | None:
    """``name``'s digest (None: no household member is called that), told only to them or,
    on a turn that carries the asker's own authority, to someone who looks after them;
    anyone else hears a polite refusal (docs/security.md, *Who is who*)."""
    text = await days.about(name, day)
    if text is None:
        return None
    if name != asker and not (vouched and await days.watches(asker, name)):
        shown = name[:1].upper() + name[1:]
        said = (
            f"抱歉，{name}的情况我只能告诉本人和照顾的家人。"
            if zh
            else f"I'm sorry, I can only talk about {shown}'s day with {shown} and the"
            " family who look after them."
        )
        return Outcome(said, detail={"refused": "digest", "of": name})
    return Outcome(text, detail={"digest": name, "day": day.isoformat()})


async def day_digest(args: dict[str, Any], ctx: Context) -> Outcome:
    """ "How was Mum today?": the care digest of that person's day, as the caregivers get it
    (docs/care.md), to them and to her; nothing invented when there is no such person."""
    zh = ctx.lang == "zh"
    who = str(args.get("who") or "").strip().lower()
    day = date.fromisoformat(str(args.get("day") or ctx.now.date().isoformat()))
    if ctx.days is None:
        return Outcome(
            "我现在还不能讲家人的一天。" if zh else "I can't tell about someone's day yet."
        )
    for name in await people_meant(who, ctx):
        told = await told_day(ctx.days, name, day, ctx.user, ctx.vouched, zh)
        if told is not None:
            return told
    if zh:
        return Outcome(f"我这里没有叫{who}的家人的记录。")
    return Outcome(f"I have no one called {who} in my records, so I can't say how their day was.")


_HHMM = {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}
SKILLS = [
    Skill(
        "emergency",
        "Someone needs help now: reassure them, raise an alert to every device and the household.",
        {
            "type": "object",
            "properties": {
                "kind": {"enum": sorted(ADVICE)},
                "said": {"type": "string", "maxLength": 1000},
            },
        },
        emergency,
    ),
    Skill(
        "quiet_hours",
        "Keep quiet (start no talk) between two times of day, every day.",
        {"type": "object", "properties": {"start": _HHMM, "end": _HHMM}},
        quiet_hours,
    ),
    Skill(
        "day_digest",
        "How a household member's day went (activity, readings, alerts, medication, mood), "
        "as the caregivers' daily digest says it.",
        {
            "type": "object",
            "properties": {
                "who": {"type": "string", "minLength": 1, "maxLength": 64},
                "day": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            },
            "required": ["who"],
        },
        day_digest,
    ),
]
