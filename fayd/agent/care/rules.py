""" "Tell me if Mum hasn't moved by 10": a care rule said by a caregiver (docs/care.md, "Rules
in words"). What the words filled (fayd.agent.care.rule_words) is resolved against the
household through the CareRules port — the person, the room's sensor, the speaker being a
caregiver, and the rule's own checks — then read back in plain words with the absolute time,
and kept only on "yes" (checked again as it is stored). What the words left out is said, not
guessed."""

from __future__ import annotations

import logging
import re
from datetime import time
from typing import Any

from fayd import logwords
from fayd.agent.care.answers import yes_no
from fayd.agent.care.skill import people_meant
from fayd.agent.language.text import normalize
from fayd.agent.ports import RuleDraft
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.errors import FaydError

log = logging.getLogger(__name__)

READING = {
    "bp": ("blood pressure", "血压"),
    "heart_rate": ("heart rate", "心率"),
    "spo2": ("oxygen level", "血氧"),
    "temperature": ("temperature", "体温"),
    "room_temperature": ("room temperature", "室温"),
}
EVENT = {
    "panic": ("presses the alarm button", "按了紧急按钮"),
    "fall": ("falls (when the fall sensor detects it)", "摔倒（跌倒传感器发现时）"),
    "emergency": ("calls to me for help", "向我求救"),
}
#: An inactivity rule said in words watches the waking day: nights are for sleeping.
DAYTIME = ("08:00", "22:00")
UNIT = {"spo2": "%", "temperature": " degrees", "room_temperature": " degrees"}
SIDE = {"above": ("above", "高于"), "below": ("below", "低于")}


_KEEP = re.compile(
    r"^((please|yes|oh|ok|okay)[ ,]+)*(keep it|do|do that|go ahead|that's right|correct|"
    r"that's it)( please)?$|^(好|好的|可以|行|保存|保存吧|要|对的)[。！!]?$"
)
_DROP = re.compile(r"^((oh|well|er|um)[ ,]+)*(don't|do not) (keep|bother)\b|^(不要|别|不用|不保存)")


def keep_or_not(text: str) -> str | None:
    """The answer to "Shall I keep that?": "yes", "no" (and "later": not now), or None when
    the words are no answer (the question stays open)."""
    said = normalize(text)
    if _DROP.search(said):
        return "no"
    if _KEEP.search(said):
        return "yes"
    return yes_no(text)


def _title(word: str) -> str:
    return word[:1].upper() + word[1:]


def _limit(sensor: str, side: str, limit: dict[str, float], zh: bool) -> str:
    if sensor == "bp":
        said = "/".join(f"{limit[k]:g}" for k in ("sys", "dia") if k in limit)
        top = "" if "dia" in limit else ("（收缩压）" if zh else " (the top number)")
        return f"{SIDE[side][zh]}{'' if zh else ' '}{said}{top}"
    unit = (
        ("度" if UNIT.get(sensor) == " degrees" else UNIT.get(sensor, ""))
        if zh
        else UNIT.get(sensor, "")
    )
    return f"{SIDE[side][zh]}{'' if zh else ' '}{limit['value']:g}{unit}"


def _duration(minutes: float, zh: bool) -> str:
    if zh:
        return f"{minutes:g}分钟" if minutes < 60 else f"{minutes / 60:g}个小时"
    if minutes == 30:
        return "half an hour"
    if minutes == 60:
        return "an hour"
    return f"{minutes:g} minutes" if minutes < 60 or minutes % 30 else f"{minutes / 60:g} hours"


def _condition(args: dict[str, Any], who: str, draft: RuleDraft | None, zh: bool) -> str:
    """The rule as a caregiver would say it, after "I'll tell you if" (如果…就告诉你)."""
    kind, sensor, room = args.get("kind"), args.get("sensor", ""), args.get("room")
    if kind == "inactivity":
        clock = words.clock_zh if zh else words.clock_en
        start, end = (clock(time.fromisoformat(t)) for t in DAYTIME)
        length = _duration(float(args.get("minutes") or 0), zh)
        if zh:
            return f"{who}在白天（{start}到{end}）{length}没有活动"
        return f"{who} hasn't moved for {length} during the day (from {start} to {end})"
    if kind == "missing":
        by = args.get("by")
        at = words.hhmm(by, "zh" if zh else "en") if isinstance(by, time) else ""
        in_room = room and (draft is None or draft.device)
        if zh:
            done = "量血压" if sensor == "bp" else (f"去{room}" if in_room else "活动")
            return f"{who}到{at}还没有{done}" if at else f"{who}还没有{done}"
        when = f" by {at}" if at else ""
        if sensor == "bp":
            return f"{who} hasn't taken a blood pressure reading{when}"
        return f"{who} hasn't been in the {room}{when}" if in_room else f"{who} hasn't moved{when}"
    if kind == "event":
        return f"{who}{'' if zh else ' '}{EVENT.get(sensor, (sensor, sensor))[zh]}"
    what = READING.get(sensor, (sensor, sensor))[zh]
    limits = [_limit(sensor, k, args[k], zh) for k in ("above", "below") if args.get(k)]
    said = ("或".join(limits) or "不正常") if zh else (" or ".join(limits) or "out of range")
    if zh:
        return f"{who}的{what}{said}"
    if sensor == "room_temperature" and room:
        return f"the {room} temperature is {said}"
    return f"{who}'s {what} is {said}"


def _missing(args: dict[str, Any]) -> str | None:
    """What the words did not say that a rule needs (None: nothing)."""
    if not args.get("kind"):
        return "what"
    if not args.get("who") and not (args.get("room") and args["kind"] == "threshold"):
        return "who"
    if args["kind"] == "missing" and not isinstance(args.get("by"), time):
        return "by"
    if args["kind"] == "inactivity" and not args.get("minutes"):
        return "for"
    if args["kind"] == "threshold" and not (args.get("above") or args.get("below")):
        return "limit"
    return None


#: What is missing, said (English, Chinese).
GAP = {
    "what": ("what to watch for", "要注意什么"),
    "who": ("who to watch over", "要照看谁"),
    "by": ("the time: by when", "到几点为止"),
    "for": ("for how long", "多长时间"),
    "limit": (
        "the limit, as a number (like 'over 150/95' or 'below 16 degrees')",
        "界限的数字（比如“超过150/95”或“低于16度”）",
    ),
}


def _spec(args: dict[str, Any]) -> dict[str, Any]:
    if args["kind"] == "inactivity":
        return {"minutes": args["minutes"], "between": list(DAYTIME)}
    spec: dict[str, Any] = {"sensor": args["sensor"]}
    if args["kind"] == "missing":
        spec["by"] = f"{args['by']:%H:%M}"
    elif args["kind"] == "threshold":
        spec["above"] = args.get("above") or {}
        spec["below"] = args.get("below") or {}
    return spec


_OVERLAPS = re.compile(r"overlaps rule '([^']+)'")


def _refusal(draft: RuleDraft, caregiver: str, who: str, zh: bool) -> str:
    if draft.problem == "caregiver":
        add = f"fayd care caregivers add {caregiver} URL"
        if zh:
            return (
                "只有我能联系到的照护人才能设置这个，你还不是。"
                f"可以用这个命令添加你：{add}（URL是邮件或ntfy等地址）。"
            )
        return (
            f"I can only set this up for a caregiver I can reach, and you aren't one yet, "
            f"{_title(caregiver)}. Someone can add you with: {add} (the URL is how to reach "
            "you, like an email or ntfy address)."
        )
    if draft.problem == "not-theirs":
        if zh:
            return f"抱歉，你不在照顾{who}的家人名单上，所以我不能帮你设置。"
        return (
            f"I'm sorry, you aren't down as one of the people who look after {who}, so I "
            "can't set that up for you."
        )
    if draft.problem == "person":
        if zh:
            return f"我这里没有叫{who}的家人，所以没法照看。"
        return f"I have no one called {who} in the household, so I can't watch over them."
    if (same := _OVERLAPS.match(draft.reason)) is not None:
        name = same.group(1)
        if zh:
            return (
                f"已经有一条照看{who}这件事的规则了：{name}。"
                f"要改的话，先删掉它：fayd care rules remove {name}。"
            )
        return (
            f"There's already a rule watching that for {who}: {name}. To change it, remove "
            f"that one first with: fayd care rules remove {name}."
        )
    if zh:
        return f"对不起，这条规则我不能保存：{draft.reason}。"
    return f"I'm sorry, I can't keep that rule: {draft.reason}."


async def care_rule(args: dict[str, Any], ctx: Context) -> Outcome:
    """Understand, resolve and read back a care rule; keep it on "yes"."""
    zh = ctx.lang == "zh"
    word = str(args.get("who") or "").strip().lower()
    who = (word if zh else _title(word)) if word else ("他们" if zh else "them")
    if ctx.rules is None or ctx.expect is None:
        return Outcome(
            "我现在还不能设置照护规则。" if zh else "I can't set up care rules here yet."
        )
    if (gap := _missing(args)) is not None:
        heard = _condition(args, who, None, zh)
        if zh:
            said = f"我听懂了：如果{heard}就告诉你。但还缺{GAP[gap][1]}，请再完整说一遍。"
        elif gap == "what":
            said = (
                f"I heard you want to be told about {who}, but not what to watch for: for "
                "example, 'tell me if Mum hasn't moved by 10'."
            )
        else:
            said = (
                f"I understood that you want me to tell you if {heard}, but not {GAP[gap][0]}."
                " Could you say it again with that?"
            )
        return Outcome(said, detail={"care_rule": "incomplete", "missing": gap})
    if not ctx.vouched:  # a shared device may be anyone in the room (docs/security.md)
        if zh:
            said = "照护规则只能在你自己的设备上设置，共用的设备上我分不清是谁在说话。"
        else:
            said = (
                "I can only set up care rules from your own device: on a shared one, I can't"
                " be sure who is speaking."
            )
        return Outcome(said, detail={"care_rule": "not-own-device"})
    draft = await ctx.rules.draft(
        ctx.user,
        await people_meant(word, ctx) if word else [],
        args["kind"],
        _spec(args),
        args.get("room"),
    )
    if draft.rule is None:
        return Outcome(_refusal(draft, ctx.user, who, zh), detail={"care_rule": draft.problem})
    if not word:
        who = draft.person if zh else _title(draft.person)
    condition = _condition(args, who, draft, zh)
    event = args["kind"] == "event"
    no_sensor = bool(args.get("room") and args["kind"] == "missing" and not draft.device)
    checkin = bool(draft.rule.get("checkin"))
    if zh:
        now = "马上" if event else ""
        readback = f"{_title(ctx.user)}，如果{condition}，我会{now}告诉你。"
        readback += f"我家里{args['room']}没有传感器，{who}在哪里活动都算。" if no_sensor else ""
        readback += f"我会先问问{who}好不好。" if checkin else ""
    else:
        now = "straight away " if event else ""
        readback = f"I'll tell you, {_title(ctx.user)}, {now}if {condition}."
        if no_sensor:
            readback += (
                f" I have no sensor in the {args['room']}, so any movement of {who}'s counts."
            )
        readback += f" I'll check with {who} first." if checkin else ""

    async def then(answer: str) -> str:
        if answer != "yes":
            return "好的，我没有保存。" if zh else "All right, I haven't kept it."
        assert ctx.rules is not None and draft.rule is not None
        try:
            name, *also = await ctx.rules.add(draft.rule)
        except FaydError as exc:
            # The reason may quote what was said (a room, a time): its words only at DEBUG.
            log.info("care rule said by %s refused: %s", ctx.user, logwords.words(exc))
            log.debug("care rule said by %s refused: %s", ctx.user, logwords.words(exc))
            return f"对不起，没能保存：{exc}。" if zh else f"I'm sorry, I couldn't keep it: {exc}."
        if zh:
            helps = f"{who}向我求救时，我也会告诉你。" if also else ""
            return f"好了：如果{condition}，我会{now}告诉你。规则名是{name}。{helps}"
        helps = f" If {who} calls to me for help, I'll tell you too." if also else ""
        return f"Done: I'll tell you {now}if {condition}. It's kept as the care rule {name}.{helps}"

    ctx.expect.expect(ctx.user, keep_or_not, then, own_device=True)
    said = readback + ("要保存吗？" if zh else " Shall I keep that?")
    return Outcome(said, detail={"care_rule": "asked", "rule": draft.rule})


_HHMM = {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}
_LIMITS = {"type": "object", "additionalProperties": {"type": "number"}}
SKILLS = [
    Skill(
        "care_rule",
        "A caregiver asks to be told when something happens to a household member (no "
        "movement by a time or for hours, a reading over a limit, an alarm press or fall); "
        "read back and kept on yes.",
        {
            "type": "object",
            "properties": {
                "who": {"type": "string", "maxLength": 64},
                "kind": {"enum": ["missing", "inactivity", "threshold", "event"]},
                "sensor": {"type": "string", "maxLength": 64},
                "by": _HHMM,
                "minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 1440},
                "room": {"type": "string", "maxLength": 64},
                "above": _LIMITS,
                "below": _LIMITS,
            },
        },
        care_rule,
    ),
]
