from __future__ import annotations

from pathlib import Path

from fayd.agent.chat import Agent
from fayd.config import AgentConfig, LlmConfig
from fayd.store import Store, records


def test_prompt_order_keeps_the_stable_part_first() -> None:
    agent = Agent(None, None, AgentConfig(persona="You are Fay."), LlmConfig())  # type: ignore[arg-type]
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
