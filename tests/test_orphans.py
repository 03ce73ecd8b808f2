"""Children die with the daemon, and leftovers are found (issue 14).

A kill -9 of the daemon alone (a crash, the OOM killer) used to leave the embedded mosquitto
running as an orphan on the port, with the old password: the next fayd's broker could not
listen, its link was refused, and device events were lost. Now the broker gets a
parent-death signal (fayd.children), and a start finds the broker an earlier fayd left
(its pid file; the case of a root fayd, whose mosquitto changes user and so loses the
signal) and stops it before it checks the ports."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

from fayd.protocol import SensorEvent, encode
from fayd.testing.harness import DaemonProcess, free_port
from fayd.testing.simulator import SimDevice

from .conftest import needs_mosquitto

pytestmark = needs_mosquitto


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def until(check, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def broker_pid(daemon: DaemonProcess) -> int:
    return int(json.loads((daemon.state / "broker.pid").read_text())["pid"])


def kill_9(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)


async def send_events(daemon: DaemonProcess, device: str, password: str, seqs: range) -> int:
    """Send events as a device and wait for their acks; returns how many were acked."""
    async with SimDevice(daemon.runtime["mqtt"], device, password=password) as sim:
        await sim.hello(roles=("sensor",))
        for seq in seqs:
            event = SensorEvent(seq=seq, sensor="door", ts=time.time(), data={"open": True})
            await sim.publish("event", encode(event))
        acked = set()
        async with asyncio.timeout(30):
            while len(acked) < len(seqs):
                kind, frame, _ = await sim.received.get()
                if kind == "ack":
                    acked.add(frame.ref)
    return len(acked)


def stored(daemon: DaemonProcess, device: str) -> int:
    with sqlite3.connect(daemon.state / "fayd.db") as db:
        (count,) = db.execute(
            "SELECT count(*) FROM device_events WHERE device = ?", (device,)
        ).fetchone()
    return int(count)


def start(state: Path, port: int) -> DaemonProcess:
    return DaemonProcess(state, {"FAYD_MQTT_EMBEDDED_PORT": str(port)}).start()


def test_the_broker_dies_with_a_killed_daemon_and_the_next_start_serves_its_port(
    tmp_path: Path,
) -> None:
    port = free_port()
    state = tmp_path / "state"
    first = start(state, port)
    try:
        password = first.add_device("door-1")["mqtt_password"]
        assert asyncio.run(send_events(first, "door-1", password, range(10))) == 10
        mosquitto = broker_pid(first)
        kill_9(first)
        until(lambda: not alive(mosquitto), 10, "mosquitto outlived the daemon's kill -9")
    finally:
        first.stop()
    second = start(state, port)
    try:
        assert second.runtime["mqtt"].endswith(f":{port}")
        assert asyncio.run(send_events(second, "door-1", password, range(10, 20))) == 10
        assert stored(second, "door-1") == 20
    finally:
        assert second.stop() == 0, second.log_text()
    assert not (state / "broker.pid").exists()  # a clean stop leaves nothing to find


def test_a_broker_left_running_is_stopped_by_the_next_start(tmp_path: Path) -> None:
    """What a fayd run as root leaves: mosquitto dropped to its own account and lost the
    parent-death signal. Here the same state is made by starting the dead daemon's
    mosquitto again, on its own config, with its pid file."""
    port = free_port()
    state = tmp_path / "state"
    first = start(state, port)
    try:
        password = first.add_device("door-2")["mqtt_password"]
        conf = json.loads((state / "broker.pid").read_text())["conf"]
        mosquitto = broker_pid(first)
        binary = Path(f"/proc/{mosquitto}/exe").resolve()
        kill_9(first)
        until(lambda: not alive(mosquitto), 10, "mosquitto outlived the daemon's kill -9")
    finally:
        first.stop()
    orphan = subprocess.Popen(
        [str(binary), "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        (state / "broker.pid").write_text(json.dumps({"pid": orphan.pid, "conf": conf}))
        wait_listening(port)
        second = start(state, port)
        try:
            assert orphan.wait(10) is not None  # stopped by the start
            assert second.runtime["mqtt"].endswith(f":{port}")
            assert asyncio.run(send_events(second, "door-2", password, range(5))) == 5
            status = json.loads(second.cli("status", "--json").stdout)
            said = f"stopped the embedded broker (mosquitto, pid {orphan.pid})"
            assert any(said in notice for notice in status["notices"]), status["notices"]
        finally:
            assert second.stop() == 0, second.log_text()
    finally:
        if orphan.poll() is None:
            orphan.kill()
        orphan.wait(10)


def test_a_pid_file_naming_another_program_is_left_alone(tmp_path: Path) -> None:
    """A pid reused by something else after a reboot is not fayd's broker: not signalled."""
    other = subprocess.Popen(["sleep", "60"])
    try:
        state = tmp_path / "state"
        state.mkdir()
        conf = str(state / "mosquitto" / "mosquitto.conf")
        (state / "broker.pid").write_text(json.dumps({"pid": other.pid, "conf": conf}))
        daemon = DaemonProcess(state).start()
        try:
            assert other.poll() is None and alive(other.pid)
            assert json.loads((state / "broker.pid").read_text())["pid"] != other.pid
        finally:
            assert daemon.stop() == 0, daemon.log_text()
    finally:
        os.kill(other.pid, signal.SIGTERM)
        other.wait(10)


def wait_listening(port: int) -> None:
    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    until(listening, 10, f"nothing listens on {port}")
