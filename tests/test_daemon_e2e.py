"""fayd end to end: the daemon as a subprocess on its embedded defaults (private
mosquitto, real models, real SQLite), driven by a simulated device over MQTT."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from fayd.agent.expression import load_rules, sentiment
from fayd.protocol import AudioChunk
from fayd.testing.simulator import SimDevice

from .conftest import DaemonProcess


def words(text: str) -> set[str]:
    return {w.strip(".,!?;:'\"").lower() for w in text.split()}


def stored_messages(
    daemon: DaemonProcess, device: str, at_least: int = 2
) -> list[tuple[str, str, dict]]:
    """The device's stored messages, once there are ``at_least`` (within 15 s): a turn is
    kept just after its reply's last frame is sent."""
    deadline = time.monotonic() + 15
    while True:
        with sqlite3.connect(daemon.state / "fayd.db") as conn:
            rows = conn.execute(
                "SELECT m.role, m.text, m.meta FROM messages m JOIN conversations c"
                " ON c.id = m.conversation_id WHERE c.device = ? ORDER BY m.id",
                [device],
            ).fetchall()
        if len(rows) >= at_least or time.monotonic() > deadline:
            return [(role, text, json.loads(meta)) for role, text, meta in rows]
        time.sleep(0.1)


async def test_a_real_voice_turn(daemon: DaemonProcess, speak) -> None:
    async with daemon.sim("kitchen-1") as device:
        await device.hello()
        await device.speak(speak("What is the weather like today?"))
        reply = await device.collect_reply()

    # The device heard a reply: text, audio framing, and decodable PCM of plausible length.
    assert reply.text.strip()
    audio = reply.audio_humans
    assert audio[0].is_first and not audio[0].is_end
    assert not any(h.is_first for h in audio[1:])
    assert audio[-1].is_end and not any(h.is_end for h in audio[:-1])
    assert all(h.stream == audio[0].stream for h in audio)
    spoken = [h for h in audio if h.text]
    assert " ".join(h.text for h in spoken) == reply.text
    assert all(h.lips and h.time and h.time > 0 for h in spoken)
    # Seed 000's semantics ride on every spoken chunk: Sentiment always, Action by the rules.
    rules = load_rules()
    assert all(h.sentiment == sentiment(h.text) for h in spoken)
    assert all(h.action == rules.match(h.text) for h in spoken)
    chunks = [f for k, f in reply.frames if k == "audio"]
    assert chunks[0].start and chunks[-1].end
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    seconds = len(reply.pcm) / 2 / reply.rate
    assert 0.3 < seconds < 60
    assert abs(seconds - sum(h.time for h in spoken)) < 0.05

    # The conversation is stored, with what fayd heard.
    [(role_q, question, meta), (role_a, answer, _)] = stored_messages(daemon, "kitchen-1")[-2:]
    assert (role_q, role_a) == ("user", "assistant")
    assert {"weather", "today"} <= words(question)
    assert answer == reply.text
    assert meta["source"] == "voice"
    assert meta["timings"]["asr_ms"] >= 0 and meta["timings"]["first_audio_ms"] > 0
    # The transcript was made during the pause, before the VAD's hangover ended the utterance.
    status = json.loads(daemon.cli("status", "--json").stdout)
    [device] = [d for d in status["devices"] if d["id"] == "kitchen-1"]
    assert device["asr_speculated"] >= 1


async def test_a_text_turn_over_mqtt(daemon: DaemonProcess) -> None:
    async with daemon.sim("screen-1") as device:
        await device.hello(roles=("screen",), user="ann")  # ann's: its text speaks for her
        await device.say_text("Hello! Please tell me a short joke.", user="ann")
        reply = await device.collect_reply()
    assert reply.text.strip()
    assert not reply.pcm and not reply.audio_humans  # a screen has no speaker
    texts = [f for k, f in reply.frames if k == "human" and f.key == "text"]
    assert texts[0].is_first and texts[-1].is_end
    [*_, (_, question, meta), _] = stored_messages(daemon, "screen-1")
    assert question == "Hello! Please tell me a short joke." and meta["source"] == "text"


def test_cli_say_and_status(daemon: DaemonProcess) -> None:
    said = daemon.cli("say", "Good", "morning!")
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip()
    status = daemon.cli("status")
    assert status.returncode == 0, status.stderr
    assert "ready" in status.stdout and "(embedded), connected" in status.stdout
    raw = json.loads(daemon.cli("status", "--json").stdout)
    assert all(m["ok"] for m in raw["models"].values())
    assert raw["broker"]["connected"] and raw["broker"]["embedded"]
    assert raw["loop_lag"]["samples"] > 0 and raw["loop_lag"]["p99_ms"] >= 0
    assert "event loop: lag p50" in status.stdout


@pytest.mark.parametrize(
    ("kind", "payload", "code"),
    [
        ("hello", b"{not json", "malformed"),
        ("text", b'{"text": ""}', "malformed"),
        ("audio", b"FA\x01\x00\x00\x00", "malformed"),
        ("audio", AudioChunk(1, 0, 16000).encode() + b"\0" * 20000, "too-large"),
        ("hello", b'{"device": "someone-else", "roles": ["mic"]}', "bad-id"),
        ("human", b'{"Topic":"human","Data":{"Key":"text"}}', "unexpected"),
    ],
)
async def test_bad_frames_get_an_error_and_nothing_else_breaks(
    daemon: DaemonProcess, kind: str, payload: bytes, code: str
) -> None:
    # (A kind the protocol lacks never reaches fayd: the broker's ACL has no topic for it,
    # tests/test_security_quotas.py; the decoder's "unknown" is in tests/test_protocol.py.)
    async with daemon.sim("fuzz-1") as device:
        await device.publish(kind, payload)
        got_kind, frame, _ = await _next(device)
        assert got_kind == "error" and frame.code == code
        # The same device is still served afterwards.
        await device.hello(roles=("screen",))
        await device.say_text("Are you still there?")
        assert (await device.collect_reply()).text


async def _next(device: SimDevice):
    import asyncio

    return await asyncio.wait_for(device.received.get(), 30)


def test_the_exchange_is_remembered_with_tags(daemon: DaemonProcess) -> None:
    import time

    said = daemon.cli("say", "My granddaughter Lily visits every Sunday.", "--user", "rosa")
    assert said.returncode == 0, said.stderr
    deadline = time.monotonic() + 120
    while True:  # the memory write runs after the reply, in the background
        found = daemon.cli("memory", "search", "Lily", "--user", "rosa", "-n", "3", "--json")
        assert found.returncode == 0, found.stderr
        # Another test's user "rosa" has sensor events: wait for this exchange's node.
        nodes = [n for n in json.loads(found.stdout) if "Lily" in n["content"]]
        if nodes or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    [node, *_] = nodes
    assert node["node_type"] == "conversation"
    # The user's words always; the reply too unless the guardrails rejected it.
    assert node["content"].startswith("rosa：My granddaughter Lily visits every Sunday.")
    assert "kind:observation" in node["tags"] and "source:conversation" in node["tags"]
    assert any(t.startswith("session:") for t in node["tags"])
    assert "device:cli" in node["tags"]
