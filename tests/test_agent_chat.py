from __future__ import annotations

from fayd.agent.chat import Agent
from fayd.config import AgentConfig, LlmConfig


def test_prompt_keeps_the_persona_first_and_adds_memory_after_it() -> None:
    agent = Agent(None, None, AgentConfig(persona="You are Fay."), LlmConfig())  # type: ignore[arg-type]
    plain = agent.messages([], "Hi")
    assert plain == [
        {"role": "system", "content": "You are Fay."},
        {"role": "user", "content": "Hi"},
    ]
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    context = "Things you remember:\n- [2026/11/28 10:00:00] Ann likes green tea"
    system, *rest = agent.messages(history, "What do I like?", context)
    assert system["content"] == f"You are Fay.\n\n{context}"  # same prefix: KV cache reuse
    assert rest == [*history, {"role": "user", "content": "What do I like?"}]
