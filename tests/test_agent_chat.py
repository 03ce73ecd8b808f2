from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fayd.agent.chat import Chat
from fayd.agent.turn import Turn
from fayd.config import AgentConfig, LlmConfig
from fayd.protocol import Outgoing
from fayd.store import Store, records
from tests.test_memory_extract import wait_until


def test_prompt_order_keeps_the_stable_part_first() -> None:
    cfg = AgentConfig(persona="You are Fay.", few_shot=False)  # examples: test_chitchat.py
    agent = Chat(None, None, cfg, LlmConfig())  # type: ignore[arg-type]
    plain = agent.messages([], "Hi")
    assert plain == [
        {"role": "system", "content": "You are Fay."},
        {"role": "user", "content": "Hi"},
    ]
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    context = "Things you remember:\n- [2026/11/28 10:00:00] Ann likes green tea"
    assert agent.messages(history, "What do I like?", context) == [
        {"role": "system", "content": "You are Fay."},
        *history,
        {"role": "system", "content": context},  # after the history: only it changes
        {"role": "user", "content": "What do I like?"},
    ]


def test_history_is_trimmed_in_blocks_so_its_start_stays_put(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.db")
    conversation = store.call(records.conversation_for, "ann", "d1")
    firsts = []
    for turn in range(12):
        history = store.call(records.history, conversation, 4)
        firsts.append(history[0]["content"] if history else None)
        assert len(history) == 2 * (turn if turn < 4 else 4 + (turn - 4) % 4)
        store.call(records.record_turn, conversation, f"q{turn}", f"a{turn}", {})
    # The oldest exchange shown changes only when a block is dropped, not every turn.
    assert firsts == [None, "q0", "q0", "q0", "q0", "q0", "q0", "q0", "q4", "q4", "q4", "q4"]
    store.close()


class CountingModel:
    """The real model, counting the deltas the agent has pulled from it."""

    def __init__(self, llm) -> None:
        self._llm = llm
        self.pulled = 0

    def stream_chat(self, *args, **kwargs):
        for delta in self._llm.stream_chat(*args, **kwargs):
            self.pulled += 1
            yield delta


@pytest.mark.models
async def test_a_held_turn_pauses_the_model_between_tokens(tmp_path: Path, local_llm) -> None:
    model = CountingModel(local_llm)
    store = Store(tmp_path / "f.db")
    cfg = LlmConfig(max_tokens=40, temperature=0.0)
    agent = Chat(model, store, AgentConfig(extract_every_turns=0), cfg)
    turn = Turn(user="ann", device="d1", question="Tell me a short story about a cat.")
    with turn.hold_model():  # as while the first sentence is being synthesised
        reading = asyncio.create_task(say_turn(agent, turn))
        await asyncio.to_thread(lambda: wait_until(lambda: model.pulled >= 1))
        await asyncio.sleep(0.5)
        assert model.pulled == 1  # it waits after the token it had
    await reading
    assert model.pulled > 5 and turn.answer  # released: the reply goes on to its end
    await agent.close()
    store.close()


async def say_turn(agent: Chat, turn: Turn) -> None:
    async for _ in agent.reply(turn):
        pass


@pytest.mark.models
async def test_the_first_sentence_is_synthesised_while_the_model_waits(piper_tts) -> None:
    from fayd.agent.output import ReplyOutput

    class Frames:
        def send(self, device: str, frame: Outgoing) -> bool:
            return True

    held: list[bool] = []

    class Watched(ReplyOutput):
        def _synthesize(self, sentence: str):
            held.append(not turn.model_may_run.is_set())
            return super()._synthesize(sentence)

    async def sentences():
        for s in ("Hello there.", "Here is the rest of it.", "And the end."):
            yield s

    turn = Turn(user="ann", device="d1", question="hi")
    await Watched(Frames(), piper_tts, "d1", None).deliver(turn, sentences(), 1)
    assert held == [True, False, False] and turn.model_may_run.is_set()
