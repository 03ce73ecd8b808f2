"""The firmware in serial mode over a socat PTY pair, against the real daemon: hello and a
text turn over COBS + CRC-32 packets; a pulled cable (socat stopped) makes the robot stop
safely and the daemon mark the device offline; a replug (socat again) resumes the link."""

from __future__ import annotations

import json

from fayd.testing.harness import DaemonProcess

from .conftest import FirmwareProcess
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
    fw: FirmwareProcess = firmware(
        {
            "device": "uart-1",
            "roles": ["robot", "screen"],
            "transport": "serial",
            "serial": {"path": str(pty_pair.b), "backoff_max_s": 0.5},
            "heartbeat_s": 0.3,  # an early heartbeat draws "send hello first" → hello again
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
