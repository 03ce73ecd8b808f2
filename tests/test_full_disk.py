"""A full disk is survivable (issue 14): the state folder on a small tmpfs of its own, filled
while a device sends events and heartbeats. Nothing crashes or restarts; events that could
not be written are not acked, are kept, and are stored (once) and acked when space returns;
``fayd status`` and an alert frame say the disk is nearly full. The real daemon, its broker,
real SQLite on a real (tmpfs) filesystem, and a device's MQTT client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from fayd.devices import sensors
from fayd.devices.sensors import EventWriter
from fayd.protocol import Outgoing, SensorEvent, Topics, decode
from fayd.store import Store
from fayd.testing import disk
from fayd.testing.disk import fill, truncate_wal
from fayd.testing.harness import DaemonProcess

from .conftest import needs_mosquitto

TOPICS = Topics()
DISK_MB = 64
WARN_MB = 8


@contextlib.contextmanager
def small_disk(folder: Path) -> Iterator[Path]:
    """A tmpfs of DISK_MB at ``folder`` (root only: skipped, saying so, elsewhere)."""
    try:
        with disk.small_disk(folder, DISK_MB) as mounted:
            yield mounted
    except disk.NoTmpfs as exc:
        pytest.skip(f"cannot mount a tmpfs for the state folder: {exc}")


def status(daemon: DaemonProcess, *args: str) -> Any:
    done = daemon.cli("status", *args)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def event(seq: int) -> bytes:
    opened = "true" if seq % 2 else "false"
    return f'{{"v":1,"seq":{seq},"sensor":"door","data":{{"open":{opened}}}}}'.encode()


def stored(db: Path, device: str) -> list[int]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        rows = conn.execute("SELECT seq FROM device_events WHERE device = ? ORDER BY seq", [device])
        return [seq for (seq,) in rows]
    finally:
        conn.close()


class Downlink:
    """Every frame a device's client receives, gathered in the background."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.frames: list[tuple[str, Any]] = []
        self.task = asyncio.create_task(self._read(client))

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            kind = message.topic.value.rsplit("/", 1)[1]
            self.frames.append((kind, decode(kind, bytes(message.payload))))  # type: ignore[arg-type]

    def acked(self) -> set[int]:
        return {int(f.ref) for k, f in self.frames if k == "ack" and f.ref}

    def alerts(self) -> list[Any]:
        return [f for k, f in self.frames if k == "alert"]

    async def until(self, test: Any, what: str, within_s: float = 60) -> None:
        deadline = time.monotonic() + within_s
        while not test():
            assert time.monotonic() < deadline, f"{what}: got {self.frames[-20:]}"
            await asyncio.sleep(0.2)


@needs_mosquitto
async def test_a_full_disk_keeps_events_unacked_then_stores_them_once(tmp_path: Path) -> None:
    with small_disk(tmp_path / "state") as state:
        # No reserve: this is about a disk that stays full (the reserve would take the
        # first events: tests/test_care_before_disk.py).
        env = {"FAYD_PATHS_DISK_WARN_MB": str(WARN_MB), "FAYD_PATHS_DISK_RESERVE_MB": "0"}
        daemon = DaemonProcess(state, env)
        daemon.log = tmp_path / "daemon.log"  # the log is not on the full disk (journald)
        daemon.start()
        try:
            await full_disk_run(daemon, state)
        finally:
            assert daemon.stop() == 0, daemon.log_text()[-3000:]


async def full_disk_run(daemon: DaemonProcess, state: Path) -> None:
    db = state / "fayd.db"
    before = status(daemon, "--json")
    assert before["disk"]["low"] is False, before["disk"]
    screen = daemon.sim("screen-1")  # added (its key written) while there is room
    async with screen, daemon.mqtt_client("door-1", timeout=10) as client:
        await screen.hello(roles=("screen",))
        await client.subscribe(TOPICS.all_down("door-1"), qos=1)
        down = Downlink(client)
        await client.publish(
            TOPICS.up("door-1", "hello"), b'{"v":1,"device":"door-1","roles":["sensor"]}', qos=1
        )
        for seq in range(1, 11):
            await client.publish(TOPICS.up("door-1", "event"), event(seq), qos=1)
        await down.until(lambda: down.acked() == set(range(1, 11)), "the first ten acked")

        truncate_wal(db)
        shutil.rmtree(state / "cache")  # nothing of fayd's own left to free: it stays full
        filler = fill(state)
        for seq in range(11, 41):  # heartbeats among them: a failed one crashed the hub
            await client.publish(TOPICS.up("door-1", "event"), event(seq), qos=1)
            if seq % 10 == 0:
                await client.publish(TOPICS.up("door-1", "heartbeat"), b'{"v":1,"seq":1}', qos=1)
        await down.until(lambda: down.alerts(), "an alert that the disk is nearly full", 30)
        await asyncio.sleep(3.0)  # the writer has tried (and retried) meanwhile
        assert down.acked() == set(range(1, 11)), "acked while the disk refused the events"
        [alert] = down.alerts()
        assert alert.kind == "disk" and alert.severity == "warning"
        assert "The disk is nearly full" in alert.text and "db " in alert.text
        full = status(daemon, "--json")
        assert full["disk"]["low"] is True and full["disk"]["using_mb"]["db"] > 0
        assert "disk: NEARLY FULL: 0 MB free" in status(daemon)
        assert full["frames"]["write_failures"] >= 1  # the heartbeats, not stored
        await screen.say_text("what time is it?")  # a turn is answered, just not stored
        reply = await screen.collect_reply(within_s=60)
        assert reply.text.startswith("It's "), reply.text

        os.unlink(filler)  # space returns: what was kept is stored, and acked, once
        await down.until(lambda: down.acked() == set(range(1, 41)), "all forty acked", 60)
        down.task.cancel()
    assert stored(db, "door-1") == list(range(1, 41))
    after = status(daemon, "--json")
    assert [c["name"] for c in after["components"] if c["restarts"]] == []
    log = daemon.log_text()
    assert "could not store 30 sensor events (kept, retrying)" in log or (
        "sensor events (kept, retrying)" in log
    )
    assert "sensor events are stored again" in log
    assert "Traceback" not in log
    assert len(down.alerts()) == 1  # once per crossing


class Outbox:
    """What the link would send to the devices (fayd.protocol.Sender)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def send(self, device: str, frame: Outgoing) -> bool:
        self.sent.append((device, frame))
        return True

    def acked(self) -> list[int]:
        return sorted(int(f.ref) for _, f in self.sent if f.KIND == "ack")


async def test_the_writer_keeps_a_bounded_backlog_and_says_what_it_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The writer alone, on a real SQLite file on a full tmpfs: over HELD_MAX (50 here) the
    oldest unwritten events are let go unacked (the devices resend them), with a log line."""
    monkeypatch.setattr(sensors, "HELD_MAX", 50)
    monkeypatch.setattr(sensors, "RETRY_MAX_S", 0.2)
    with small_disk(tmp_path / "disk") as disk:
        store = Store(disk / "fayd.db")
        outbox = Outbox()
        writer = EventWriter(store, outbox)
        task = asyncio.create_task(writer.run())
        try:
            truncate_wal(disk / "fayd.db")
            filler = fill(disk)
            for seq in range(1, 61):
                await writer.submit("cuff-1", SensorEvent(seq=seq, sensor="bp", data={}))
            deadline = time.monotonic() + 30
            while writer.let_go < 10:
                assert time.monotonic() < deadline, f"let go {writer.let_go}, held {writer.held}"
                await asyncio.sleep(0.05)
            assert (writer.held, outbox.acked()) == (50, [])
            assert "10 sensor events over the 50 kept while the disk refuses writes" in caplog.text
            assert "(devices cuff-1 send them again)" in caplog.text

            os.unlink(filler)
            deadline = time.monotonic() + 30
            while len(outbox.acked()) < 50:
                assert time.monotonic() < deadline, f"acked {outbox.acked()}"
                await asyncio.sleep(0.05)
            assert outbox.acked() == list(range(11, 61))  # the newest fifty, each once
            assert writer.held == 0 and writer.failing is None
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            store.close()
