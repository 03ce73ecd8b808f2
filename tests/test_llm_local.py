"""SmolLM2-135M through llama-cpp-python: streaming, stopping, locking."""

from __future__ import annotations

import threading

import pytest

from fayd.errors import ModelError
from fayd.llm.local import LocalLlm
from fayd.llm.text import SentenceSplitter, ThinkFilter

pytestmark = pytest.mark.models

HELLO = [
    {"role": "system", "content": "You are a friendly assistant."},
    {"role": "user", "content": "Tell me a short story about a cat."},
]


def test_streams_a_reply(local_llm):
    deltas = list(local_llm.stream_chat(HELLO, max_tokens=24))
    assert len(deltas) > 1
    assert all(isinstance(d, str) and d for d in deltas)
    assert "".join(deltas).strip()


def test_chat_returns_the_joined_reply(local_llm):
    assert local_llm.chat([{"role": "user", "content": "Say hello."}], max_tokens=16).strip()


def test_stop_ends_the_stream_after_the_current_token(local_llm):
    stop = threading.Event()
    got = []
    for delta in local_llm.stream_chat(HELLO, max_tokens=64, temperature=0.0, stop=stop):
        got.append(delta)
        if len(got) == 3:
            stop.set()
    assert len(got) == 3
    # Unstopped, the same greedy reply is longer: the stop really cut it.
    assert len(list(local_llm.stream_chat(HELLO, max_tokens=8, temperature=0.0))) > 3


def test_stop_set_from_another_thread(local_llm):
    stop = threading.Event()
    first = threading.Event()
    got: list[str] = []

    def consume() -> None:
        for delta in local_llm.stream_chat(HELLO, max_tokens=512, stop=stop):
            got.append(delta)
            first.set()

    worker = threading.Thread(target=consume)
    worker.start()
    assert first.wait(timeout=60)
    stop.set()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert 1 <= len(got) < 512


def test_a_pre_set_stop_yields_nothing(local_llm):
    stop = threading.Event()
    stop.set()
    assert list(local_llm.stream_chat(HELLO, stop=stop)) == []


def test_an_abandoned_stream_releases_the_model(local_llm):
    stream = local_llm.stream_chat(HELLO, max_tokens=64)
    assert next(stream)
    stream.close()
    assert local_llm.chat(HELLO, max_tokens=8)


def test_context_facts_and_token_count(local_llm):
    assert local_llm.n_ctx == 2048
    assert local_llm.n_ctx_train == 8192
    assert 1 <= local_llm.count_tokens("Hello there, friend.") < 10


def test_a_prompt_over_the_context_is_a_model_error(local_llm):
    long = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(ModelError, match="context"):
        list(local_llm.stream_chat(long))
    assert local_llm.chat(HELLO, max_tokens=4)  # the lock was released


def test_stream_through_think_filter_and_splitter(local_llm):
    think, splitter = ThinkFilter(), SentenceSplitter()
    sentences = []
    for delta in local_llm.stream_chat(HELLO, max_tokens=48, temperature=0.0):
        sentences += splitter.feed(think.feed(delta))
    sentences += splitter.feed(think.flush())
    tail = splitter.flush()
    sentences += [tail] if tail else []
    assert sentences and all(s == s.strip() and s for s in sentences)


def test_missing_model_file(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        LocalLlm(tmp_path / "nope.gguf")


def test_garbage_model_file(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(1000))
    with pytest.raises(ModelError):
        LocalLlm(bad)
