"""The LLM's read prompt prefix kept between starts (fayd.llm.prefix_file): a second
model instance that takes it from the file answers exactly as one that read the prompt
itself, and reads fewer tokens; a damaged file, another prompt or a model built otherwise
is not used."""

from __future__ import annotations

from pathlib import Path

import pytest

from fayd.llm.local import LocalLlm
from fayd.models import resolve

pytestmark = pytest.mark.models

PREFIX = [
    {"role": "system", "content": "You are Fay, a kind companion. Answer in one sentence."},
    {"role": "user", "content": "Hi"},
]
QUESTION = [*PREFIX[:1], {"role": "user", "content": "What is a good breakfast?"}]


def fresh() -> LocalLlm:
    return LocalLlm(resolve("llm").files["model"], n_ctx=2048, threads=1, seed=7)


def tokens_read(llm: LocalLlm, messages: list[dict[str, str]]) -> tuple[str, int]:
    """The greedy reply, and how many prompt tokens llama.cpp had to read for it."""
    read = []
    inner = llm._llm.eval  # the tokens each eval call reads (the prefix cache's saving)

    def counting(tokens):  # type: ignore[no-untyped-def]
        read.append(len(tokens))
        return inner(tokens)

    llm._llm.eval = counting
    try:
        reply = llm.chat(messages, max_tokens=12, temperature=0.0)
    finally:
        llm._llm.eval = inner
    return reply, read[0]


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A model that read the prefix and kept it; its answer to QUESTION read afresh."""
    path = tmp_path_factory.mktemp("cache") / "llm-prefix.bin"
    first = fresh()
    first.chat(PREFIX, max_tokens=1)
    first.keep_prefix(path, PREFIX)
    reply, _ = tokens_read(fresh(), QUESTION)  # no cache at all: the whole prompt
    _, read_cold = tokens_read(fresh(), QUESTION)
    return path, reply, read_cold


def test_a_kept_prefix_gives_the_same_answer_reading_less(kept) -> None:
    path, cold_reply, read_cold = kept
    second = fresh()
    assert second.recall_prefix(path, PREFIX)
    reply, read = tokens_read(second, QUESTION)
    assert reply == cold_reply
    assert read < read_cold  # the system prompt was not read again


def test_another_prompt_is_not_taken(kept) -> None:
    path, _, _ = kept
    other = [{"role": "system", "content": "You are a pirate."}, PREFIX[1]]
    assert not fresh().recall_prefix(path, other)


def test_a_damaged_file_is_not_taken(kept, tmp_path: Path, caplog) -> None:
    path, _, _ = kept
    raw = bytearray(path.read_bytes())
    raw[-10] ^= 0xFF
    damaged = tmp_path / "llm-prefix.bin"
    damaged.write_bytes(bytes(raw))
    assert not fresh().recall_prefix(damaged, PREFIX)
    assert "damaged" in caplog.text
    truncated = tmp_path / "short.bin"
    truncated.write_bytes(path.read_bytes()[:1000])
    assert not fresh().recall_prefix(truncated, PREFIX)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\xff\x00not json\n" * 10)
    assert not fresh().recall_prefix(garbage, PREFIX)
    assert not fresh().recall_prefix(tmp_path / "missing.bin", PREFIX)


def test_a_model_built_otherwise_does_not_take_it(kept) -> None:
    path, _, _ = kept
    smaller = LocalLlm(resolve("llm").files["model"], n_ctx=1024, threads=1, seed=7)
    assert not smaller.recall_prefix(path, PREFIX)
