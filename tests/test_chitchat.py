"""Chit-chat under guardrails, end to end through ``Chat``: bounds that stop the model,
loops, echoes and prompt format handled before anything is said, rejected turns kept out of
the history and of memory — with a scripted stand-in model, then a ten-turn session with the
real SmolLM2; and the extraction's hygiene on crafted model answers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from fayd.agent import guard
from fayd.agent.chat import Chat
from fayd.agent.turn import Turn
from fayd.config import AgentConfig, LlmConfig
from fayd.llm.text import word_count
from fayd.memory import extract, hygiene
from fayd.memory.documents import Documents
from fayd.memory.extract import Item
from fayd.store import Store, records


class ScriptedLlm:
    """A ChatLlm whose replies are scripted, one per generation, streamed a few characters
    at a time (a token every ``delay_s``, as a model writes); it stops when its ``stop``
    event is set and counts what was pulled."""

    def __init__(self, *replies: str, chunk: int = 4, delay_s: float = 0.003) -> None:
        self.replies = list(replies)
        self.chunk = chunk
        self.delay_s = delay_s
        self.calls: list[dict[str, Any]] = []
        self.pulled = 0  # deltas handed out, over all generations
        self.unsent = 0  # deltas a stop left unsent

    def stream_chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int = 128,
        temperature: float = 0.7,
        stop: threading.Event | None = None,
        background: bool = False,
        **options: Any,
    ) -> Iterator[str]:
        self.calls.append({"messages": messages, "temperature": temperature, **options})
        text = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        pieces = [text[i : i + self.chunk] for i in range(0, len(text), self.chunk)]
        for i, piece in enumerate(pieces):
            if stop is not None and stop.is_set():
                self.unsent += len(pieces) - i
                return
            self.pulled += 1
            time.sleep(self.delay_s)
            yield piece

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        return "".join(self.stream_chat(messages, **kwargs))

    def user_turn(self) -> AbstractContextManager[None]:
        return nullcontext()


class Remembering:
    """Memory as Chat uses it when no context is asked for (memory_tokens = 0): what it
    would remember, and no embedder."""

    embedder = None

    def __init__(self) -> None:
        self.remembered: list[str] = []

    def remember(self, content: str, *args: Any) -> None:
        self.remembered.append(content)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "fayd.db")
    yield store
    store.close()


def make_chat(store: Store, llm: Any, memory: Any = None, **agent: Any) -> Chat:
    cfg = AgentConfig(extract_every_turns=0, memory_tokens=0, **agent)
    return Chat(llm, store, cfg, LlmConfig(), memory)


async def ask(chat: Chat, question: str, user: str = "Ann") -> Turn:
    turn = Turn(user=user, device="d1", question=question)
    async for _ in chat.reply(turn):
        pass
    return turn


def stored(store: Store) -> list[dict[str, Any]]:
    rows = store.call(records.recent_turns, 100)
    return [
        {**r, "meta": json.loads(r["meta"])} for r in reversed(rows) if r["role"] == "assistant"
    ]


def history(store: Store, user: str = "Ann") -> list[dict[str, str]]:
    conversation = store.call(records.conversation_for, user, "d1")
    return store.call(records.history, conversation, 4)


# --- bounds ----------------------------------------------------------------------------------


async def test_two_sentences_stop_the_model(store: Store) -> None:
    llm = ScriptedLlm(
        "That sounds lovely. The garden must be full of colour now. "
        "Roses are my favourite flowers of all. I could talk about them all day long."
    )
    turn = await ask(make_chat(store, llm), "I was in the garden this morning.")
    assert turn.answer == "That sounds lovely. The garden must be full of colour now."
    assert llm.unsent > 10  # stopped, not run to the end and cut
    assert stored(store)[0]["meta"]["cut"] == "sentences"


async def test_a_piece_holding_two_sentences_does_not_pass_the_bound(store: Store) -> None:
    # The splitter keeps "Oh!" with what follows: one piece, two sentences (the CI once saw
    # three sentences said this way).
    llm = ScriptedLlm(
        "That sounds lovely. Oh! I do love roses in the morning. They smell so sweet all day."
    )
    turn = await ask(make_chat(store, llm), "I was in the garden this morning.")
    assert turn.answer == "That sounds lovely."
    assert stored(store)[0]["meta"]["cut"] == "sentences"


async def test_a_run_on_reply_stops_at_the_word_bound(store: Store) -> None:
    llm = ScriptedLlm("I think that " + "the garden and the roses and the trees " * 20)
    turn = await ask(make_chat(store, llm, max_words=20), "Tell me about gardens.")
    assert 3 <= word_count(turn.answer) <= 20
    assert llm.unsent > 20


# --- loops, echoes, format -------------------------------------------------------------------


async def test_a_repeated_sentence_stops_the_reply(store: Store) -> None:
    loop = "I am so sorry to hear that. " * 30
    llm = ScriptedLlm(loop, "Oh dear, that must be hard. Would you like to talk about it?")
    turn = await ask(make_chat(store, llm, max_sentences=3), "My hip hurts again.")
    # The first sentence was said; its repeat stopped the model at once.
    assert turn.answer == "I am so sorry to hear that."
    assert llm.unsent > 100
    meta = stored(store)[0]["meta"]
    assert meta["cut"] == "repeat" and "rejected" not in meta


async def test_a_loop_with_no_sentence_end_is_retried(store: Store) -> None:
    llm = ScriptedLlm(
        "sorry sorry I promise you that I promise you that I promise you that I promise",
        "Oh dear. Would you like to talk about it?",
    )
    turn = await ask(make_chat(store, llm), "My hip hurts again.")
    assert turn.answer == "Oh dear. Would you like to talk about it?"
    assert stored(store)[0]["meta"]["retried"] == "loop"


async def test_an_echo_is_generated_again_with_other_sampling(store: Store) -> None:
    llm = ScriptedLlm("Do you like music? I like music.", "I love old songs. Do you sing?")
    turn = await ask(make_chat(store, llm), "Do you like music?")
    assert turn.answer == "I love old songs. Do you sing?"
    first, second = llm.calls
    assert "seed" not in first and second["seed"] != 0
    assert second["temperature"] >= 0.8 > first["temperature"]
    assert stored(store)[0]["meta"]["retried"] == "echo"


async def test_two_echoes_give_an_honest_short_line_and_are_not_kept(store: Store) -> None:
    memory = Remembering()
    llm = ScriptedLlm("How are you today? How are you?", "How are you today?")
    chat = make_chat(store, llm, memory)
    turn = await ask(chat, "How are you today?")
    assert turn.answer in guard.FALLBACKS["en"]
    (row,) = stored(store)
    assert row["meta"]["rejected"] == "echo" and row["meta"]["fallback"] is True
    await chat.idle()
    assert memory.remembered == ["Ann：How are you today?"]  # the user's words, not the reply
    assert history(store) == []  # not in the history the model sees next
    llm.replies = ["Tea is a good idea. Do you take milk?"]
    await ask(chat, "I think I'll make some tea.")
    await chat.idle()
    assert len(memory.remembered) == 2 and "Tea is a good idea" in memory.remembered[1]
    prompt = json.dumps(llm.calls[-1]["messages"])
    assert "How are you today?" not in prompt
    assert [m["content"] for m in history(store)] == [
        "I think I'll make some tea.",
        "Tea is a good idea. Do you take milk?",
    ]


async def test_a_reply_copied_from_the_history_is_asked_again_without_it(
    store: Store,
) -> None:
    # (Not "I'll make a cup of tea": a claimed action is never said, fayd.agent.claims.)
    llm = ScriptedLlm(
        "A cup of tea would do you good tomorrow.",
        "A cup of tea would do you good tomorrow. Is that nice?",
        "How lovely. Who is coming?",
    )
    chat = make_chat(store, llm)
    await ask(chat, "I'm tired.")
    turn = await ask(chat, "My son is visiting.")
    assert turn.answer == "How lovely. Who is coming?"
    assert stored(store)[-1]["meta"]["retried"] == "repeat"
    first, second = llm.calls[1:]
    assert "I'm tired." in json.dumps(first["messages"])
    assert second["messages"] == chat.messages([], "My son is visiting.")  # no history


async def test_a_leaked_memory_line_is_not_said_nor_stored(store: Store) -> None:
    llm = ScriptedLlm(
        "That's nice. - [2026/12/01 10:28:31] User: I went to the shop. Fay: Lovely!",
    )
    turn = await ask(make_chat(store, llm), "I went to the shop.")
    assert turn.answer == "That's nice."
    assert stored(store)[0]["meta"]["cut"] == "format"


async def test_a_template_slot_first_is_retried(store: Store) -> None:
    llm = ScriptedLlm("Hello [user_persona_name]! How are you?", "Hello! How are you today?")
    turn = await ask(make_chat(store, llm), "Hello Fay.")
    assert turn.answer == "Hello! How are you today?"
    assert stored(store)[0]["meta"]["retried"] == "format"


async def test_an_empty_reply_is_retried_then_replaced(store: Store) -> None:
    turn = await ask(make_chat(store, ScriptedLlm("", "  ")), "Hmm.")
    assert turn.answer in guard.FALLBACKS["en"]
    assert stored(store)[0]["meta"]["rejected"] == "empty"


async def test_the_model_gets_stop_strings_and_the_repeat_penalty(store: Store) -> None:
    llm = ScriptedLlm("Good morning to you too. Did you sleep well?")
    await ask(make_chat(store, llm), "Good morning.")
    (call,) = llm.calls
    assert call["repeat_penalty"] == LlmConfig().repeat_penalty
    assert "\nAnn:" in call["stop_strings"] and "\n- [" in call["stop_strings"]


async def test_persona_and_examples_come_first_then_history(store: Store) -> None:
    llm = ScriptedLlm("Good morning to you too. Did you sleep well?", "I'm glad to hear it.")
    chat = make_chat(store, llm)
    await ask(chat, "Good morning.")
    await ask(chat, "I slept well, thank you.")
    messages = llm.calls[-1]["messages"]
    prefix = chat.prefix()
    assert messages[: len(prefix)] == prefix  # the same start for every turn and user
    assert prefix[0] == {"role": "system", "content": AgentConfig().persona}
    assert len(prefix) == 1 + 2 * len(guard.EXAMPLES)
    assert [m["content"] for m in messages[len(prefix) :]] == [
        "Good morning.",
        "Good morning to you too. Did you sleep well?",
        "I slept well, thank you.",
    ]
    assert make_chat(store, llm, few_shot=False).prefix() == prefix[:1]


async def test_a_stored_loop_from_before_the_guardrails_is_left_out(store: Store) -> None:
    conversation = store.call(records.conversation_for, "Ann", "d1")
    store.call(records.record_turn, conversation, "Hi", "Hello Ann, how are you?", {})
    store.call(records.record_turn, conversation, "Sad.", "I'm so sorry… I promise. " * 8, {})
    store.call(records.record_turn, conversation, "Ok", "- [2026/12/01 10:28:31] Ann: ok", {})
    llm = ScriptedLlm("I'm glad you're here. What would you like to do today?")
    await ask(make_chat(store, llm), "Let's talk.")
    prompt = json.dumps(llm.calls[0]["messages"])
    assert "Hello Ann, how are you?" in prompt
    assert "I promise" not in prompt and "10:28:31" not in prompt


# --- the real model --------------------------------------------------------------------------

SESSION = [
    "Good morning Fay.",
    "I didn't sleep very well last night.",
    "My knees ache when it's cold.",
    "My daughter phoned yesterday, she lives far away.",
    "I miss her a lot.",
    "I used to be a teacher, you know.",
    "What do you like to talk about?",
    "I made some soup for lunch.",
    "Do you ever get lonely?",
    "Thank you for keeping me company.",
]


@pytest.mark.models
async def test_ten_turns_with_smollm2_never_loop_and_stay_short(store: Store, local_llm) -> None:
    chat = Chat(local_llm, store, AgentConfig(extract_every_turns=0), LlmConfig())
    bounds = AgentConfig()
    for question in SESSION:
        turn = await ask(chat, question)
        assert turn.answer, question
        assert not hygiene.looping(turn.answer), turn.answer
        assert hygiene.artifact(turn.answer, ("Ann", "Fay")) is None, turn.answer
        assert word_count(turn.answer) <= bounds.max_words, turn.answer
        assert sum(guard.sentences_in(s) for s in turn.sentences) <= bounds.max_sentences
    rows = stored(store)
    assert len(rows) == len(SESSION)
    assert not any(r["meta"].get("rejected") == "loop" for r in rows)
    await chat.close()


# --- the extraction's hygiene ----------------------------------------------------------------

TURNS = [
    ("My daughter Lisa visits on Sunday.", "How lovely, you must look forward to it."),
    ("I take my blood pressure pills every morning.", "Good, a routine helps."),
    ("I love green tea with honey.", "Green tea with honey sounds soothing."),
]


def test_extracted_items_must_be_grounded_and_free_of_prompt_format() -> None:
    items = [
        Item("user_persona", "Ann's daughter Lisa visits on Sunday."),
        Item("user_persona", "Ann takes blood pressure pills every morning."),
        Item("user_persona", "The user's favorite hobby is [user_persona_name]."),
        Item("user_persona", "Ann loves painting and travelling to Spain."),  # never said
        Item("important_event", "- [2026/12/01 10:28:31] User: hello"),
        Item("character_persona", "User: wants green tea"),
        Item("user_persona", "Ann's phone number is 555 123 4567."),
        Item("recent_digest", "We talked about Lisa's visit and green tea with honey."),
        Item("user_persona", "Ann likes it a lot."),  # says nothing
        Item("important_event", "Ann sorry sorry sorry Ann sorry sorry sorry Ann sorry sorry"),
    ]
    kept, dropped = extract.drop_unfounded(items, TURNS, "Ann", "Fay")
    assert kept == [items[0], items[1], items[7]]
    reasons = {d["text"]: d["reason"] for d in dropped}
    assert reasons[items[2].text] == "placeholder"
    assert reasons[items[4].text] == "stamp"
    assert reasons[items[5].text] == "speaker"
    assert reasons[items[3].text].startswith("ungrounded")
    assert reasons[items[6].text].startswith("ungrounded")


def test_what_only_the_model_said_is_no_fact_about_the_user() -> None:
    item = Item("user_persona", "Ann finds routines soothing and helpful.")
    kept, _ = extract.drop_unfounded([item], TURNS, "Ann", "Fay")
    assert kept == []


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # What SmolLM2-135M wrote in the measured sessions (fayd/memory/extract.py).
        ("<p>How do you feel about the recent conversations?</strong>", "markup"),
        ("[User's past life, a lasting fact about you and your family.", "markup"),
        ("You are very kind and caring about me!", "reply"),
        ("I'm so sorry, I can't remember where you'd", "reply"),
        ("Ann: My daughter Lisa visits on Sunday.", "speaker"),
        ("The user has a fond memory of cricket. The user has a fond memory of cricket.", "loop"),
        # A true start does not carry an invented end.
        ("Ann's daughter Lisa visits on Sunday. She brings her three dogs.", "ungrounded (0.00)"),
    ],
)
def test_what_the_small_model_writes_instead_of_notes_is_dropped(text: str, why: str) -> None:
    kept, (dropped,) = extract.drop_unfounded([Item("user_persona", text)], TURNS, "Ann", "Fay")
    assert kept == [] and dropped["reason"] == why


def test_extraction_writes_only_clean_items_from_a_crafted_answer(store: Store) -> None:
    conversation = store.call(records.conversation_for, "Ann", "d1")
    for q, a in TURNS:
        store.call(records.record_turn, conversation, q, a, {})
    store.call(
        records.record_turn, conversation, "I had a nap.", "Tell me more?", {"rejected": "echo"}
    )
    answer = json.dumps(
        {
            "memories": [
                {"category": "user_persona", "content": "Ann loves green tea with honey."},
                {"category": "user_persona", "content": "Ann's hobby is [user_persona_name]."},
                {"category": "important_event", "content": "Lisa visits Ann on Sunday."},
                {"category": "user_persona", "content": "Ann is a retired pilot from Ohio."},
            ]
        }
    )
    llm = ScriptedLlm(answer, chunk=50, delay_s=0)
    report = extract.run_extraction(store, llm, "Ann", conversation, 4, 4)
    assert [w["text"] for w in report["written"]] == [
        "Ann loves green tea with honey.",
        "Lisa visits Ann on Sunday.",
    ]
    assert len(report["dropped"]) == 2
    prompt = llm.calls[0]["messages"][1]["content"]
    assert "Ann: I had a nap." in prompt and "Tell me more?" not in prompt  # rejected reply
    persona = Documents(store).read("Ann", "user_persona")
    assert persona is not None and [e.text for e in persona.entries] == [
        "Ann loves green tea with honey."
    ]


async def test_a_turn_in_a_language_the_model_cannot_write_hears_a_listening_line(
    store: Store,
) -> None:
    # SmolLM2-135M (the default) writes no sense in Chinese: "我的孙子是一个昨天…".
    llm = ScriptedLlm("我的孙子是一个昨天， 从北京上计算机出现在草梨突也不能决定。")
    chat = make_chat(store, llm)
    turn = await ask(chat, "我以前在纺织厂干了三十年，三班倒。")
    assert llm.calls == []
    assert turn.answer in guard.FALLBACKS["zh"]
    assert stored(store)[-1]["meta"]["rejected"] == "language"
    # A model that speaks it (llm.languages, or a model of one's own) is asked.
    cfg = AgentConfig(extract_every_turns=0, memory_tokens=0)
    able = Chat(ScriptedLlm("三十年真不容易。"), store, cfg, LlmConfig(languages="en,zh"))
    assert (await ask(able, "我以前在纺织厂干了三十年，三班倒。")).answer == "三十年真不容易。"
