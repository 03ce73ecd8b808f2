"""The firmware in serial mode over a socat PTY pair, against the real daemon: hello, the
proof of its key and a text turn over COBS + CRC-32 packets; a pulled cable (socat stopped)
makes the robot stop safely and the daemon mark the device offline; a replug (socat again)
resumes the link. And the link over the firmware's own console (serial.uart "usb"), joined
to a PTY by socat."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from fayd.testing.firmware import FirmwareProcess
from fayd.testing.harness import DaemonProcess

from .test_firmware_mqtt import SERVOS


def device_status(daemon: DaemonProcess, device: str) -> dict | None:
    status = json.loads(daemon.cli("status", "--json").stdout)
    return next((d for d in status["devices"] if d["id"] == device), None)


def wait_online(daemon: DaemonProcess, fw: FirmwareProcess, online: bool) -> None:
    def check(_rows: list) -> bool:
        d = device_status(daemon, "uart-1")
        return bool(d) and d["online"] is online  # type: ignore[index]

    fw.wait_for(check, within_s=30, what=f"fayd status online={online}")


def text_turn(fw: FirmwareProcess, text: str) -> list[dict]:
    before = len(fw.records())
    fw.inject(text=text)
    fw.wait_for(
        lambda rows: any(
            r["hw"] == "rx" and r["key"] == "text" and r["end"] for r in rows[before:]
        ),
        within_s=120,
        what="a reply",
    )
    return [r for r in fw.records()[before:] if r["hw"] == "rx"]


def test_serial_hello_turn_unplug_and_replug(make_daemon, pty_pair, firmware) -> None:
    daemon = make_daemon({"FAYD_SERIAL_PATTERNS": str(pty_pair.a), "FAYD_SERIAL_POLL_S": "0.2"})
    key = daemon.add_device("uart-1")["key"]  # over serial too, a board proves its key
    fw: FirmwareProcess = firmware(
        {
            "device": "uart-1",
            "key": key,
            "roles": ["robot", "screen"],
            "transport": "serial",
            # No challenge yet (fayd opened the port after the hello): hello again soon.
            "serial": {"path": str(pty_pair.b), "backoff_max_s": 0.5, "hello_retry_s": 0.3},
            "heartbeat_s": 0.3,
            "robot": {"servos": SERVOS, "idle_ms": 200},
            "screen": {"size": [128, 64]},
        }
    )
    wait_online(daemon, fw, True)
    reply = text_turn(fw, "Thank you for your help!")
    assert any(r["key"] == "text" and r["text"] for r in reply)
    assert any(r["hw"] == "screen" and "lines" in r for r in fw.records())

    pty_pair.stop()  # the cable is pulled
    fw.wait_for(
        lambda rows: any(r["hw"] == "link" and r["up"] is False for r in rows), what="link lost"
    )
    fw.wait_for(
        lambda rows: any(r["hw"] == "robot" and r.get("safe_stop") for r in rows),
        what="safe stop",
    )
    wait_online(daemon, fw, False)

    pty_pair.start()  # replugged: same names, new PTYs
    fw.wait_for(
        lambda rows: [r for r in rows if r["hw"] == "link" and r["up"] is True][1:],
        what="link back",
    )
    wait_online(daemon, fw, True)
    reply = text_turn(fw, "Hello! Nice to meet you.")
    assert any(r["key"] == "text" and r["text"] for r in reply)
    status = device_status(daemon, "uart-1")
    assert status and status["fw"] == "0.1.0"


def test_serial_over_the_boards_own_usb_console(make_daemon, tmp_path, firmware) -> None:
    """serial.uart "usb": the firmware's console (on an ESP32-S3 its own USB port; here the
    process's stdin/stdout, joined to a PTY by socat) is the link, so no adapter is wired."""
    from fayd.testing.firmware import FIRMWARE, FIRMWARE_LIB, micropython

    from .conftest import SOCAT

    if SOCAT is None:
        pytest.skip("socat not installed (./install.sh installs it)")
    port = tmp_path / "ttyACM-fayd"
    daemon = make_daemon({"FAYD_SERIAL_PATTERNS": str(port), "FAYD_SERIAL_POLL_S": "0.2"})
    key = daemon.add_device("usb-1")["key"]
    fw = FirmwareProcess(
        tmp_path / "usb-1",
        {
            "device": "usb-1",
            "key": key,
            "roles": ["speaker", "screen"],
            "transport": "serial",
            "serial": {"uart": "usb"},
            "heartbeat_s": 0.5,
            "speaker": {"rate": 16000},
            "screen": {"size": [128, 64]},
        },
    )
    exe = f"{micropython()} {FIRMWARE / 'main.py'}"
    env = {
        **os.environ,
        "MICROPYPATH": f"{FIRMWARE}:{FIRMWARE_LIB}",
        "FAYD_FW_CONFIG": str(fw.config_path),
    }
    with fw.log.open("wb") as log:  # socat's notices and the firmware's stderr
        fw.proc = subprocess.Popen(
            [SOCAT, f"pty,raw,echo=0,link={port}", f"EXEC:{exe}"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:

        def online(_rows: list) -> bool:
            d = device_status(daemon, "usb-1")
            return bool(d and d["online"])

        fw.wait_for(online, within_s=30, what="usb-1 online over its console")
        done = daemon.cli("devices", "set", "usb-1", "volume=35")
        assert "applied on the device: volume=35" in done.stdout, done.stdout + done.stderr
        reply = text_turn(fw, "What time is it?")
        assert any(r["key"] == "text" and r["text"] for r in reply)
        assert "bad" not in " ".join(r.get("msg", "") for r in fw.records("log"))
    finally:
        fw.stop()
