from __future__ import annotations

from fayd.agent.chat import Agent
from fayd.config import AgentConfig, LlmConfig


def test_prompt_keeps_the_persona_first_and_adds_memories_after_it() -> None:
    agent = Agent(None, None, AgentConfig(persona="You are Fay."), LlmConfig())  # type: ignore[arg-type]
    plain = agent.messages([], "Hi")
    assert plain == [
        {"role": "system", "content": "You are Fay."},
        {"role": "user", "content": "Hi"},
    ]
    memories = [{"datetime": "2026/11/28 10:00:00", "content": "Ann likes green tea"}]
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    system, *rest = agent.messages(history, "What do I like?", memories, "Ann")
    assert system["content"].startswith("You are Fay.\n\n")  # same prefix: KV cache reuse
    assert "- [2026/11/28 10:00:00] Ann likes green tea" in system["content"]
    assert rest == [*history, {"role": "user", "content": "What do I like?"}]
