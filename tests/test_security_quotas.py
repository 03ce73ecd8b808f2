"""Quotas, attacked on the real daemon as a device or a token holder would: a device's
retained messages at depth, in number and big do not pile up in its embedded mosquitto
(read in mosquitto.db itself), a device's topics outside the protocol's kinds reach nobody,
and an HTTP body over its route's limit is refused (413) before it is read, on the control
API and on ``fayd mcp --http``, with the daemon's memory unmoved."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fayd.auth import read_token
from fayd.auth.body_limit import MIB
from fayd.protocol import Topics
from fayd.testing.harness import DaemonProcess, free_port
from fayd.testing.mosquitto_db import retained, save_now
from fayd.transport.retained import RETAINED_MAX

from .conftest import MOSQUITTO, wait_port

TOPICS = Topics("fayd/v1")
pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto binary not installed")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """A daemon of this file's own: the attacks below leave it changed."""
    d = DaemonProcess(tmp_path_factory.mktemp("fayd-quotas")).start()
    yield d
    assert d.stop() == 0, d.log_text()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def broker_of(daemon: DaemonProcess) -> tuple[int, Path]:
    """The embedded mosquitto's pid and its database file."""
    left = json.loads((daemon.state / "broker.pid").read_text())
    return int(left["pid"]), Path(left["conf"]).parent / "mosquitto.db"


def retained_of(daemon: DaemonProcess, device: str) -> dict[str, int]:
    """{kind: size} of what the broker retains under the device's topics, written now."""
    pid, db = broker_of(daemon)
    save_now(pid, db)
    head = f"fayd/v1/dev/{device}/"
    return {
        topic.removeprefix(head): item.size
        for topic, item in retained(db).items()
        if topic.startswith(head)
    }


async def until_retained(
    daemon: DaemonProcess, device: str, want: set[str], within_s: float = 60
) -> dict[str, int]:
    deadline = time.monotonic() + within_s
    while True:
        got = await asyncio.to_thread(retained_of, daemon, device)
        if set(got) == want or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.5)


def hello(device: str, pad: int = 0) -> bytes:
    caps = {"note": "x" * pad} if pad else {}
    return json.dumps({"v": 1, "device": device, "roles": ["sensor"], "caps": caps}).encode()


async def test_retained_messages_at_depth_in_number_and_big_do_not_pile_up(
    daemon: DaemonProcess,
) -> None:
    device = "quota-1"
    client = daemon.mqtt_client(device, timeout=10)
    broker_pid, db = broker_of(daemon)
    rss_before = rss_kib(broker_pid)
    async with client:
        # At depth, and on topics of its own: the ACL lets none through, so none is kept.
        for i in range(300):
            await client.publish(f"fayd/v1/dev/{device}/up/hello/{i}", b"x" * 1024, 1, True)
            await client.publish(f"fayd/v1/dev/{device}/up/x{i}/y/z", b"x" * 1024, 1, True)
            await client.publish(f"fayd/v1/dev/{device}/up/junk{i}", b"x" * 1024, 1, True)
        # In number, on the protocol's own kinds: one retained message per kind at most.
        for i in range(300):
            await client.publish(TOPICS.up(device, "heartbeat"), b'{"v":1,"seq":%d}' % i, 1, True)
        await client.publish(TOPICS.up(device, "ack"), b'{"v":1,"ref":"x"}', 1, True)
        await client.publish(TOPICS.up(device, "presence"), b'{"v":1,"online":true}', 1, True)
        # Over the message limit (64 KiB) but not the packet limit: dropped, still connected.
        await client.publish(TOPICS.up(device, "presence"), b"x" * (100 * 1024), 1, True)
        # Over the retained limit (16 KiB), under the message limit: kept until fayd looks.
        await client.publish(TOPICS.up(device, "hello"), hello(device, 20_000), 1, True)
    # Big: a 1 MiB packet closes the connection before mosquitto takes it.
    assert closed_by_big_publish(daemon, device, TOPICS.up(device, "presence"), MIB)

    # fayd looks at what is retained after `fayd devices add/remove` (and every 10 min).
    assert daemon.api("POST", "/api/devices/reload", json={}, timeout=60).status_code == 200
    kept = await until_retained(daemon, device, {"up/presence"})
    assert kept == {"up/presence": len(b'{"v":1,"online":true}')}, kept
    # What the protocol retains still is: a hello within the limit stays.
    async with daemon.mqtt_client(device, timeout=10) as client:
        await client.publish(TOPICS.up(device, "hello"), hello(device), 1, True)
    kept = await until_retained(daemon, device, {"up/presence", "up/hello"})
    assert set(kept) == {"up/presence", "up/hello"} and kept["up/hello"] <= RETAINED_MAX

    # The whole store stays small (it was 314 MB after 300 retained 1 MiB messages), and
    # so does mosquitto (compared loosely: the attack sent over 1 MB).
    grown = rss_kib(broker_pid) - rss_before
    print(json.dumps({"mosquitto_db_bytes": db.stat().st_size, "mosquitto_rss_grown_kib": grown}))
    assert db.stat().st_size < 256 * 1024, db.stat().st_size
    assert grown < 20 * 1024
    log = daemon.log_text()
    assert "cleared the retained heartbeat of device quota-1" in log
    assert "cleared the retained hello of device quota-1" in log
    # fayd's own clearing, heard back on its subscription, is not taken for a bad frame.
    assert "sent a bad ack frame" not in log and "sent a bad heartbeat frame" not in log


def packet(first: int, body: bytes) -> bytes:
    """An MQTT 3.1.1 packet: its first byte, the remaining length (a varint), the body."""
    size, length = len(body), b""
    while True:
        size, digit = divmod(size, 128)
        length += bytes([digit | (0x80 if size else 0)])
        if not size:
            return bytes([first]) + length + body


def text(value: str) -> bytes:
    return len(value.encode()).to_bytes(2, "big") + value.encode()


def closed_by_big_publish(daemon: DaemonProcess, device: str, topic: str, size: int) -> bool:
    """Log in as ``device`` with a bare socket and publish ``size`` bytes, retained: whether
    the broker closed the connection (a broker that took it would wait for more)."""
    password = daemon.add_device(device)["mqtt_password"]
    host, port = daemon.runtime["mqtt"].removeprefix("mqtt://").split(":")
    connect = b"\x00\x04MQTT\x04\xc2\x00\x3c" + text(device) + text(device) + text(password)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(packet(0x10, connect))
        assert sock.recv(4) == b"\x20\x02\x00\x00"  # CONNACK, accepted
        with contextlib.suppress(OSError):  # it may close while the payload is still going
            sock.sendall(packet(0x31, text(topic) + b"x" * size))  # PUBLISH, QoS 0, retained
        try:
            return sock.recv(1) == b""
        except ConnectionResetError:
            return True


async def test_a_device_reaches_fayd_only_on_the_protocols_kinds(daemon: DaemonProcess) -> None:
    device = "quota-2"
    async with daemon.mqtt_client(device, timeout=10) as client:
        await client.subscribe(TOPICS.all_down(device), qos=1)
        # Delivered, each would be answered ("unknown" kind, or a malformed frame).
        await client.publish(f"fayd/v1/dev/{device}/up/bogus", b"{}", qos=1)
        await client.publish(f"fayd/v1/dev/{device}/up/text/deeper", b"{}", qos=1)
        await client.publish(f"fayd/v1/dev/{device}/status", b"{}", qos=1)
        # Then a frame on a protocol kind that fayd answers: its error is the first answer.
        await client.publish(TOPICS.up(device, "text"), b'{"v":1,"text":""}', qos=1)
        async with asyncio.timeout(60):
            async for message in client.messages:
                assert message.topic.value == TOPICS.down(device, "error")
                error = json.loads(bytes(message.payload))  # type: ignore[arg-type]
                assert error["code"] == "malformed" and error["field"] == "text", error
                break
    assert "unknown frame kind 'bogus'" not in daemon.log_text()


def raw_request(url: str, head: str) -> tuple[int, dict]:
    """Send only a request's head (no body) and read the answer: a server that waited for
    the body would never answer (the socket's timeout ends the test)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(head.encode())
        reader = sock.makefile("rb")
        status = int(reader.readline().split()[1])
        length = 0
        while (line := reader.readline().strip()) != b"":
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return status, json.loads(reader.read(length))


def head(path: str, url: str, token: str, length: int) -> str:
    host = url.removeprefix("http://")
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )


def chunks(total: int, size: int = 256 * 1024) -> Iterator[bytes]:
    """A body of ``total`` bytes sent chunked (no Content-Length), never held whole."""
    piece = b" " * size
    for _ in range(total // size):
        yield piece


def test_an_oversized_body_is_refused_before_it_is_read(daemon: DaemonProcess) -> None:
    api, token = daemon.runtime["api"], read_token(daemon.state)
    assert daemon.proc is not None
    before = rss_kib(daemon.proc.pid)
    # A Content-Length of 200 MB: refused on its head alone.
    status, body = raw_request(api, head("/api/say", api, token, 200 * 1024 * 1024))
    assert status == 413 and "limit of 65536 bytes" in body["error"], body
    status, body = raw_request(api, head("/api/devices/k1/ota", api, token, 3 * MIB))
    assert status == 413 and f"limit of {2 * MIB} bytes" in body["error"], body
    # A chunked body says no length: counted as it comes, refused past the limit (the rest
    # of it is read and thrown away by the server, never kept).
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    sent = httpx.post(api + "/api/say", content=chunks(100 * MIB), headers=auth, timeout=300)
    assert sent.status_code == 413, sent.text
    assert "over this route's limit of 65536 bytes" in sent.json()["error"]
    # Memory: the daemon did not take the 300 MB it was offered (compared loosely).
    assert rss_kib(daemon.proc.pid) - before < 50 * 1024


def test_bodies_within_the_limit_still_reach_their_route(daemon: DaemonProcess) -> None:
    api, token = daemon.runtime["api"], read_token(daemon.state)
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    # Chunked and small: the route reads it as sent.
    sent = httpx.post(api + "/api/reset", content=iter([b"{", b"}"]), headers=auth, timeout=60)
    assert sent.status_code == 200, sent.text
    # The largest update fayd takes (1 MiB of files, 1.4 MB in base64) passes the guard: the
    # route answers it (no such device), not the guard.
    update = {
        "version": "9.9.9",
        "files": [{"path": "main.py", "data": base64.b64encode(b"#" * MIB).decode()}],
        "signature": "0" * 64,
    }
    sent = httpx.post(api + "/api/devices/nobody-1/ota", json=update, headers=auth, timeout=60)
    assert sent.status_code != 413 and "limit" not in sent.json().get("error", ""), sent.text


@pytest.fixture
def mcp_http(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``fayd mcp --http`` as a process: (url, token)."""
    port, token = free_port(), "t" * 40
    env = {
        **os.environ,
        "FAYD_PATHS_STATE_DIR": str(tmp_path / "state"),
        "FAYD_MCP_TOKEN": token,
    }
    log = (tmp_path / "mcp.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fayd", "mcp", "--http", "--no-llm", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        wait_port(port, within_s=180)
        yield f"http://127.0.0.1:{port}", token
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def test_mcp_over_http_refuses_an_oversized_body(mcp_http: tuple[str, str]) -> None:
    url, token = mcp_http
    status, body = raw_request(url, head("/mcp", url, token, 200 * 1024 * 1024))
    assert status == 413 and f"limit of {MIB} bytes" in body["error"], body
    auth = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    sent = httpx.post(url + "/mcp", content=chunks(8 * MIB), headers=auth, timeout=300)
    assert sent.status_code == 413, sent.text
