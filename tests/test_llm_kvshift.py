"""Keeping the LLM's cache when the history drops a block (fayd.llm.kvshift): where the gap
is, and with the real model, that the turn after a fall-back reads only what is new."""

from __future__ import annotations

from pathlib import Path

import pytest

from fayd.agent.chat import Chat
from fayd.config import AgentConfig, LlmConfig
from fayd.llm.kvshift import MIN_REUSED, PROBE, skipped_block
from fayd.store import Store, records
from tests.test_memory_extract import say

PERSONA = list(range(1000, 1040))
DROPPED = list(range(2000, 2060))
KEPT = list(range(3000, 3100))
NEW = list(range(4000, 4020))


def test_the_gap_after_the_common_prefix_is_found() -> None:
    cached = PERSONA + DROPPED + KEPT + [5, 6, 7]  # the last turn's context and reply
    assert skipped_block(cached, PERSONA + KEPT + NEW) == (40, 100, 100)


def test_no_gap_when_the_prompt_goes_on_from_the_cache_or_shares_too_little() -> None:
    assert skipped_block(PERSONA + KEPT, PERSONA + KEPT + NEW) is None  # a plain prefix hit
    assert skipped_block(PERSONA + DROPPED, PERSONA + NEW) is None  # nothing found again
    short = KEPT[: MIN_REUSED - 1]
    assert skipped_block(PERSONA + DROPPED + short, PERSONA + short + NEW) is None
    assert skipped_block([], PERSONA) is None and skipped_block(PERSONA, []) is None


def test_a_chance_match_of_a_few_tokens_does_not_cut_the_cache() -> None:
    # KEPT's first PROBE tokens also appear inside the dropped block, followed by other
    # tokens: the gap is where the longest run goes on.
    decoy = KEPT[:PROBE] + [9] * 5
    cached = PERSONA + DROPPED[:20] + decoy + DROPPED[20:] + KEPT
    start, end, reused = skipped_block(cached, PERSONA + KEPT + NEW)
    assert (start, reused) == (40, 100) and cached[end : end + 100] == KEPT


class WithoutShift:
    """The same model with llama-cpp-python's own prefix reuse only."""

    def __init__(self, llm) -> None:
        self._llm = llm

    def stream_chat(self, *args, **kwargs):
        llama = self._llm._llm
        shift = llama.generate
        del llama.generate  # the class's generate: no gap closing
        try:
            yield from self._llm.stream_chat(*args, **kwargs)
        finally:
            llama.generate = shift


FLOWERS = ("roses", "tulips", "sunflowers", "lavender")


async def tokens_read_after_a_fall_back(llm, local_llm, db: Path, monkeypatch) -> int:
    """Prompt tokens the model reads for the turn after the history falls back a block."""
    import llama_cpp

    store = Store(db)
    # No second attempts (fayd.agent.guard): one asks without the history, which would
    # count here as prompt reads that have nothing to do with the shift. Four different
    # flowers: a reply that repeats an earlier one is rejected and leaves the history.
    cfg = AgentConfig(history_turns=2, extract_every_turns=0, reply_retries=0)
    agent = Chat(llm, store, cfg, LlmConfig(max_tokens=16, temperature=0.0))
    local_llm._llm.reset()
    for flower in FLOWERS:  # windows of 0, 1, 2 and 3 exchanges; the next falls back to 2
        await say(agent, f"Tell me one thing about the {flower} in my garden.")
    conversation = store.call(records.conversation_for, "Ann", "d1")
    assert len(store.call(records.history, conversation, 8)) == 2 * 4  # none rejected
    read = 0
    plain_eval = llama_cpp.Llama.eval

    def counted(self, tokens):
        nonlocal read
        if len(tokens) > 1:  # the prompt, read in batches (the reply comes a token at a time)
            read += len(tokens)
        plain_eval(self, tokens)

    monkeypatch.setattr(llama_cpp.Llama, "eval", counted)
    turn = await say(agent, "And which flowers go well next to them?")
    monkeypatch.undo()
    assert turn.answer
    await agent.close()
    store.close()
    return read


@pytest.mark.models
async def test_the_turn_after_a_fall_back_reads_only_what_is_new(
    tmp_path: Path, local_llm, monkeypatch
) -> None:
    import llama_cpp

    without = await tokens_read_after_a_fall_back(
        WithoutShift(local_llm), local_llm, tmp_path / "a.db", monkeypatch
    )
    kept = await tokens_read_after_a_fall_back(local_llm, local_llm, tmp_path / "b.db", monkeypatch)
    # Without: the two kept exchanges and the question are read again. With: the question.
    assert without > 60 and kept < without // 3
    # The cache's positions were closed up: one a token, 0..n-1, no hole where the dropped
    # exchanges were (an unshifted cache would reach past n).
    llama = local_llm._llm
    memory = llama_cpp.llama_get_memory(llama._ctx.ctx)
    assert llama_cpp.llama_memory_seq_pos_min(memory, 0) == 0
    assert llama_cpp.llama_memory_seq_pos_max(memory, 0) == llama.n_tokens - 1
