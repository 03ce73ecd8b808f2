"""Poison stops at the edge (issue 14): a string no file, socket or SQLite bind can write (a
lone surrogate: ``"\\udfff"`` is valid JSON) or a bad device id, from a device, the API, MCP
or an imported file, is refused where it enters with the field named; nothing behind the
edge is crashed by it. Against the real daemon, its embedded mosquitto (or a plain one) and
real SQLite."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import aiomqtt
import httpx
import pytest

from fayd.auth import read_token
from fayd.errors import ProtocolError
from fayd.protocol import Error, SensorEvent, Topics, decode, encode
from fayd.store import Store
from fayd.store import devices_records as reg
from fayd.testing.harness import DaemonProcess

from .conftest import ANY_DEVICE, needs_mosquitto

TOPICS = Topics()
#: JSON text with a lone surrogate escape: valid JSON, but its string cannot be UTF-8 encoded.
SURROGATE = "\\udfff"


def hello_with_user(device: str, user: str) -> bytes:
    return f'{{"v":1,"device":"{device}","roles":["sensor"],"user":"{user}"}}'.encode()


def event_json(seq: int, note: str) -> bytes:
    return f'{{"v":1,"seq":{seq},"sensor":"door","data":{{"open":true,"note":"{note}"}}}}'.encode()


async def down_frames(client: aiomqtt.Client, want: int, within_s: float = 20) -> list[Any]:
    """The next ``want`` downlink frames (kind, frame) a raw client receives."""
    got: list[Any] = []
    async with asyncio.timeout(within_s):
        async for message in client.messages:
            kind = message.topic.value.rsplit("/", 1)[1]
            got.append((kind, decode(kind, bytes(message.payload))))  # type: ignore[arg-type]
            if len(got) >= want:
                return got
    return got


def status(daemon: DaemonProcess) -> dict[str, Any]:
    done = daemon.cli("status", "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def hub_restarts(daemon: DaemonProcess) -> int:
    return next(c["restarts"] for c in status(daemon)["components"] if c["name"] == "hub")


def post(daemon: DaemonProcess, path: str, body: bytes) -> httpx.Response:
    """A raw JSON body (httpx's json= could not even encode a lone surrogate)."""
    headers = {
        "Authorization": f"Bearer {read_token(daemon.state)}",
        "Content-Type": "application/json",
    }
    return httpx.post(daemon.runtime["api"] + path, content=body, headers=headers, timeout=120)


def stored_seqs(daemon: DaemonProcess, device: str) -> set[int]:
    conn = sqlite3.connect(daemon.state / "fayd.db", timeout=30)
    try:
        rows = conn.execute("SELECT seq FROM device_events WHERE device = ?", [device])
        return {seq for (seq,) in rows}
    finally:
        conn.close()


async def a_turn_works(daemon: DaemonProcess, device: str) -> str:
    """Another device's typed turn is answered (the hub and the agent still serve)."""
    async with daemon.sim(device) as sim:
        await sim.hello(roles=("screen",))
        await sim.say_text("what time is it?")
        reply = await sim.collect_reply(within_s=120)
    assert reply.text
    return reply.text


async def connected(daemon: DaemonProcess, within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while not status(daemon)["broker"]["connected"]:
        assert time.monotonic() < deadline, "fayd's MQTT link did not connect"
        await asyncio.sleep(0.2)


async def wait_for_log(daemon: DaemonProcess, text: str, count: int, within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while daemon.log_text().count(text) < count:
        assert time.monotonic() < deadline, f"not {count}x {text!r} in:\n{daemon.log_text()}"
        await asyncio.sleep(0.2)


@needs_mosquitto
async def test_poisoned_frames_are_refused_with_the_field_and_nothing_else_breaks(
    make_daemon,
) -> None:
    daemon = make_daemon()
    async with daemon.mqtt_client("rogue-1", timeout=10) as rogue:
        await rogue.subscribe(TOPICS.all_down("rogue-1"), qos=1)
        # The hello that crashed the device hub (every device's conversation with it).
        hello = hello_with_user("rogue-1", SURROGATE)
        await rogue.publish(TOPICS.up("rogue-1", "hello"), hello, qos=1)
        [(kind, error)] = await down_frames(rogue, 1)
        assert kind == "error" and (error.code, error.field) == ("malformed", "user")
        assert "lone surrogate \\udfff" in error.message

        # Ten events, the fifth poisoned: it is refused alone, its neighbours are stored.
        for seq in range(1, 11):
            note = SURROGATE if seq == 5 else f"n{seq}"
            await rogue.publish(TOPICS.up("rogue-1", "event"), event_json(seq, note), qos=1)
        answers = await down_frames(rogue, 10)
        acks = {int(f.ref) for k, f in answers if k == "ack"}
        errors = [f for k, f in answers if k == "error"]
        assert acks == set(range(1, 11)) - {5}
        assert [e.field for e in errors] == ["data.note"]
        # Huge numbers crashed the hub too (an int too large for a float, over 4,300 digits).
        huge = (
            b'{"v":1,"uptime_s":1' + b"0" * 400 + b"}",
            b'{"v":1,"seq":1' + b"0" * 5000 + b"}",
        )
        for payload in huge:
            await rogue.publish(TOPICS.up("rogue-1", "heartbeat"), payload, qos=1)
        refused = await down_frames(rogue, 2)
        assert [f.code for _, f in refused] == ["malformed", "malformed"]
        assert refused[0][1].field == "uptime_s"
    assert stored_seqs(daemon, "rogue-1") == set(range(1, 11)) - {5}

    # The API: 400 naming the field, where the text of /api/say was a 500 and a user name
    # made every later turn fail.
    said = post(daemon, "/api/say", f'{{"text":"hi {SURROGATE}"}}'.encode())
    assert said.status_code == 400 and said.json()["error"].startswith("text has a lone surrogate")
    said = post(daemon, "/api/say", f'{{"text":"hi","user":"{SURROGATE}"}}'.encode())
    assert said.status_code == 400 and said.json()["error"].startswith("user has a lone surrogate")
    said = post(daemon, "/api/say", b'{"text":"hi","device":"a b"}')
    assert said.status_code == 400 and "bad device id 'a b'" in said.json()["error"]
    reset = post(daemon, "/api/reset", f'{{"user":"{SURROGATE}"}}'.encode())
    assert reset.status_code == 400 and "user" in reset.json()["error"]
    settings = post(daemon, "/api/devices/" + "x" * 300 + "/settings", b"{}")
    assert settings.status_code == 400 and "300 characters" in settings.json()["error"]
    nested = post(daemon, "/api/say", f'{{"text":"hi","extra":[{{"k{SURROGATE}":1}}]}}'.encode())
    assert nested.status_code == 400 and "its key" in nested.json()["error"]

    # `fayd devices set … user=` with a byte that is not UTF-8 (a lone surrogate in argv).
    daemon.add_device("cuff-2")
    done = daemon.cli("devices", "set", "cuff-2", os.fsdecode(b"user=\xff"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(
        "user has a lone surrogate \\udcff at character 0 (not UTF-8 text)"
    )

    # Behind the edge, all is well: another device's turn, the API's, the status.
    await a_turn_works(daemon, "good-1")
    said = post(daemon, "/api/say", b'{"text":"what time is it?","user":"ann"}')
    assert said.status_code == 200, said.text
    assert daemon.api("GET", "/api/status").status_code == 200
    assert hub_restarts(daemon) == 0
    log = daemon.log_text()
    assert "Traceback" not in log and "component hub failed" not in log
    assert log.count("device rogue-1 sent a bad hello frame") == 1


def broker_pid(daemon: DaemonProcess) -> int:
    """The embedded mosquitto: the daemon's child running mosquitto."""
    assert daemon.proc is not None
    task = Path(f"/proc/{daemon.proc.pid}/task")
    children = {int(p) for t in task.iterdir() for p in (t / "children").read_text().split()}
    found = [p for p in children if b"mosquitto" in Path(f"/proc/{p}/cmdline").read_bytes()]
    assert len(found) == 1, found
    return found[0]


@needs_mosquitto
async def test_a_retained_poisoned_hello_crashes_nothing_at_start_or_reconnect(
    make_daemon,
) -> None:
    daemon = make_daemon()
    async with daemon.mqtt_client("rogue-2", timeout=10) as rogue:
        hello = hello_with_user("rogue-2", SURROGATE)
        await rogue.publish(TOPICS.up("rogue-2", "hello"), hello, qos=1, retain=True)
    bad = "device rogue-2 sent a bad hello frame"
    await wait_for_log(daemon, bad, 1)

    # A restart: the broker keeps the retained hello (its persistence) and hands it over
    # again; a hello replayed from the broker's store is of before this start, so it is not
    # taken as the device's word now (the device says hello again when it connects).
    replayed = "device rogue-2: its hello from before this start is not taken as now"
    assert daemon.stop() == 0
    daemon.start()
    await wait_for_log(daemon, replayed, 1)
    await a_turn_works(daemon, "good-2")
    assert hub_restarts(daemon) == 0

    # The broker alone restarts (the daemon starts it again): the link's new subscription
    # gets the retained hello once more.
    os.kill(broker_pid(daemon), signal.SIGTERM)
    await wait_for_log(daemon, replayed, 2)
    await a_turn_works(daemon, "good-2")
    assert hub_restarts(daemon) == 0
    assert daemon.api("GET", "/api/status").status_code == 200
    log = daemon.log_text()
    assert "Traceback" not in log and "component hub failed" not in log


@needs_mosquitto
async def test_bad_device_ids_in_topics_are_logged_and_answered(make_daemon, broker) -> None:
    """On a broker without fayd's ACL (mqtt.url), anything can be published: an id with a
    space or of 300 characters is answered on its own down topic, and logged."""
    daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    async with aiomqtt.Client("127.0.0.1", broker.port, timeout=10) as client:
        for device in ("a b", "x" * 300):
            await client.subscribe(TOPICS.down(device, "error"), qos=1)
        await client.subscribe(TOPICS.down("ok-1", "error"), qos=1)
        await connected(daemon)
        for device in ("a b", "x" * 300):
            await client.publish(TOPICS.up(device, "hello"), hello_with_user(device, "ann"), qos=1)
        # A hello naming a device id with a "/" (on a good topic).
        await client.publish(TOPICS.up("ok-1", "hello"), hello_with_user("a/b", "ann"), qos=1)
        answers = await down_frames(client, 3, within_s=30)
    assert sorted((e.code, e.field) for _, e in answers) == [
        ("bad-id", "device"),
        ("bad-id", "topic"),
        ("bad-id", "topic"),
    ]
    log = daemon.log_text()
    assert "device a b sent a bad hello frame: bad device id 'a b'" in log
    assert "(300 characters)" in log
    assert "bad device id 'a/b'" in log
    assert hub_restarts(daemon) == 0


def test_one_bad_event_in_a_batch_fails_alone(tmp_path: Path) -> None:
    """The edge refuses such events; the writer isolates one anyway (a database error that
    is the event's, not the disk's), so its neighbours are stored."""
    store = Store(tmp_path / "fayd.db")
    try:
        batch = [
            ("d1", SensorEvent(seq=1, sensor="door")),
            ("d1", SensorEvent(seq=2, sensor="door\udfff")),  # made here, past the decoder
            ("d1", SensorEvent(seq=3, sensor="door")),
        ]
        result = store.call(reg.record_events, batch)
        assert result[0] is True and result[2] is True
        assert isinstance(result[1], str) and "surrogates not allowed" in result[1]
        assert store.call(reg.record_events, batch[:1]) == [False]  # seq 1 was committed
    finally:
        store.close()


def test_the_error_frame_names_the_field() -> None:
    with pytest.raises(ProtocolError) as caught:
        decode("text", f'{{"text":"hi","user":"ann","id":"{SURROGATE}"}}'.encode())
    frame = Error.of(caught.value)
    assert (frame.code, frame.field) == ("malformed", "id")
    assert decode("error", encode(frame)) == frame  # and it can be written


@pytest.mark.models
def test_fay_import_refuses_a_lone_surrogate_before_writing(tmp_path: Path, embedder) -> None:
    from fayd.memory import BadInput, Memory
    from fayd.memory.fay_io import import_fay

    stream = tmp_path / "fay" / "memory_stream"
    stream.mkdir(parents=True)
    node = (
        '{"node_id": %d, "node_type": "observation", "content": "%s", "importance": 3,'
        ' "created": %d, "last_retrieved": %d, "pointer_id": null}'
    )
    nodes = [node % (0, "fine", 0, 0), node % (1, f"bad {SURROGATE}", 1, 1)]
    (stream / "nodes.json").write_text("[" + ",".join(nodes) + "]")
    store = Store(tmp_path / "m.db")
    try:
        memory = Memory(store, embedder)
        with pytest.raises(BadInput, match=r"node #1: content has a lone surrogate"):
            import_fay(memory, tmp_path / "fay", progress=lambda _: None)
        assert memory.get_recent(None, 10) == []  # nothing written, not even node #0
        # A user folder whose name is not UTF-8 (it arrives as a lone surrogate).
        odd = tmp_path / "users" / os.fsdecode(b"gr\xffma") / "memory_stream"
        odd.mkdir(parents=True)
        (odd / "nodes.json").write_text("[" + nodes[0] + "]")
        with pytest.raises(BadInput, match=r"username has a lone surrogate"):
            import_fay(memory, tmp_path / "users", progress=lambda _: None)
    finally:
        store.close()


@pytest.mark.models
async def test_mcp_tools_refuse_a_lone_surrogate_naming_the_argument(
    tmp_path: Path, embedder
) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from fayd.mcp.server import build_server
    from fayd.memory import Memory

    store = Store(tmp_path / "m.db")
    try:
        server = build_server(Memory(store, embedder))
        result = await server.call_tool("memory_remember", {"content": "tea \udfff"})
        answer = json.loads(result.content[0].text)
        assert answer["ok"] is False and answer["error"].startswith("content has a lone surrogate")
        with pytest.raises(ToolError, match=r"filter_tags_any\[1\] has a lone surrogate"):
            await server.call_tool(
                "memory_search", {"query": "tea", "filter_tags_any": ["a", "b\udfff"]}
            )
        with pytest.raises(ToolError, match="username has a lone surrogate"):
            await server.call_tool("memory_get_user_profile", {"username": "\udfff"})
        ok = await server.call_tool("memory_remember", {"content": "Tea at four"})
        assert json.loads(ok.content[0].text)["ok"] is True
    finally:
        store.close()


@pytest.mark.models
async def test_the_mcp_server_outlives_a_poisoned_request(tmp_path: Path) -> None:
    """Over stdio, as a client sends it: the SDK's JSON parser refuses the line (it never
    reaches a tool and is not answered), and the next request is served."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "fayd", "mcp", "--no-llm", "--db", str(tmp_path / "m.db")),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path)},
    )
    assert proc.stdin and proc.stdout

    async def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # ensure_ascii: "\udfff" escaped
        await proc.stdin.drain()

    async def answer(request_id: int) -> dict[str, Any]:
        async with asyncio.timeout(120):
            while True:
                reply = json.loads(await proc.stdout.readline())
                if reply.get("id") == request_id:
                    return reply

    def call(request_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "memory_remember", "arguments": arguments}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    try:
        info = {"name": "test", "version": "1"}
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        await send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        await answer(1)
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send(call(2, {"content": "tea \udfff"}))
        await send(call(3, {"content": "Tea at four"}))
        served = await answer(3)
        assert json.loads(served["result"]["content"][0]["text"])["ok"] is True
        assert proc.returncode is None
    finally:
        proc.stdin.close()
        async with asyncio.timeout(30):
            await proc.wait()
