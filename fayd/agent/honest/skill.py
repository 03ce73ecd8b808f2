"""Questions the model cannot know the answer to (fayd/agent/honest/gate.py), answered
from fayd's records or declined honestly with a next step — never a number, a dose or a
fact that is not in the records:

- ``last_reading``: the person's newest stored reading of that kind, with when it was taken
  ("Your last blood pressure reading was 152 over 96, this morning at 8:10."); none is said
  so, with how to take one;
- ``no_advice``: doses, medicines and medical advice are the packet's, the pharmacist's or
  the doctor's to say; fayd offers a reminder to ask them (kept only on "yes");
- ``own_past``: the person's past from what they told fayd (the ``recall`` skill), else "You
  haven't told me that"."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from fayd.agent.care.answers import yes_no
from fayd.agent.care.skill import people_meant
from fayd.agent.clock.times import WEEKDAYS
from fayd.agent.language.phrases import SAY_HELP
from fayd.agent.ports import Reading
from fayd.agent.recall.skill import recall
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill

#: What each reading is called, and what takes one (EN, ZH).
KINDS = {
    "bp": ("blood pressure", "the cuff", "血压", "血压计"),
    "spo2": ("oxygen", "the finger clip", "血氧", "血氧仪"),
    "glucose": ("blood sugar", "your meter", "血糖", "血糖仪"),
    "weight": ("weight", "the scales", "体重", "体重秤"),
    "temperature": ("temperature", "the thermometer", "体温", "体温计"),
    "heart_rate": ("pulse", "the monitor", "心率", "心率计"),
}
#: The sensors each kind of reading may come from (fayd/care; a scale or a meter of the
#: household may use either name).
SENSORS = {
    "bp": ("bp",),
    "spo2": ("spo2",),
    "glucose": ("glucose", "blood_glucose", "sugar"),
    "weight": ("weight", "scale"),
    "temperature": ("temperature",),
    "heart_rate": ("heart_rate", "pulse"),
}
#: How long "Shall I remind you to ask them?" waits for its yes.
ASK_TTL_S = 120.0
ASK_AT = time(10, 0)  # the reminder to ask: the next morning at ten, read back


# --- readings -----------------------------------------------------------------------------
async def last_reading(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    kind = str(args.get("reading") or "bp")
    kind = kind if kind in KINDS else "bp"
    name_en, device_en, name_zh, device_zh = KINDS[kind]
    person, shown = await _whose(str(args.get("who") or ""), ctx)
    if person is None:
        if zh:
            return Outcome(f"抱歉，{shown}的记录我只能告诉本人和照顾的家人。")
        return Outcome(
            f"I'm sorry, I can only talk about {shown}'s readings with {shown} and the family"
            " who look after them.",
            detail={"refused": "reading"},
        )
    yours = person == ctx.user
    if ctx.readings is None:
        return Outcome("我这里没有测量记录。" if zh else "I have no readings to go by.")
    after, before, day_said = _window(str(args.get("day") or ""), ctx)
    if args.get("compare") and day_said in WEEKDAYS:  # "is that higher than Monday's?"
        return await _both(kind, person, shown, (after, before), ctx)
    found = await ctx.readings.latest(person, SENSORS[kind], after, before)
    earlier = None
    if found is None and day_said:
        earlier = await ctx.readings.latest(person, SENSORS[kind], 0.0, after)
    detail: dict[str, Any] = {"reading": kind, "of": person, "found": found is not None}
    if found is None and earlier is None:
        if zh:
            who = "你" if yours else shown
            return Outcome(
                f"我这里没有{who}的{name_zh}记录。用{device_zh}量一次，我就记下来。", detail=detail
            )
        whom = "you" if yours else shown
        they = words.pronouns(shown)[1]
        takes = f"{they} take" if they == "they" else f"{they} takes"
        return Outcome(
            f"I have no {name_en} reading for {whom}. If {'you take' if yours else takes}"
            f" one with {device_en}, I'll keep it.",
            detail=detail,
        )
    said = _said(found or earlier, kind, ctx, zh)  # type: ignore[arg-type]
    whose = ("你" if yours else shown) if zh else ("Your" if yours else f"{shown}'s")
    if found is not None:
        text = (
            f"{whose}最近一次{name_zh}是{said}。"
            if zh
            else f"{whose} last {name_en} reading was {said}."
        )
    else:
        day_en = day_said.title() if day_said in WEEKDAYS else day_said
        text = (
            f"{_day_zh(day_said)}没有{name_zh}记录。最近一次是{said}。"
            if zh
            else f"I have no {name_en} reading from {day_en}. The last one was {said}."
        )
    if args.get("judge"):
        text += (
            "这样好不好，要问护士或医生。"
            if zh
            else " Whether that's all right for you is for your nurse or doctor to say."
        )
    return Outcome(text, detail=detail)


def _day_zh(day: str) -> str:
    if day in WEEKDAYS:
        return words.weekday_zh(WEEKDAYS.index(day))
    return "昨天" if day == "yesterday" else "今天"


async def _both(
    kind: str, person: str, shown: str, window: tuple[float, float | None], ctx: Context
) -> Outcome:
    """The newest reading and the one of the weekday asked about, side by side: the
    numbers are the records'; which is better is not fayd's to say."""
    zh, yours = ctx.lang == "zh", person == ctx.user
    name_en, _, name_zh, _ = KINDS[kind]
    assert ctx.readings is not None
    last = await ctx.readings.latest(person, SENSORS[kind], 0.0, None)
    then = await ctx.readings.latest(person, SENSORS[kind], *window)
    detail: dict[str, Any] = {"reading": kind, "of": person, "found": last is not None}
    whose = ("你" if yours else shown) if zh else ("Your" if yours else f"{shown}'s")
    day = datetime.fromtimestamp(window[0], ctx.tz)
    if last is None:
        if zh:
            return Outcome(f"我这里没有{whose}的{name_zh}记录。", detail=detail)
        return Outcome(f"I have no {name_en} reading for {whose.lower()}.", detail=detail)
    now_said = _said(last, kind, ctx, zh)
    if then is None or then == last:
        if zh:
            return Outcome(
                f"{whose}最近一次{name_zh}是{now_said}。{day.month}月{day.day}日没有记录。",
                detail=detail,
            )
        return Outcome(
            f"{whose} last {name_en} reading was {now_said}. I have none from {day:%A}"
            f" {day.day} {day:%B}.",
            detail=detail,
        )
    then_said = _said(then, kind, ctx, zh)
    if zh:
        weekday = words.weekday_zh(day.weekday())
        return Outcome(
            f"{whose}最近一次{name_zh}是{now_said}；{weekday}那次是{then_said}。", detail=detail
        )
    return Outcome(
        f"{whose} last {name_en} reading was {now_said}. The one from {day:%A} was {then_said}.",
        detail=detail,
    )


async def _whose(who: str, ctx: Context) -> tuple[str | None, str]:
    """(the household member whose readings are asked for, or None when the asker may not
    hear them; the name as said back). Someone else's only to a caregiver who looks after
    them, on a turn that carries the caregiver's own authority (docs/security.md)."""
    if not who or who in ("my", "me", "i", "我"):
        return ctx.user, ctx.user
    shown = who if any("\u3400" <= c <= "\u9fff" for c in who) else who[:1].upper() + who[1:]
    for name in await people_meant(who.lower(), ctx):
        if name == ctx.user:
            return name, shown
        if ctx.vouched and ctx.days is not None and await ctx.days.watches(ctx.user, name):
            return name, shown
    return None, shown


def _window(day: str, ctx: Context) -> tuple[float, float | None, str]:
    """[after, before) of the day asked about (none: any time), and the day's word; a
    weekday is the last one before today ("Monday's", said on a Monday: a week ago)."""
    if day in WEEKDAYS:
        back = (ctx.now.weekday() - WEEKDAYS.index(day)) % 7 or 7
    elif day in ("today", "yesterday"):
        back = 1 if day == "yesterday" else 0
    else:
        return 0.0, None, ""
    start = datetime.combine(ctx.now.date() - timedelta(days=back), time(), ctx.tz)
    end = start + timedelta(days=1)
    return start.timestamp(), end.timestamp(), day


def _number(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _said(found: Reading, kind: str, ctx: Context, zh: bool) -> str:
    """ "152 over 96, this morning at 8:10" (its values as stored, when it was taken)."""
    v = found.values
    if kind == "bp":
        value = (
            f"{_number(v['sys'])}/{_number(v['dia'])}"
            if zh
            else (f"{_number(v['sys'])} over {_number(v['dia'])}")
        )
    else:
        n = _number(next(iter(v.values())))
        value = {
            "spo2": (f"{n}%", f"{n} percent"),
            "heart_rate": (f"每分钟{n}次", f"{n} beats a minute"),
            "temperature": (f"{n}度", f"{n} degrees"),
        }.get(kind, (n, n))[0 if zh else 1]
    at = datetime.fromtimestamp(found.at, ctx.tz)
    return f"{value}，{_when_zh(at, ctx.now.date())}量的" if zh else f"{value}, {_when(at, ctx)}"


def _when(at: datetime, ctx: Context) -> str:
    """ "this morning at 8:10", "yesterday evening at 18:00", "on Monday 30 November at 9:05"."""
    clock_said = f"{at.hour}:{at.minute:02d}"
    part = words.part_of_day(at.hour).removeprefix("in the ").removeprefix("at ")
    days = (ctx.now.date() - at.date()).days
    if days == 0:
        return f"{'tonight' if part == 'night' else 'this ' + part} at {clock_said}"
    if days == 1:
        return f"{'last night' if part == 'night' else 'yesterday ' + part} at {clock_said}"
    return f"on {at:%A} {at.day} {at:%B} at {clock_said}"


def _when_zh(at: datetime, today: date) -> str:
    days = (today - at.date()).days
    day = "今天" if days == 0 else "昨天" if days == 1 else f"{at.month}月{at.day}日"
    return f"{day}{at.hour}:{at.minute:02d}"


# --- advice -------------------------------------------------------------------------------
DECLINE = {
    "dose": (
        "I can't advise on doses: the packet or your pharmacist can tell you.",
        "药该吃多少我不能给建议：看看药盒上的说明，或者问问药剂师。",
    ),
    "medicine": (
        "I can't advise on medicines: your pharmacist or doctor can tell you.",
        "用药的事我不能给建议：可以问问药剂师或医生。",
    ),
    "health": (
        "I can't judge that for you: your doctor or nurse can. If it's urgent, " + SAY_HELP["en"],
        "这个我判断不了，要问医生或护士。如果情况紧急，" + SAY_HELP["zh"],
    ),
}
OFFER = ("Shall I remind you to ask them?", "要我提醒你去问问吗？")
ASK_WHAT = {
    "dose": ("ask the pharmacist about your dose", "问药剂师药量的事"),
    "medicine": ("ask the pharmacist about your medicine", "问药剂师用药的事"),
    "health": ("ask your doctor about it", "问医生这件事"),
}


async def no_advice(args: dict[str, Any], ctx: Context) -> Outcome:
    """Never a number or a judgement: who can say, and a reminder to ask them, kept only on
    "yes" (and offered only when nothing else awaits an answer from the person)."""
    zh = ctx.lang == "zh"
    about = str(args.get("about") or "medicine")
    about = about if about in DECLINE else "medicine"
    said = DECLINE[about][zh]
    detail: dict[str, Any] = {"declined": about}
    expect = ctx.expect
    offer = ctx.reminders is not None and expect is not None and not expect.is_open(ctx.user)
    if about == "health" or not offer:
        return Outcome(said, detail=detail)

    async def answered(value: str) -> str:
        if value != "yes":
            return "好的。" if zh else "All right."
        return await _remind_to_ask(ASK_WHAT[about][zh], ctx)

    expect.expect(ctx.user, yes_no, answered, ttl_s=ASK_TTL_S)
    detail["offered"] = "reminder"
    return Outcome(said + ("" if zh else " ") + OFFER[zh], detail=detail)


async def _remind_to_ask(what: str, ctx: Context) -> str:
    """The reminder kept (tomorrow at ten, read back), or why not."""
    zh = ctx.lang == "zh"
    book = ctx.reminders
    assert book is not None
    at = datetime.combine(ctx.now.date() + timedelta(days=1), ASK_AT, ctx.tz)
    try:
        await book.add(ctx.user, what, at=at, lang=ctx.lang, source="no_advice", device=ctx.device)
    except Exception:  # a reminder the book refused is said, not claimed
        return "对不起，这个提醒我没设上。" if zh else "I'm sorry, I couldn't set that reminder."
    if zh:
        return f"好的，我明天上午十点提醒你{what}。"
    return f"I'll remind you to {what} tomorrow at 10:00 in the morning."


# --- the person's past --------------------------------------------------------------------
NOT_TOLD = (
    "You haven't told me that. Would you like to tell me?",
    "这个你还没告诉过我。你愿意跟我说说吗？",
)


async def own_past(args: dict[str, Any], ctx: Context) -> Outcome:
    """From the person's facts and their own earlier words (``recall``), never guessed."""
    zh = ctx.lang == "zh"
    query = str(args.get("query") or "").strip()
    if ctx.memory is not None and query:
        told = await recall({"query": query}, ctx)
        if told.detail.get("from") or (told.say.startswith(("Your ", "你的", "你叫"))):
            return told
    return Outcome(NOT_TOLD[zh], detail={"from": None})


SKILLS = [
    Skill(
        "last_reading",
        "The person's newest stored reading of a kind (blood pressure, oxygen, blood sugar, "
        "weight, temperature, pulse) with when it was taken, from the care records only.",
        {
            "type": "object",
            "properties": {
                "reading": {"enum": sorted(KINDS)},
                "who": {"type": "string", "maxLength": 64},
                "day": {"enum": ["today", "yesterday", *WEEKDAYS]},
                "judge": {"type": "boolean"},
                "compare": {"type": "boolean"},
            },
        },
        last_reading,
    ),
    Skill(
        "no_advice",
        "Decline honestly to advise on doses, medicines or health, with who can, and offer a"
        " reminder to ask them.",
        {"type": "object", "properties": {"about": {"enum": sorted(DECLINE)}}},
        no_advice,
    ),
    Skill(
        "own_past",
        "Answer a question about the person's own past from what they told fayd, else say"
        " they haven't told it.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 1000}},
        },
        own_past,
    ),
]
