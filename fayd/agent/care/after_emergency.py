"""After an emergency the person's next words are read in code, never by the model, and
answered in written words that say only what is true of the alert. After a fall the question
is "Are you hurt anywhere?" (fayd.agent.care.answers.hurt); after any other emergency
what they say next, once the router found nothing else in it ("it was only crumbs", 好点了,
"I don't know, it came on all of a sudden"), is read as better, worse or told
(fayd.agent.care.answers.since_alarm).

The person cannot call the alarm off: it stays with the household and, when a care rule
watches their calls for help, with their caregivers (fayd.care), whatever they answer. So
"I'm fine now, I got up" is never answered with "I've cancelled the alarm". The answer is
kept with the exchange (importance 10, the alert's id in the turn's detail)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fayd.agent.care.answers import hurt, since_alarm
from fayd.agent.language.text import language
from fayd.agent.skills.registry import Context, Outcome

#: The answer is awaited this long (the emergency's moment; later words are a new turn).
ANSWER_TTL_S = 600.0

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
    # after any other emergency (since_alarm)
    "better": ("I'm glad to hear that.", "那就好。"),
    "worse": (
        "Then please phone for an ambulance if you can.",
        "那请你能的话马上打电话叫救护车。",
    ),
    "said": (
        "Thank you for telling me. Stay where you are, and tell me if anything changes.",
        "谢谢你告诉我。先待在原地，有什么变化就告诉我。",
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
HELP_BETTER = {  # eased, or a false alarm: the alarm is not called off either
    True: (
        "Your family has still been told, so they may call to check on you.",
        "家人那边还是已经通知了，他们可能会打电话问问你。",
    ),
    False: (
        'If it comes back, say "help" straight away.',
        "要是又不对劲，马上说“救命”。",
    ),
}


def reply(answer: str, told: bool, zh: bool) -> str:
    """The words for ``answer`` (a value of ``hurt``), true of help as ``told`` says."""
    helps = {"hurt": HELP_HURT, "up": HELP_UP, "better": HELP_BETTER}.get(answer, HELP)
    first, then = REPLY[answer][zh], helps[told][zh]
    return first + ("" if zh else " ") + then


def _reader(read: Callable[[str], str | None]) -> Callable[[str], tuple[str, str] | None]:
    """``read``'s answer with the language it was said in; None: no answer."""

    def answer(text: str) -> tuple[str, str] | None:
        found = read(text)
        return (found, language(text)) if found is not None else None

    return answer


def expect_answer(ctx: Context, alert_id: str, kind: str, told: bool) -> None:
    """Hear the person's next words after the emergency ``kind`` (any words that are no
    answer go on as usual; a newer question of fayd's replaces this one)."""
    if ctx.expect is None:
        return
    fall = kind == "fall"  # "Are you hurt anywhere?" is asked: its answer comes first

    async def then(found: tuple[str, str]) -> Outcome:
        answer, lang = found
        detail: dict[str, Any] = {"alert": alert_id, "after_emergency": answer, "told": told}
        return Outcome(reply(answer, told, lang == "zh"), importance=10, detail=detail)

    read = _reader(hurt if fall else since_alarm)
    ctx.expect.expect(ctx.user, read, then, ANSWER_TTL_S, last=not fall)
