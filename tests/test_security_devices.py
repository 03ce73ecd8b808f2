"""The device door of the real daemon (its embedded mosquitto, real SQLite) with the real
firmware on MicroPython's unix port: only added devices get in, each only as itself; nobody
can pre-claim a device's sequence numbers to make its panic presses look like replays, nor
take fayd's own client id; a removed device is cut off at once; a device whose flash was
erased starts a new epoch and its events are stored, not taken for duplicates."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3

import aiomqtt
import pytest

from fayd.auth import mqtt_password
from fayd.protocol import SensorEvent, Topics, encode
from fayd.testing.firmware import FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess
from fayd.transport.mqtt import parse_mqtt_url

from .test_firmware_mqtt import daemon_config, mqtt_config

needs_firmware = pytest.mark.skipif(
    micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists(),
    reason="MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh",
)
TOPICS = Topics()


def events(daemon: DaemonProcess, device: str) -> list[tuple[str, int, str]]:
    with sqlite3.connect(daemon.state / "fayd.db", timeout=10) as conn:
        return conn.execute(
            "SELECT epoch, seq, sensor FROM device_events WHERE device = ? ORDER BY id", [device]
        ).fetchall()


def raw(daemon: DaemonProcess, identifier: str, **login: str) -> aiomqtt.Client:
    host, port = parse_mqtt_url(daemon.runtime["mqtt"])
    return aiomqtt.Client(host, port, identifier=identifier, timeout=10, **login)


async def refused(client: aiomqtt.Client) -> str:
    with pytest.raises(aiomqtt.MqttError) as caught:
        async with client:
            pass
    return str(caught.value)


def broker_connects(daemon: DaemonProcess) -> int:
    return json.loads(daemon.cli("status", "--json").stdout)["broker"]["connects"]


async def test_only_added_devices_get_in_and_removal_cuts_them_off(
    daemon: DaemonProcess,
) -> None:
    assert "Not authorized" in await refused(raw(daemon, "door-1"))  # anonymous, on loopback
    guess = {"username": "door-1", "password": mqtt_password("0" * 64)}
    assert "Not authorized" in await refused(raw(daemon, "door-1", **guess))
    login = daemon.add_device("door-1")
    assert login["new"] and daemon.add_device("door-1")["key"] == login["key"]  # unchanged
    right = {"username": "door-1", "password": login["mqtt_password"]}
    async with raw(daemon, "door-1", **right) as door:
        removed = daemon.cli("devices", "remove", "door-1", timeout=60)
        assert removed.returncode == 0, removed.stderr
        assert "removed; the broker now admits" in removed.stdout
        with pytest.raises(aiomqtt.MqttError):  # disconnected at once: publishing fails
            for _ in range(50):
                await door.publish(TOPICS.up("door-1", "heartbeat"), b"{}", qos=1, timeout=2)
                await asyncio.sleep(0.05)
    assert "Not authorized" in await refused(raw(daemon, "door-1", **right))
    typo = daemon.cli("devices", "remove", "door-l", timeout=60)
    assert typo.returncode == 1 and "no device 'door-l'" in typo.stderr
    for reserved in ("fayd", "fayd-probe"):
        taken = daemon.cli("devices", "add", reserved, timeout=60)
        assert taken.returncode == 1 and "fayd's own broker name" in taken.stderr


async def test_nobody_takes_the_daemons_client_id(daemon: DaemonProcess) -> None:
    before = broker_connects(daemon)
    status = json.loads(daemon.cli("status", "--json").stdout)
    pid = status["pid"]
    login = daemon.add_device("mallory-3")
    mallory = {"username": "mallory-3", "password": login["mqtt_password"]}
    for stolen in ("fayd", f"fayd-{pid}", "fayd-probe"):
        async with raw(daemon, stolen, **mallory) as client:
            await client.publish(TOPICS.up("mallory-3", "heartbeat"), b"{}", qos=1)
    assert "Not authorized" in await refused(raw(daemon, "fayd", username="fayd", password="x"))
    await asyncio.sleep(1.0)
    assert broker_connects(daemon) == before  # fayd was never kicked off
    with sqlite3.connect(daemon.state / "fayd.db") as conn:
        assert conn.execute("SELECT count(*) FROM devices WHERE id = 'fayd'").fetchone()[0] == 0


@needs_firmware
async def test_pre_claimed_numbers_do_not_hide_a_panic_press(
    daemon: DaemonProcess, firmware
) -> None:
    fw: FirmwareProcess = firmware(daemon_config(daemon, "panic-1", ["sensor"]), "panic-1")
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    # Mallory tries to claim panic-1's next numbers: anonymously, with a guessed password,
    # and with an account of her own, on panic-1's topics and under its client id.
    forged = [encode(SensorEvent(seq=n, sensor="door", data={"open": True})) for n in range(1, 21)]
    assert "Not authorized" in await refused(raw(daemon, "panic-1"))
    guess = {"username": "panic-1", "password": "x" * 64}
    assert "Not authorized" in await refused(raw(daemon, "panic-1", **guess))
    async with daemon.mqtt_client("mallory-2", timeout=10) as mallory:
        for payload in forged:
            await mallory.publish(TOPICS.up("panic-1", "event"), payload, qos=1)
    login = daemon.add_device("mallory-2")
    async with raw(daemon, "panic-1", username="mallory-2", password=login["mqtt_password"]) as m:
        for payload in forged:
            await m.publish(TOPICS.up("panic-1", "event"), payload, qos=1)
    # The real device's three panic presses are stored, each once, none called a replay.
    for _ in range(3):
        fw.inject(sensor="panic", data={"pressed": True})
    fw.wait_for(lambda rows: len(events(daemon, "panic-1")) >= 3, what="3 events stored")
    fw.wait_for(
        lambda rows: sum(r["hw"] == "sensor" and "acked" in r for r in rows) >= 3, what="acks"
    )
    stored = events(daemon, "panic-1")
    assert [(seq, sensor) for _, seq, sensor in stored] == [
        (1, "panic"),
        (2, "panic"),
        (3, "panic"),
    ]
    assert all(len(epoch) == 8 for epoch, _, _ in stored)  # a new device: a new epoch
    assert events(daemon, "mallory-2") == []  # her own topics: she published nothing there

    # The flash is erased (a re-flash): the counter starts again from 1 under a new epoch,
    # and the new presses are stored, not acknowledged as duplicates.
    fw.stop()
    for name in ("events.seq", "events.epoch", "events.dropped"):
        (fw.folder / name).unlink(missing_ok=True)
    shutil.rmtree(fw.folder / "events")  # the ring's segments (firmware/fayd_fw/ring.py)
    fw.start()
    fw.inject(sensor="panic", data={"pressed": True})
    fw.wait_for(lambda rows: len(events(daemon, "panic-1")) >= 4, what="the 4th event")
    stored = events(daemon, "panic-1")
    assert stored[3][1:] == (1, "panic") and stored[3][0] != stored[0][0]


@needs_firmware
def test_firmware_with_a_wrong_key_stays_out(daemon: DaemonProcess, firmware) -> None:
    daemon.add_device("intruder-1")
    config = mqtt_config(daemon.runtime["mqtt"], "intruder-1", ["sensor"], key="f" * 64)
    fw: FirmwareProcess = firmware(config, "intruder-1")
    fw.wait_for(
        lambda rows: sum(r["hw"] == "link" and r["up"] is False for r in rows) >= 2,
        what="refused connects",
    )
    assert not any(r["hw"] == "hello" for r in fw.records())
    fw.inject(sensor="panic", data={"pressed": True})  # kept in its ring, never stored
    assert events(daemon, "intruder-1") == []


@needs_firmware
def test_firmware_over_tls_trusts_only_the_household_ca(make_daemon, firmware, tmp_path) -> None:
    from fayd.transport.broker import free_port
    from fayd.transport.broker_tls import ensure_tls

    tls_port = free_port()
    daemon = make_daemon({"FAYD_MQTT_TLS_PORT": str(tls_port), "FAYD_MQTT_TLS_NAMES": "localhost"})
    ca = daemon.state / "mosquitto" / "tls" / "ca.crt"
    key = daemon.add_device("tls-1")["key"]
    tls = {"host": "localhost", "port": tls_port, "tls": True, "ca": str(ca)}
    config = mqtt_config(daemon.runtime["mqtt"], "tls-1", ["sensor"], key=key)
    fw: FirmwareProcess = firmware({**config, "mqtt": {**config["mqtt"], **tls}}, "tls-1")
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello over TLS")
    fw.inject(sensor="door", data={"open": True})
    fw.wait_for(lambda rows: events(daemon, "tls-1"), what="the event stored")
    # Another CA (a broker posing as fayd's): the device does not connect.
    other = ensure_tls(tmp_path / "other-ca", tls_port, ["localhost"]).ca
    fake = firmware({**config, "mqtt": {**config["mqtt"], **tls, "ca": str(other)}}, "tls-2")
    fake.wait_for(
        lambda rows: sum(r["hw"] == "link" and r["up"] is False for r in rows) >= 2,
        what="refused handshakes",
    )
    assert not any(r["hw"] == "hello" for r in fake.records())
