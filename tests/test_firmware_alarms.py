"""The panic button and the fall detector end to end: the real firmware on MicroPython's unix
port (its button and MPU6050 simulated behind fayd_fw.board), a real mosquitto and the real
daemon. Each press and each fall is stored once and acked, also when it happens while the
broker is down, and then it is sent before the events that waited longer (it is urgent);
with care rules on them, each reaches the caregiver."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fayd.testing.care import Posts, wait_for
from fayd.testing.firmware import FirmwareProcess
from fayd.testing.harness import DaemonProcess

from . import fall_traces as traces
from .conftest import ANY_DEVICE
from .test_firmware_mqtt import (
    daemon_config,
    go_offline,
    mqtt_config,
    stored_rows,
    unacked_on_flash,
)
from .test_firmware_sensors import before_start, made, script

MPU = {"i2c": 1, "addr": 0x68}


def press(fw: FirmwareProcess) -> None:
    script(fw, {"pin": 21, "v": 0}, {"pin": 21, "v": 1, "ms": 300})


def ids(daemon: DaemonProcess, device: str) -> list[tuple[int, str]]:
    """(row id, sensor) of the device's stored events in the order they were stored."""
    with sqlite3.connect(daemon.state / "fayd.db") as conn:
        return conn.execute(
            "SELECT id, sensor FROM device_events WHERE device = ? ORDER BY id", [device]
        ).fetchall()


def wait_stored(daemon: DaemonProcess, fw: FirmwareProcess, device: str, want: dict) -> list:
    """Until the daemon holds ``want`` ({sensor: count}) of the device's events."""

    def check(_rows: list) -> list | None:
        rows = stored_rows(daemon, device)
        counts = {s: sum(1 for _, x, _ in rows if x == s) for s in want}
        return rows if counts == want else None

    return fw.wait_for(check, within_s=60, what=f"{want} stored")  # type: ignore[return-value]


def test_panic_and_fall_reach_fayd_once_also_across_a_broker_outage(
    make_daemon, broker, firmware, tmp_path: Path
) -> None:
    daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    config = mqtt_config(broker.url, "pendant-1", ["sensor"])
    config["sensor"] = {
        "resend_s": 1,
        "panic": {"pin": 21},
        "fall": {"i2c_id": 1, "sda": 6, "scl": 7},
    }
    before_start(tmp_path, MPU)  # the accelerometer is on the bus
    fw: FirmwareProcess = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")

    # Online: a press and a fall, each stored once and acked.
    press(fw)
    script(fw, {**MPU, "accel": traces.real_fall()})
    rows = wait_stored(daemon, fw, "pendant-1", {"panic": 1, "fall": 1})
    fall = next(data for _, sensor, data in rows if sensor == "fall")
    assert 3.4 <= fall["impact_g"] <= 3.8 and fall["tilt_deg"] >= 70
    fw.wait_for(lambda _rows: not unacked_on_flash(fw.folder), what="both acked")

    # The broker goes down: 30 ordinary events wait on flash, then a press and a fall.
    go_offline(broker, fw)
    with (fw.folder / "inbox.jsonl").open("a") as f:
        f.write((json.dumps({"sensor": "door", "data": {"open": True}}) + "\n") * 30)
    fw.wait_for(lambda _rows: len(made(fw)) == 32, what="30 waiting events")
    script(fw, {**MPU, "accel": traces.real_fall(seed=11)})
    press(fw)
    fw.wait_for(lambda _rows: len(made(fw)) == 34, within_s=30, what="the fall made offline")
    assert [s for s, _ in made(fw)][-2:] == ["panic", "fall"]
    assert len(stored_rows(daemon, "pendant-1")) == 2  # nothing got through meanwhile

    broker.start()
    wait_stored(daemon, fw, "pendant-1", {"panic": 2, "fall": 2, "door": 30})
    fw.wait_for(lambda _rows: not unacked_on_flash(fw.folder), what="all acked")
    stored = ids(daemon, "pendant-1")
    assert len(stored) == 34  # once each
    seqs = [seq for seq, _, _ in stored_rows(daemon, "pendant-1")]
    assert seqs == list(range(1, 35))
    # Urgent: once the link was back, the press and the fall went first, though made last.
    rows = fw.records()
    back = max(i for i, r in enumerate(rows) if r["hw"] == "link" and r["up"])
    sent = [r["sent"] for r in rows[back:] if r["hw"] == "sensor" and "sent" in r]
    assert sent[:3] == [33, 34, 3], sent


def test_a_press_and_a_fall_on_the_firmware_reach_the_caregiver(
    make_daemon, firmware, tmp_path: Path, posts: Posts
) -> None:
    """The whole path on the daemon's own broker: the firmware's button and accelerometer,
    its signed frames, the care rules (added with the CLI) and the caregiver's phone."""
    daemon = make_daemon()
    config = daemon_config(daemon, "pendant-2", ["sensor"], user="mum")
    config["sensor"] = {
        "resend_s": 1,
        "panic": {"pin": 21},
        "fall": {"i2c_id": 1, "sda": 6, "scl": 7},
    }
    before_start(tmp_path, MPU)
    fw: FirmwareProcess = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    care(daemon, "caregivers", "add", "anna", posts.url("anna"))
    # The hello made mum a household member; the rules name her.
    wait_for(lambda: daemon.cli("care", "rules", "add", "press", "--user", "mum", "--kind",
                                "event", "--sensor", "panic", "--ladder", "anna").returncode == 0,
             30)  # fmt: skip
    care(daemon, "rules", "add", "fall", "--user", "mum", "--kind", "event", "--sensor", "fall",
         "--ladder", "anna")  # fmt: skip

    press(fw)
    wait_for(lambda: len(posts.to("anna")) == 1, 30)
    assert "the panic button (pendant-2)" in posts.to("anna")[0]["message"]
    script(fw, {**MPU, "accel": traces.real_fall()})
    wait_for(lambda: len(posts.to("anna")) == 2, 30)
    # Minutes after the press, the fall is the same incident: one alert, one more line.
    assert posts.to("anna")[1]["message"].startswith("Mum, also: a fall (pendant-2)")
    listed = daemon.api("POST", "/api/care/alerts.list", json={}, timeout=30).json()["alerts"]
    [alert] = listed
    assert alert["rule"] == "press" and alert["count"] == 2 and alert["severity"] == "critical"
    fw.wait_for(lambda _rows: not unacked_on_flash(fw.folder), what="both acked")


def care(daemon: DaemonProcess, *args: str) -> None:
    done = daemon.cli("care", *args, timeout=60)
    assert done.returncode == 0, done.stderr
