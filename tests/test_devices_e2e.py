"""The device registry and sensor events against the real daemon (its embedded mosquitto
with the ACL, real SQLite, the real embedding model), driven by simulated devices."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from typing import Any

from fayd.protocol import SensorEvent, Topics, encode
from fayd.testing.simulator import SimDevice

from .conftest import DaemonProcess


def devices_cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fayd", "devices", *args],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def next_frame(device: SimDevice, kind: str, within_s: float = 20) -> Any:
    """The next frame of ``kind`` (others are skipped)."""
    async with asyncio.timeout(within_s):
        while True:
            got, frame, _ = await device.received.get()
            if got == kind:
                return frame


def query(daemon: DaemonProcess, sql: str, *params: Any) -> list[tuple]:
    conn = sqlite3.connect(daemon.state / "fayd.db", timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


async def test_settings_reach_the_device_and_the_user_setting_wins(daemon: DaemonProcess) -> None:
    daemon.add_device("reg-1")  # set refuses an id it does not know (a typo)
    done = devices_cli(daemon, "set", "reg-1", "user=grandpa", "volume=55", "wake=off")
    assert done.returncode == 0, done.stderr
    async with daemon.sim("reg-1") as device:
        await device.hello(roles=("mic", "speaker"), user="someone-else")
        command = await next_frame(device, "command")
        assert (command.name, command.args) == ("settings", {"wake": False, "volume": 55})
        # Changed while the daemon runs and the device is online: pushed within a second.
        assert devices_cli(daemon, "set", "reg-1", "volume=20").returncode == 0
        command = await next_frame(device, "command")
        assert command.args == {"wake": False, "volume": 20}

        status = json.loads(daemon.cli("status", "--json").stdout)
        [row] = [d for d in status["devices"] if d["id"] == "reg-1"]
        assert row["user"] == "grandpa" and row["online"]
        listed = devices_cli(daemon, "list")
        [line] = [x for x in listed.stdout.splitlines() if x.startswith("reg-1 ")]
        assert "online" in line and "s ago" in line and "grandpa" in line and "volume=20" in line


async def test_sensor_events_are_stored_once_and_remembered(daemon: DaemonProcess) -> None:
    daemon.add_device("cuff-1")
    assert devices_cli(daemon, "set", "cuff-1", "user=rosa").returncode == 0
    async with daemon.sim("cuff-1") as device:
        await device.hello(roles=("sensor",))
        bp = {"sys": 152, "dia": 96}
        for seq in [*range(20), *range(5)]:  # the last five are replays after a reconnect
            event = SensorEvent(seq=seq, sensor="bp", ts=time.time(), data=bp)
            await device.publish("event", encode(event))
        acks = [await next_frame(device, "ack") for _ in range(25)]
    assert sorted(int(a.ref) for a in acks) == sorted([*range(20), *range(5)])
    assert sum(a.detail == "duplicate" for a in acks) == 5
    [(stored,)] = query(daemon, "SELECT count(*) FROM device_events WHERE device = 'cuff-1'")
    assert stored == 20

    deadline = time.monotonic() + 90  # embedding runs after the acks, in the background
    while True:
        rows = query(
            daemon,
            "SELECT n.id, n.username, n.content FROM memory_nodes n JOIN memory_tags t"
            " ON t.node_id = n.id WHERE t.tag = 'source:cuff-1' ORDER BY n.id",
        )
        if len(rows) >= 20 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.3)
    assert len(rows) == 20
    assert {username for _, username, _ in rows} == {"rosa"}
    assert rows[0][2].startswith("Blood pressure 152/96 from cuff-1 at ")
    tags = {
        t for (t,) in query(daemon, "SELECT tag FROM memory_tags WHERE node_id = ?", rows[0][0])
    }
    date = time.strftime("%Y-%m-%d")
    assert {"domain:homecare", "kind:event", "source:cuff-1", "sensor:bp", f"date:{date}"} <= tags


async def test_a_device_cannot_speak_for_another(daemon: DaemonProcess) -> None:
    topics = Topics()
    event = encode(SensorEvent(seq=1, sensor="panic"))
    # Mallory has an account of her own and tries victim-1's client id too.
    async with daemon.mqtt_client("mallory-1", timeout=10) as mallory:
        await mallory.subscribe(topics.all_down("mallory-1"), qos=1)
        await mallory.publish(topics.up("victim-1", "event"), event, qos=1)
        await mallory.publish(topics.up("victim-1", "hello"), b'{"device":"victim-1"}', qos=1)
        await mallory.publish(topics.up("mallory-1", "event"), event, qos=1)
        async with asyncio.timeout(20):
            async for message in mallory.messages:
                if message.topic.value == topics.down("mallory-1", "ack"):
                    break
    # fayd got mallory's own event; the frames on victim-1's topics never reached it.
    # (Other tests' panic buttons share this daemon: only these two devices are asked about.)
    stored = "SELECT device FROM device_events WHERE device IN ('mallory-1', 'victim-1')"
    assert query(daemon, stored) == [("mallory-1",)]
    assert query(daemon, "SELECT id FROM devices WHERE id = 'victim-1'") == []
