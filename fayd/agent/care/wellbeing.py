"""Feeling unwell, said without an emergency ("I feel a bit dizzy", 我有点头晕): a kind
answer in the person's language with the offer of help, never a diagnosis or a word about
medicine; what they said kept as a care event (sensor ``wellbeing``) the care rules, the
daily digest and ``fayd today`` see; and their answer to "Would you like me to let your
family know?" read in code (fayd.agent.expect): yes queues a notice to the caregivers who
look after them (a notice, not an alarm). With no one to tell, nothing is offered: the
person hears how to raise the alarm instead."""

from __future__ import annotations

import logging
import re
from typing import Any

from fayd.agent.care.answers import eased, wellbeing, yes_no
from fayd.agent.care.symptoms import KINDS, asks_cause
from fayd.agent.language.phrases import SAY_HELP
from fayd.agent.skills.registry import Context, Outcome, Skill

log = logging.getLogger(__name__)

#: What is said first, by kind (English, Chinese): sorry, and what keeps them safe now.
KIND_WORDS: dict[str, tuple[str, str]] = {
    "dizzy": (
        "I'm sorry you feel dizzy. Please sit down somewhere safe until it passes.",
        "头晕可难受了。先找个安全的地方坐下来，等它过去。",
    ),
    "unsteady": (
        "I'm sorry you feel unsteady. Please sit down, and hold on to something steady when"
        " you get up.",
        "站不稳就先坐下来，起身的时候扶着点东西。",
    ),
    "funny_turn": (
        "I'm sorry you've had a turn. Please sit down somewhere safe and take it slowly.",
        "你刚才不舒服了。先找个安全的地方坐下，慢慢来。",
    ),
    "confused": (
        "I'm sorry you feel muddled. There's no hurry: sit down and rest for a moment.",
        "脑子有点乱也别着急，先坐下歇一会儿。",
    ),
    "appetite": ("I'm sorry you haven't felt like eating.", "没胃口真难受。"),
    "sleep": (
        "I'm sorry you've had a poor night. Take things gently today.",
        "没睡好真累人，今天慢慢来。",
    ),
    "pain": ("I'm sorry you're in pain. Rest it if you can.", "疼起来真难受，能歇就歇一歇。"),
    "sick": (
        "I'm sorry you feel sick. Please sit down and take it easy.",
        "恶心可难受了，先坐下歇一歇。",
    ),
    "weak": (
        "I'm sorry you feel weak. Please sit down and rest, and get up slowly.",
        "浑身没劲就先坐下歇着，起身的时候慢一点。",
    ),
    "unwell": (
        "I'm sorry you're not feeling well. Please sit down and rest.",
        "身体不舒服真难受，先坐下歇一歇。",
    ),
}
#: How the caregivers' notice and the digest say it.
WHAT = {
    "dizzy": "feeling dizzy",
    "unsteady": "feeling unsteady",
    "funny_turn": "having a funny turn",
    "confused": "feeling muddled",
    "appetite": "not feeling like eating",
    "sleep": "sleeping badly",
    "pain": "being in pain",
    "sick": "feeling sick",
    "weak": "feeling weak",
    "unwell": "feeling unwell",
}
ALARM = (
    " If you feel worse, " + SAY_HELP["en"],
    "要是更难受了，" + SAY_HELP["zh"],
)
#: How long the offer stays open for a yes or no.
OFFER_S = 300.0


def _names(names: list[str], zh: bool) -> str:
    shown = [n[:1].upper() + n[1:] for n in names]
    if zh:
        return "、".join(shown)
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _first(kind: str, where: str, zh: bool) -> str:
    if kind == "pain" and where:
        if zh:
            return f"{where}疼真难受，能歇就歇一歇。"
        many = where.endswith("s") or where in ("feet", "teeth")
        hurts, it = ("hurt", "them") if many else ("hurts", "it")
        return f"I'm sorry your {where} {hurts}. Rest {it} if you can."
    return KIND_WORDS[kind][zh]


#: Asked what causes it: no cause is ever named.
CAUSE = (" I can't say what's causing it: your doctor can.", "是什么引起的我说不好，医生能告诉你。")
#: A trouble said to be over: glad words only (no care event: it is no symptom).
BETTER = (
    "I'm so glad you're feeling better. Do tell me if it comes back.",
    "你好多了，我真高兴。要是又不舒服了，就告诉我。",
)


#: Said when the trouble told of is easing, or worse, in the next words (``eased``).
EASED = {
    "better": BETTER,
    "worse": (
        "I'm sorry it's getting worse. Sit down and keep still. If you need help, "
        + SAY_HELP["en"],
        "越来越难受的话，先坐下别动。需要帮忙" + SAY_HELP["zh"],
    ),
}


def _unwell(ctx: Context, said: str, detail: dict[str, Any]) -> Outcome:
    """``said`` with the alarm's words; the next words are read in code if they say it is
    easing or worse ("No, I'll sit down a minute, it's passing off now"), never the model's."""
    zh = ctx.lang == "zh"
    if ctx.expect is not None:

        async def then(answer: str) -> str:
            return EASED[answer][zh]

        ctx.expect.expect(ctx.user, eased, then, OFFER_S, last=True)
    return Outcome(said + ALARM[zh], detail=detail)


async def symptom(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    if args.get("symptom") == "better":
        return Outcome(BETTER[zh], detail={"symptom": "better"})
    kind = args.get("symptom") if args.get("symptom") in KIND_WORDS else "unwell"
    where, said = str(args.get("where") or ""), str(args.get("said") or args.get("words") or "")
    first = _first(kind, where, zh)
    if asks_cause(said):  # "… is it my blood pressure?": no cause is named, ever
        first += (
            " 是什么引起的我说不好，医生能告诉你。"
            if zh
            else " I can't say what's causing it: your doctor can."
        )
    detail: dict[str, Any] = {"symptom": kind}
    if ctx.wellbeing is None:  # not wired: kind words, nothing claimed
        return _unwell(ctx, first, detail)
    data = {"symptom": kind, "words": str(args.get("words") or "")[:200], "said": said[:300]}
    if where:
        data["where"] = where
    try:
        detail["event"] = await ctx.wellbeing.record(
            ctx.user, ctx.device, data, ctx.now.timestamp()
        )
    except Exception as exc:  # the disk: the person still hears a kind answer
        log.error("what %s said of feeling unwell was not kept: %s", ctx.user, type(exc).__name__)
    family = await ctx.wellbeing.family(ctx.user)
    if not family:
        detail["family"] = "none"
        return _unwell(ctx, first, detail)
    who = _names(family, zh)
    title = f"fayd: {ctx.user[:1].upper() + ctx.user[1:]} isn't feeling well"
    body = _notice(ctx, kind, said)

    async def tell() -> str:
        told = await ctx.wellbeing.tell_family(ctx.user, title, body) if ctx.wellbeing else []
        if not told:
            return (
                "对不起，我没能通知到家人。" if zh else "I'm sorry, I couldn't reach your family."
            )
        named = _names(told, zh)
        if zh:
            return f"好的，我这就告诉{named}。" + ALARM[1]
        return f"All right, I'm letting {named} know now." + ALARM[0]

    if args.get("tell"):  # asked in the same breath: "I feel dizzy, tell my daughter"
        detail["told"] = True
        return Outcome(first + ("" if zh else " ") + await tell(), detail=detail)

    async def then(answer: str) -> str:
        if answer == "yes":
            return await tell()
        if answer == "better":
            return BETTER[zh]
        if answer == "later":  # nothing is promised for later: no one is told now
            if zh:
                return f"好的，现在先不告诉{who}。" + ALARM[1]
            return "All right, not now." + ALARM[0]
        if zh:
            return f"好的，那我先不告诉{who}。" + ALARM[1]
        return f"All right, I won't tell {who}." + ALARM[0]

    if ctx.expect is not None:
        ctx.expect.expect(ctx.user, _tell_family, then, OFFER_S)
        detail["asked"] = "tell family"
        offer = f"要我告诉{who}吗？" if zh else f" Would you like me to let {who} know?"
        return Outcome(first + offer, detail=detail)
    return _unwell(ctx, first, detail)


_YES = re.compile(
    r"^\W*(?:(?:yes|yeah|yep|aye|ok|okay|sure)\b|是的|是啊|是|好的|好|嗯|对|行)\W*(?:please|thanks)?\W*",
    re.I,
)


def _tell_family(text: str) -> str | None:
    """The answer to "Would you like me to let Anna know?": "Yes, I'm fine, I'd just come
    up the stairs" says there is nothing to tell (a yes to the wrong question)."""
    answer = yes_no(text)
    if answer in (None, "no") and eased(text) == "better":
        return "better"  # "It's passing off now, I'm sitting down": glad words, no one told
    rest = _YES.sub("", text.strip())
    return "no" if answer == "yes" and rest and wellbeing(rest) == "fine" else answer


def _notice(ctx: Context, kind: str, said: str) -> str:
    """The caregivers' notice: when, what, in the person's own words; not an alarm."""
    name = ctx.user[:1].upper() + ctx.user[1:]
    return (
        f"At {ctx.now:%H:%M} {name} told me about {WHAT[kind]}: “{said[:300]}”. {name} asked me"
        " to let you know. It is not an alarm: no call for help was made."
    )


SKILLS = [
    Skill(
        "symptom",
        "The person says they feel unwell (dizzy, unsteady, a funny turn, muddled, not eating,"
        " not sleeping, in pain, sick, weak) without an emergency: a kind answer, kept as a"
        " care event, and the offer to let their family know.",
        {
            "type": "object",
            "properties": {
                "symptom": {"enum": [*KINDS, "better"]},
                "words": {"type": "string", "maxLength": 1000},
                "said": {"type": "string", "maxLength": 1000},
                "where": {"type": "string", "maxLength": 64},
                "tell": {"type": "boolean"},
            },
            "required": ["symptom"],
        },
        symptom,
    ),
]
