"""RemoteLlm against a real OpenAI-compatible server: llama-cpp-python's own, serving the
default model in a subprocess. Needs the ``server`` extra (fastapi, pydantic-settings…)."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fayd.errors import LinkError, ModelError
from fayd.llm.remote import LlmUnreachable, RemoteLlm
from fayd.models import resolve
from fayd.testing.harness import free_port

API_KEY = "fayd-test-key"
QUESTION = [{"role": "user", "content": "Name three colours."}]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("fastapi") is None
    or importlib.util.find_spec("pydantic_settings") is None,
    reason="llama-cpp-python's server is not installed (pip install -e '.[server]')",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI server on a free loopback port; yields its base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(resolve("llm").files["model"])]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1"]
    argv += ["--api_key", API_KEY]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_ready(proc, port, log, within_s=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1, trust_env=False)
            if r.status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"llama_cpp.server not ready after {within_s} s:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def remote(server: str) -> Iterator[RemoteLlm]:
    with RemoteLlm(server, api_key=API_KEY, timeout_s=60) as llm:
        yield llm


def test_streams_the_same_greedy_reply_as_the_local_model(remote: RemoteLlm, local_llm) -> None:
    # Same GGUF, same thread count, greedy decoding: the server's reply must be the local one.
    # The server defaults repeat_penalty to 1.1, llama-cpp-python to 1.0: pin it.
    kwargs = {"max_tokens": 24, "temperature": 0.0, "seed": 7, "repeat_penalty": 1.0}
    deltas = list(remote.stream_chat(QUESTION, **kwargs))
    assert len(deltas) > 3, deltas  # streamed piece by piece, not as one block
    assert "".join(deltas) == local_llm.chat(QUESTION, **kwargs)


def test_models_lists_the_served_model(remote: RemoteLlm, server: str) -> None:
    (served,) = remote.models()
    assert "SmolLM2" in served
    with RemoteLlm(server, model=served, api_key=API_KEY) as named:
        assert named.chat(QUESTION, max_tokens=4, temperature=0.0)


def test_bare_server_address_gets_v1(server: str) -> None:
    assert RemoteLlm(server).base_url == f"{server}/v1"
    assert RemoteLlm(f"{server}/v1/").base_url == f"{server}/v1"


def test_stop_event_ends_the_stream_and_the_server_carries_on(remote: RemoteLlm) -> None:
    stop = threading.Event()
    got = []
    for delta in remote.stream_chat(QUESTION, max_tokens=200, temperature=0.0, stop=stop):
        got.append(delta)
        stop.set()  # barge-in after the first delta
    assert len(got) == 1
    # A stop set before the call sends nothing at all.
    assert list(remote.stream_chat(QUESTION, stop=stop)) == []
    # The interrupted request's connection was closed; the server still answers.
    assert remote.chat(QUESTION, max_tokens=4, temperature=0.0)


def test_stop_strings_reach_the_server(remote: RemoteLlm) -> None:
    full = remote.chat(QUESTION, max_tokens=24, temperature=0.0)
    word = full.split()[1]  # stop at the second word: the reply ends before it
    cut = remote.chat(QUESTION, max_tokens=24, temperature=0.0, stop_strings=[word])
    assert word not in cut and full.startswith(cut)


def test_failed_request_is_a_model_error_naming_the_url(remote: RemoteLlm) -> None:
    too_long = [{"role": "user", "content": "hello " * 3000}]  # > the 2048-token context
    # This server answers a failing *streamed* request with 200 and an empty stream.
    with pytest.raises(ModelError, match="empty reply stream") as err:
        remote.chat(too_long, max_tokens=8)
    assert remote.base_url in str(err.value)
    # An invalid body is refused before streaming: the server's own message comes through.
    with pytest.raises(ModelError, match=r"(?s)refused the request: HTTP \d+: .*role"):
        remote.chat([{"content": "no role"}], max_tokens=8)
    # The server dropped the failed requests' connections; the next request still works.
    assert remote.chat(QUESTION, max_tokens=4, temperature=0.0)


def test_wrong_api_key_is_named(server: str) -> None:
    with RemoteLlm(server, api_key="wrong") as llm, pytest.raises(ModelError, match="API key"):
        llm.chat(QUESTION, max_tokens=4)


def test_nothing_listening_is_a_link_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with RemoteLlm(url, timeout_s=5) as llm, pytest.raises(LlmUnreachable) as err:
        llm.chat(QUESTION)
    assert isinstance(err.value, LinkError) and isinstance(err.value, ModelError)
    assert f"{url}/v1/chat/completions" in str(err.value)


def test_silent_server_times_out() -> None:
    # A real socket that accepts connections (the kernel's backlog) and never answers.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with RemoteLlm(url, timeout_s=0.5) as llm, pytest.raises(LlmUnreachable) as err:
            llm.chat(QUESTION)
    assert "did not answer within 0.5 s" in str(err.value) and url in str(err.value)


def test_stream_that_stalls_midway_times_out() -> None:
    # A real socket peer that sends the headers and one event, then goes quiet.
    event = b'data: {"choices": [{"delta": {"content": "Hello"}}]}\n\n'
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        done = threading.Event()

        def serve() -> None:
            conn, _ = sock.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
                conn.sendall(b"connection: close\r\n\r\n" + event)
                done.wait(10)  # bounded: the client gives up long before

        peer = threading.Thread(target=serve)
        peer.start()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        got = []
        try:
            with RemoteLlm(url, timeout_s=0.5) as llm, pytest.raises(LlmUnreachable) as err:
                for delta in llm.stream_chat(QUESTION):
                    got.append(delta)
        finally:
            done.set()
            peer.join(10)
    assert got == ["Hello"]
    assert "did not answer within 0.5 s" in str(err.value)


def test_bad_urls_are_refused() -> None:
    for bad in ("", "localhost:8080", "ftp://host/v1"):
        with pytest.raises(ModelError, match="URL"):
            RemoteLlm(bad)


def test_the_daemon_answers_through_a_lan_server(server: str, make_daemon) -> None:
    daemon = make_daemon({"FAYD_LLM_URL": server, "FAYD_LLM_API_KEY": API_KEY})
    said = daemon.cli("say", "Tell me about the sea.")
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip()
    status = json.loads(daemon.cli("status", "--json").stdout)
    llm = status["models"]["llm"]
    assert (llm["ok"], llm["file"], llm["problem"], llm["fallback"]) == (True, server, None, None)


def test_a_server_that_is_down_is_reported_and_spoken_about(make_daemon) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    daemon = make_daemon({"FAYD_LLM_URL": url, "FAYD_LLM_TIMEOUT_S": "2"})
    status = json.loads(daemon.cli("status", "--json").stdout)
    assert url in status["models"]["llm"]["problem"]
    said = daemon.cli("say", "Tell me about the sea.")  # for the model, not small talk
    # The person hears why; a script sees the turn failed.
    assert said.returncode == 1 and "the language model did not answer" in said.stderr
    assert "not answering" in said.stdout


@pytest.mark.parametrize(
    "question",
    ["What does the boiler manual say about the pressure?", "Do you like cats?"],
)
async def test_the_tool_loop_on_a_lan_server_always_parses_and_never_repeats(
    server: str, question: str
) -> None:
    """Fay's dual-model mode (``llm.tools_url``): the loop's JSON is written under the
    server's own grammar (llama.cpp's ``response_format``) and checked again here."""
    from fayd.agent.tools import Tool, Toolbox, ToolLoop

    calls: list[dict] = []

    async def search(args: dict) -> str:
        calls.append(args)
        return "From boiler.md: The needle should be between 1 and 1.5 bar."

    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    tool = Tool("kb_search", "Search the household's documents.", schema, search, source="kb")
    llm = RemoteLlm(server, api_key=API_KEY, timeout_s=60)
    loop = ToolLoop(llm, Toolbox([tool]), steps=30)
    found = await loop.run(question)
    assert found.invalid_json == 0 and found.ended in ("none", "repeats", "steps"), found.record()
    assert len({json.dumps(c, sort_keys=True) for c in calls}) == len(calls) == len(found.calls)
