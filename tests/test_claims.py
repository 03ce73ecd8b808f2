"""No model reply claims an action (issue 21, item 6): the words that claim one, the honest
line said instead when the person had asked for something, and the whole path through
``Chat`` with a scripted stand-in model (the real model's lines from the issue among them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.agent import guard
from fayd.agent.chat import Chat
from fayd.agent.claims import asked_for, claims
from fayd.config import AgentConfig, LlmConfig
from fayd.store import Store

from .test_chitchat import ScriptedLlm, ask, make_chat, stored

ZH_MODEL = LlmConfig(languages="en,zh")

CLAIMS = [
    "You've brought a nudge, I'll make one for you.",  # the issue's
    "I'll remember that my daughter Anna has her own tablets!",  # the issue's
    "I'll remind you at eight.",
    "Of course, I'll remind you to take them.",
    "I've set a reminder for eight o'clock.",
    "I have set an alarm for you.",
    "I've told your daughter you're not well.",
    "I'll let them know you're fine.",
    "Don't worry, I'll let your son know.",
    "I've called the doctor for you.",
    "I've just rung your daughter.",
    "I'll give you a shout at three.",
    "I'll put the kettle on.",
    "I'll check on you later.",
    "I'll get help.",
    "Your reminder is set.",
    "The timer has been set for twenty minutes.",
    "Done! Anything else?",
    "We'll ring the surgery in the morning.",
    "I'm going to text your granddaughter.",
    "我会提醒你吃药的。",
    "已经设置好了。",
    "我已经告诉你女儿了。",
    "好的，我帮你记下了。",
    "我这就给你打电话。",
]
FINE = [
    "That sounds lovely. What did you have?",
    "I'll keep you company for a while.",
    "I'm here with you.",
    "Let me know if you'd like to talk about it.",
    "I'll tell you a little story if you like.",
    "We'll get through this together.",
    "Roses are lovely. Which colour did you like best?",
    "I can't set that from here, I'm afraid.",
    "I haven't told anyone.",
    "Did you remember to call her?",
    "Your daughter sounds very kind.",
    "I hope the doctor helps.",
    "你今天过得怎么样？",
    "我在这儿陪着你。",
]


@pytest.mark.parametrize("text", CLAIMS)
def test_a_claimed_action_is_recognised(text: str) -> None:
    assert claims(text), text


@pytest.mark.parametrize("text", FINE)
def test_ordinary_talk_is_no_claim(text: str) -> None:
    assert not claims(text), text


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("could you remember to give me a bell later", "reminder"),
        ("don't let me forget the milkman", "reminder"),
        ("到时候记得叫我", "reminder"),
        ("could you ring my daughter for me", "cannot"),
        ("please book me a taxi", "cannot"),
        ("帮我订一辆出租车", "cannot"),
        ("I take my blood pressure tablets every morning", None),
        ("my garden is lovely this time of year", None),
    ],
)
def test_what_the_person_asked_for(question: str, kind: str | None) -> None:
    assert asked_for(question) == kind


def test_the_guard_drops_the_claiming_sentence() -> None:
    judge = guard.ReplyGuard("I take my tablets every morning.")
    assert judge.judge("That's a good habit.") == "That's a good habit."
    assert judge.judge("I'll remember that for you.") is None
    assert judge.cut == "claim" and judge.said == ["That's a good habit."]
    first = guard.ReplyGuard("Give us a nudge later?")
    assert first.judge("Sure, I've set it.") is None
    assert first.problem == "claim"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "fayd.db")
    yield store
    store.close()


async def test_a_pretended_reminder_gets_the_honest_line_not_a_retry(store: Store) -> None:
    # The 135M model's own answer to an everyday reminder request (issue 21).
    llm = ScriptedLlm(
        "You've brought a nudge, I'll make one for you. Here's the naughty 30:",
        "That's a lovely idea.",
    )
    turn = await ask(make_chat(store, llm), "Could you remember to give me a bell later on?")
    assert turn.answer == "Did you want me to set a reminder? Say 'remind me to …, at …'."
    assert len(llm.calls) == 1  # not asked again: a second try would only pretend better
    meta = stored(store)[0]["meta"]
    assert meta["rejected"] == "claim" and meta["fallback"] is True


async def test_a_request_fayd_cannot_do_is_answered_honestly(store: Store) -> None:
    llm = ScriptedLlm("Of course. I've called her and she's on her way.")
    turn = await ask(make_chat(store, llm), "Would you get my neighbour to pop round?")
    assert turn.answer == "I can't do that from here."


async def test_a_claim_after_good_words_is_cut_and_chat_is_not_a_request(store: Store) -> None:
    llm = ScriptedLlm("That sounds lovely. I'll remember that you walk with your daughter!")
    turn = await ask(make_chat(store, llm), "I walk to the shop every morning.")
    assert turn.answer == "That sounds lovely."
    assert stored(store)[0]["meta"]["cut"] == "claim"


async def test_a_claim_in_small_talk_is_retried_like_any_bad_reply(store: Store) -> None:
    llm = ScriptedLlm("I'll ring your sister tomorrow.", "How lovely. Is she well?")
    turn = await ask(make_chat(store, llm), "My sister lives in Leeds.")
    assert turn.answer == "How lovely. Is she well?"
    assert stored(store)[0]["meta"]["retried"] == "claim"


async def test_chinese_claims_are_not_said(store: Store) -> None:
    llm = ScriptedLlm("好的，我会提醒你的。")
    # A model that writes Chinese (the default is never given a Chinese turn: test_chitchat).
    chat = Chat(llm, store, AgentConfig(extract_every_turns=0, memory_tokens=0), ZH_MODEL)
    turn = await ask(chat, "到时候记得叫我一声")
    assert turn.answer == "你是想让我设个提醒吗？可以说：几点提醒我做什么。"
