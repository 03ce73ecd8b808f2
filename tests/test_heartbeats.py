"""A status that tells the truth (issue 14): a component that runs but does nothing is
``stalled``, and systemd's watchdog is fed only while every essential component beats.

The hang met on a full disk was a task that looked "running" while it waited for good.
Here the sensor-event writer (a real one, on a real SQLite store) gets stuck the same way:
the store's one writer thread is held, as by a write that never returns. The watchdog's
pings go to a real unix datagram socket, as systemd's NOTIFY_SOCKET."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fayd.beat import Pulse
from fayd.devices import sensors
from fayd.devices.sensors import EventWriter
from fayd.protocol import Outgoing, SensorEvent
from fayd.service.notify import Notifier
from fayd.service.supervisor import Supervisor, feed_watchdog
from fayd.store import Store

#: Short periods keep the test quick; the watchdog is pinged every INTERVAL_S.
EVERY_S = 0.1
INTERVAL_S = 0.05


class Outbox:
    """The Sender port: frames to devices, kept (acks, here)."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, object]] = []

    def send(self, device: str, frame: Outgoing) -> bool:
        self.frames.append((device, frame))
        return True


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    yield sock, path
    sock.close()


def pings(sock: socket.socket) -> int:
    """WATCHDOG=1 datagrams received since the last call."""
    count = 0
    while True:
        try:
            count += sock.recv(4096).decode().splitlines().count("WATCHDOG=1")
        except BlockingIOError:
            return count


async def until(check: Callable[[], object], within_s: float = 10.0) -> None:
    async with asyncio.timeout(within_s):
        while not check():
            await asyncio.sleep(0.01)


async def test_a_writer_stuck_on_the_store_is_stalled_and_starves_the_watchdog(
    tmp_path: Path, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, address = notify_socket
    store = Store(tmp_path / "fayd.db")
    outbox = Outbox()
    writer = EventWriter(store, outbox)
    writer.pulse = Pulse(EVERY_S, essential=True)
    supervisor = Supervisor()
    supervisor.start("events", writer.run, writer.pulse)
    ping = Notifier(environ={"NOTIFY_SOCKET": address}).watchdog
    feeding = asyncio.create_task(feed_watchdog(supervisor, ping, INTERVAL_S))
    release = threading.Event()
    try:
        # Idle, it beats on its own: fed, and running.
        received = 0

        def fed() -> bool:
            nonlocal received
            received += pings(sock)
            return received >= 5

        await until(fed)
        assert not supervisor.stalled()
        await writer.submit("door-1", SensorEvent(seq=1, sensor="door"))
        await until(lambda: outbox.frames)  # stored and acked: the writer works

        # The store's writer thread is held: the next event's write never returns.
        held = asyncio.ensure_future(store.run(lambda db: release.wait()))
        await writer.submit("door-1", SensorEvent(seq=2, sensor="door"))
        await until(lambda: supervisor.stalled(essential_only=True))
        [row] = supervisor.status()
        assert row["state"] == "stalled" and row["running"]
        assert row["beat_age_s"] > EVERY_S
        pings(sock)  # what was sent before the stall was seen
        await asyncio.sleep(10 * INTERVAL_S)
        assert pings(sock) == 0

        # The write returns: it beats again, and the watchdog is fed again.
        release.set()
        await held
        await until(lambda: not supervisor.stalled())
        await until(lambda: pings(sock))
        assert supervisor.status()[0]["state"] == "running"
        await until(lambda: len(outbox.frames) == 2)
    finally:
        release.set()
        feeding.cancel()
        await supervisor.stop()
        await asyncio.to_thread(store.close)


async def test_a_component_without_a_pulse_is_never_called_stalled() -> None:
    supervisor = Supervisor()
    supervisor.start("quiet", lambda: asyncio.Event().wait())
    await asyncio.sleep(0.05)
    assert supervisor.stalled() == {}
    assert supervisor.status()[0]["state"] == "running"
    await supervisor.stop()


async def test_only_an_essential_component_starves_the_watchdog() -> None:
    supervisor = Supervisor()
    supervisor.start("memory", lambda: asyncio.Event().wait(), Pulse(0.01))
    await until(lambda: supervisor.stalled())
    assert supervisor.stalled(essential_only=True) == {}
    await supervisor.stop()


async def test_a_caller_held_back_by_a_full_writer_keeps_beating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub waiting for room (the writer cannot store: a full disk) is held back, not
    hung: it beats, so the watchdog does not restart fayd for a disk that stays full."""
    monkeypatch.setattr(sensors, "MAX_PENDING", 1)
    monkeypatch.setattr(sensors, "ROOM_BEAT_S", 0.01)
    store = Store(tmp_path / "fayd.db")
    writer = EventWriter(store, Outbox())  # not running: nothing makes room
    hub = Pulse(EVERY_S, essential=True)
    beats = 0

    def beat() -> None:
        nonlocal beats
        beats += 1
        hub.beat()

    try:
        await writer.submit("door-1", SensorEvent(seq=1, sensor="door"), beat)
        assert beats == 0  # there was room
        waiting = asyncio.create_task(
            writer.submit("door-1", SensorEvent(seq=2, sensor="door"), beat)
        )
        await until(lambda: beats >= 5)
        assert not waiting.done()
        writer.pending.clear()
        writer._room.set()  # what the writer does once it has stored them
        await waiting
        assert [e.seq for _, e in writer.pending] == [2]
    finally:
        await asyncio.to_thread(store.close)
