"""After a fall the emergency skill asks "Are you hurt anywhere?"; the person's next words are
read against that question in code (fayd.agent.understand.answers.hurt), never by the model,
and answered in written words that say only what is true of the alert.

The person cannot call the alarm off: it stays with the household and, when a care rule
watches their calls for help, with their caregivers (fayd.care), whatever they answer. So
"I'm fine now, I got up" is never answered with "I've cancelled the alarm". The answer is
kept with the exchange (importance 10, the alert's id in the turn's detail)."""

from __future__ import annotations

from typing import Any

from fayd.agent.skills.registry import Context, Outcome
from fayd.agent.understand.answers import hurt
from fayd.agent.understand.text import language

#: The answer is awaited this long (the emergency's moment; later words are a new turn).
FALL_ANSWER_TTL_S = 600.0

#: What is said to each answer (English, Chinese), before what is true of help.
REPLY = {
    "not_hurt": (
        "I'm glad you're not hurt. Stay where you're comfortable, and get up slowly, only"
        " when you feel ready.",
        "没受伤就好。先在舒服的地方待着，觉得可以了再慢慢起来。",
    ),
    "hurt": (
        "I'm sorry it hurts. Keep as still as you can, and don't try to get up.",
        "疼的话先别动，别急着起来。",
    ),
    "stuck": (
        "Then stay where you are, and don't try to get up on your own. If you can reach a"
        " blanket or a coat, keep yourself warm.",
        "那就先待在原地，别自己硬起来。能够到毯子或外套的话，盖上保暖。",
    ),
    "up": (
        "I'm glad you're up. Sit down and rest for a while.",
        "起来了就好。先坐下休息一会儿。",
    ),
    "unsure": (
        "That's all right. Stay still for a moment, and tell me if anything hurts.",
        "没关系。先别动，哪里疼就告诉我。",
    ),
}
#: What is true of help: a caregiver is being told (``told``), or no one is set up.
HELP = {
    True: (
        "Your family is being told, so they may call you.",
        "我正在通知你的家人，他们可能会给你打电话。",
    ),
    False: (
        "I have no one to call for you yet, so if you can, phone for help.",
        "我还没有可以联系的人，如果可以，请打电话求助。",
    ),
}
#: Said instead, to the answers that change what help is needed.
HELP_HURT = {
    True: (
        "Your family is being told, so they may call you. If the pain is bad, phone for an"
        " ambulance if you can.",
        "我正在通知你的家人，他们可能会给你打电话。如果疼得厉害，能的话请打电话叫救护车。",
    ),
    False: (
        "I have no one to call for you yet, so if you can, phone for an ambulance.",
        "我还没有可以联系的人，如果可以，请打电话叫救护车。",
    ),
}
HELP_UP = {  # up again: the alarm is not called off, and that is said
    True: (
        "Your family has still been told, so they may call you.",
        "家人那边还是已经通知了，他们可能会给你打电话。",
    ),
    False: (
        "If anything starts to hurt, phone for help.",
        "要是哪里开始疼，请打电话求助。",
    ),
}


def reply(answer: str, told: bool, zh: bool) -> str:
    """The words for ``answer`` (a value of ``hurt``), true of help as ``told`` says."""
    helps = {"hurt": HELP_HURT, "up": HELP_UP}.get(answer, HELP)
    first, then = REPLY[answer][zh], helps[told][zh]
    return first + ("" if zh else " ") + then


def read_answer(text: str) -> tuple[str, str, str] | None:
    """The answer, the language it was said in and the words; None: no answer to it."""
    answer = hurt(text)
    return (answer, language(text), text) if answer is not None else None


def expect_fall_answer(ctx: Context, alert_id: str, told: bool) -> None:
    """Hear the answer to "Are you hurt anywhere?" in the person's next turn (any words that
    are no answer go on as usual; a newer question of fayd's replaces this one)."""
    if ctx.expect is None:
        return

    async def then(found: tuple[str, str, str]) -> Outcome:
        answer, lang, _ = found
        detail: dict[str, Any] = {"alert": alert_id, "after_fall": answer, "told": told}
        return Outcome(reply(answer, told, lang == "zh"), importance=10, detail=detail)

    ctx.expect.expect(ctx.user, read_answer, then, FALL_ANSWER_TTL_S)
