"""Device commands by voice: gestures for the user's robot, the speaker's volume, the
screen's brightness, and "sleep for an hour" (fayd then starts no talk on that device until
then). Each acts through the agent's Devices port, and says what it did; a command for a
device that is not there says so."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fayd.agent.clock.times import Ambiguous, Impossible, When
from fayd.agent.skills import words
from fayd.agent.skills.registry import Context, Outcome, Skill
from fayd.protocol import Action

# gesture: (the robot's behavior (firmware/fayd_fw/motions.json), English words, Chinese words)
GESTURES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # Faces and moods first: "look like you're thinking" is thinking, not looking.
    "surprise": ("surprise", ("surprised", "surprise", "amazed", "shocked"), ("吃惊", "惊讶")),
    "sad": ("sad", ("sad", "unhappy", "glum"), ("难过", "伤心")),
    "think": ("think", ("thinking", "think", "ponder"), ("想一想", "思考", "想想")),
    "celebrate": ("celebrate", ("celebrate", "celebration", "party"), ("庆祝",)),
    "wave": ("wave", ("wave", "waving", "give me a wave"), ("挥手", "招手", "挥挥手", "招招手")),
    "nod": ("nod", ("nod",), ("点头", "点点头")),
    "shake_head": ("shake_head", ("shake your head", "shake head", "shake"), ("摇头", "摇摇头")),
    "look": (
        "listen",
        ("look at me", "look", "face me", "turn to me"),
        ("看着我", "看我", "转过来"),
    ),
    "dance": ("celebrate", ("dance", "dancing", "boogie", "jig"), ("跳舞", "跳个舞", "跳支舞")),
    "bow": ("bow", ("bow",), ("鞠躬", "鞠个躬")),
    "cheer": ("cheer", ("cheer", "hooray", "hurray"), ("欢呼", "加油")),
    "jump": ("jump", ("jump",), ("跳一下", "跳起来", "跳一跳")),
    "laugh": ("laugh", ("laugh",), ("笑一个", "笑一笑", "哈哈")),
    "comfort": ("comfort", ("comfort", "give me a hug", "hug"), ("安慰", "抱抱")),
}


STEP = 20  # volume or brightness, per "louder"/"brighter"
DEFAULT_SLEEP_S = 3600
SAID = {  # gesture: (English, Chinese) confirmation
    "wave": ("Here's a wave for you!", "给你挥挥手！"),
    "nod": ("Nodding.", "点点头。"),
    "shake_head": ("Shaking my head.", "摇摇头。"),
    "look": ("I'm looking at you.", "我在看着你。"),
    "dance": ("Here's a little dance!", "给你跳个舞！"),
}


def _zh(ctx: Context) -> bool:
    return ctx.lang == "zh"


def _target(ctx: Context, role: str) -> str | None:
    """The asking device when it has the role, else the user's, else any online one."""
    if ctx.devices.has_role(ctx.device, role):
        return ctx.device
    mine = ctx.devices.find(role, user=ctx.user)
    anyone = mine or ctx.devices.find(role)
    return anyone[0] if anyone else None


#: How each gesture is said in a list of what the robot can do.
CAN = {
    "wave": ("wave", "挥手"),
    "nod": ("nod", "点头"),
    "shake_head": ("shake my head", "摇头"),
    "look": ("look at you", "看着你"),
    "dance": ("dance", "跳舞"),
    "bow": ("bow", "鞠躬"),
    "cheer": ("cheer", "欢呼"),
    "jump": ("jump", "跳一跳"),
    "laugh": ("laugh", "笑"),
    "surprise": ("look surprised", "吃惊"),
    "sad": ("look sad", "难过"),
    "think": ("look thoughtful", "思考"),
    "celebrate": ("celebrate", "庆祝"),
    "comfort": ("give you a hug", "抱抱你"),
}


def _can(zh: bool) -> str:
    names = [CAN[g][zh] for g in GESTURES if g in CAN]
    return "、".join(names) if zh else ", ".join(names[:-1]) + " or " + names[-1]


async def gesture(args: dict[str, Any], ctx: Context) -> Outcome:
    name = args.get("gesture")
    if name not in GESTURES:
        said = name or "that"
        if _zh(ctx):
            return Outcome(f"我不会这个动作。我会{_can(True)}。")
        return Outcome(f"I don't know how to {said}. I can {_can(False)}.")
    robot = _target(ctx, "robot")
    if robot is None:
        return Outcome(
            "这里没有机器人可以做动作。" if _zh(ctx) else "There's no robot here to do that."
        )
    behavior = GESTURES[name][0]
    ctx.devices.act(robot, Action(f"gesture.{name}", behavior, "happy", 0.8, 85))
    en, zh = SAID.get(name, (f"{name.replace('_', ' ').capitalize()}!", "好的！"))
    return Outcome(zh if _zh(ctx) else en, detail={"device": robot, "behavior": behavior})


async def volume(args: dict[str, Any], ctx: Context) -> Outcome:
    speaker = _target(ctx, "speaker")
    if speaker is None:
        return Outcome("这里没有扬声器。" if _zh(ctx) else "There's no speaker here to change.")
    now = ctx.devices.volume_of(speaker)
    level = args.get("level")
    if args.get("mute") is True:
        level = 0
    elif args.get("mute") is False:
        level = now if now else 70
    elif level is None:
        step = STEP if args.get("change", "up") == "up" else -STEP
        level = max(0, min(100, (now if now is not None else 80) + step))
    if not 0 <= int(level) <= 100:
        return Outcome("音量要在0到100之间。" if _zh(ctx) else "The volume goes from 0 to 100.")
    ctx.devices.set_volume(speaker, int(level))
    if int(level) == 0:
        return Outcome("已经静音了。" if _zh(ctx) else "I'm muted now.")
    return Outcome(f"音量调到{level}。" if _zh(ctx) else f"Volume set to {level}.")


async def brightness(args: dict[str, Any], ctx: Context) -> Outcome:
    screen = _target(ctx, "screen")
    if screen is None:
        return Outcome("这里没有屏幕。" if _zh(ctx) else "There's no screen here to change.")
    level = args.get("level")
    if level is None:
        level = 90 if args.get("change", "up") == "up" else 30
    ctx.devices.set_brightness(screen, int(level))
    return Outcome(f"屏幕亮度调到{level}。" if _zh(ctx) else f"Screen brightness set to {level}.")


async def sleep(args: dict[str, Any], ctx: Context) -> Outcome:
    until = args.get("until")
    if isinstance(until, Impossible):
        return Outcome(until.reason)
    if isinstance(until, Ambiguous):
        return Outcome(until.question)  # the conversation keeps the question open
    if isinstance(until, When):
        end = until.at
    elif isinstance(until, str):
        end = datetime.fromisoformat(until).replace(tzinfo=ctx.tz)
    else:
        end = ctx.now + timedelta(seconds=int(args.get("duration_s") or DEFAULT_SLEEP_S))
    ctx.devices.sleep_until(ctx.device, end.timestamp())
    if _zh(ctx):
        return Outcome(f"好的，我先安静到{words.moment(end, ctx.now, 'zh')}。你叫我，我随时在。")
    return Outcome(
        f"All right, I'll stay quiet until {words.moment(end, ctx.now, 'en')}. "
        "Talk to me any time and I'll answer."
    )


_LEVEL = {"type": "integer", "minimum": 0, "maximum": 100}
SKILLS = [
    Skill(
        "gesture",
        "Make the user's robot do a gesture (wave, nod, shake head, look, dance, bow, …).",
        {"type": "object", "properties": {"gesture": {"type": "string"}}},
        gesture,
    ),
    Skill(
        "set_volume",
        "Set the speaker's volume (level 0-100), turn it up or down, mute or unmute it.",
        {
            "type": "object",
            "properties": {
                "level": _LEVEL,
                "change": {"enum": ["up", "down"]},
                "mute": {"type": "boolean"},
            },
        },
        volume,
    ),
    Skill(
        "set_brightness",
        "Set the screen's brightness (level 0-100) or make it brighter or dimmer.",
        {"type": "object", "properties": {"level": _LEVEL, "change": {"enum": ["up", "down"]}}},
        brightness,
    ),
    Skill(
        "sleep",
        "Stay quiet on this device (no talk started by fayd) for a while or until a time.",
        {
            "type": "object",
            "properties": {
                "duration_s": {"type": "integer", "minimum": 60, "maximum": 86400},
                "until": {"type": "string", "description": "local time, YYYY-MM-DDTHH:MM"},
            },
        },
        sleep,
    ),
]
