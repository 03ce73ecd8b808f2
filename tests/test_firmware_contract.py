"""The one contract between the daemon and the firmware (docs/protocol.md): every frame kind
and every command the daemon sends is driven through the real daemon (its skills, its
registry, its broker) to the real firmware on MicroPython's unix port, and what the firmware
did is read from its hardware shims (hw.jsonl); every frame kind the firmware sends is taken
by the daemon without an error. ``fayd devices set`` says "applied on the device" only when
the device acknowledged the settings. The microphone's two modes send speech that the daemon
answers: push-to-talk (the button comes from inbox.jsonl on the host) and continuous streaming
(the daemon's VAD finds the speech)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fayd.speech.audio import float_to_pcm16
from fayd.testing.firmware import FIRMWARE, FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess

from .test_daemon_e2e import stored_messages, words
from .test_firmware_mqtt import daemon_config, status_device

pytestmark = pytest.mark.skipif(
    micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists(),
    reason="MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh",
)

DEVICE = "contract-1"
ROLES = ["mic", "speaker", "robot", "screen", "sensor"]


def wait_online(daemon: DaemonProcess, fw: FirmwareProcess, device: str, online: bool) -> dict:
    def check(_rows: list) -> dict | None:
        d = status_device(daemon, device)
        return d if d and d["online"] is online else None

    return fw.wait_for(check, within_s=30, what=f"{device} online={online}")  # type: ignore[return-value]


def turn(fw: FirmwareProcess, text: str, until, what: str) -> list[dict]:
    """Type ``text`` on the device; the hw records from then until ``until(rows)`` holds."""
    before = len(fw.records())
    fw.inject(text=text)
    fw.wait_for(lambda rows: until(rows[before:]), within_s=120, what=what)
    return fw.records()[before:]


def reply_over(rows: list[dict]) -> bool:
    return any(r["hw"] == "rx" and r["key"] == "text" and r["end"] for r in rows)


def set_cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return daemon.cli("devices", "set", *args, timeout=60)


def test_every_frame_kind_and_command_through_the_firmware(make_daemon, firmware) -> None:
    daemon = make_daemon({"FAYD_LLM_TEMPERATURE": "0"})
    config = daemon_config(daemon, DEVICE, ROLES, user="ann", mic={"mode": "ptt"})
    fw: FirmwareProcess = firmware(config)
    row = wait_online(daemon, fw, DEVICE, True)
    assert row["fw"] == "0.1.0" and row["caps"]["mic"] == "ptt"  # hello and presence (up)

    # command "settings" (down) and its ack (up): the device applied the volume; fayd
    # itself applies barge_in to the device's audio.
    done = set_cli(daemon, DEVICE, "volume=70", "barge_in=off")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{DEVICE}: volume=70 barge_in=off",
        "applied on the device: volume=70",
        "applied by fayd: barge_in=off",
    ], done.stdout
    [told] = [r for r in fw.records("command") if r["name"] == "settings"][-1:]
    assert told["applied"] == ["volume"] and told["ignored"] == ["barge_in"]
    assert fw.records("i2s_out")[-1]["volume"] == 70

    # text (up) → human "log", "text" and "audio" frames and the speech's audio frames
    # (down): the state on the screen, the reply on it, the speech through the speaker.
    rows = turn(fw, "What time is it?", reply_over, "the time")
    rx = [r for r in rows if r["hw"] == "rx"]
    assert {"log", "text", "audio"} <= {r["key"] for r in rx}, rx
    assert any(r["hw"] == "screen" and r.get("face") == "curious" for r in rows)  # thinking
    assert any(r["hw"] == "screen" and r.get("lines") for r in rows)
    fw.wait_for(
        lambda rows: any(r["hw"] == "speaker" and "end" in r for r in rows), what="speech end"
    )
    assert (fw.folder / "speaker.pcm").stat().st_size > 8000

    # command "volume" and "brightness" (a skill's), a bare action (human, no text), "stop".
    rows = turn(
        fw,
        "Set the volume to 40",
        lambda rows: any(r["hw"] == "command" and r["name"] == "volume" for r in rows),
        "command volume",
    )
    assert [r["volume"] for r in rows if r["hw"] == "i2s_out" and "volume" in r] == [40]
    rows = turn(
        fw,
        "Set the screen brightness to 30",
        lambda rows: any(r["hw"] == "screen" and "brightness" in r for r in rows),
        "command brightness",
    )
    assert [r["brightness"] for r in rows if "brightness" in r] == [30]
    turn(
        fw,
        "Wave at me",
        lambda rows: any(r["hw"] == "robot" and r.get("behavior") == "wave" for r in rows),
        "a wave",
    )
    turn(
        fw,
        "Stop",
        lambda rows: any(r["hw"] == "command" and r["name"] == "stop" for r in rows),
        "command stop",
    )

    # event (up) → ack (down): the firmware's ring lets go of the event.
    fw.inject(sensor="panic", data={"active": True})
    fw.wait_for(
        lambda rows: any(r["hw"] == "sensor" and r.get("acked") == 1 for r in rows),
        what="the event's ack",
    )

    # A call for help → alert (down): shown on the screen.
    rows = turn(
        fw,
        "Help! I've fallen and I can't get up",
        lambda rows: any(r["hw"] == "alert" for r in rows),
        "an alert",
    )
    [alert] = [r for r in rows if r["hw"] == "alert"]
    assert alert["severity"] == "critical" and alert["id"].startswith("a-")

    # A frame the daemon refuses → error (down), which the firmware logs; an error (up)
    # from the device is logged by the daemon.
    fw.inject(send="event", body={"sensor": "door"})  # no seq
    fw.wait_for(
        lambda rows: any(r["hw"] == "log" and r["msg"].startswith("fayd: malformed") for r in rows),
        what="fayd's error frame",
    )
    fw.inject(send="error", body={"code": "unknown", "message": "contract probe"})

    # Heartbeats (up) are taken: the device stays online and its last-seen moves on.
    seen = status_device(daemon, DEVICE)["last_seen"]  # type: ignore[index]
    fw.wait_for(
        lambda rows: status_device(daemon, DEVICE)["last_seen"] > seen,  # type: ignore[index]
        within_s=20,
        what="a heartbeat",
    )
    log = daemon.log_text()
    assert f"device {DEVICE} reports unknown: contract probe" in log
    # Nothing the firmware sent on its own was refused, nor anything fayd sent to it.
    bad = [line for line in log.splitlines() if f"device {DEVICE} sent a bad" in line]
    assert bad == [f for f in bad if "event frame" in f and "seq" in f], bad
    assert not [r for r in fw.records("log") if r["msg"].startswith("bad ")]
    assert "unknown command" not in log

    # Offline: the setting is saved, not claimed; the device gets it at its next hello.
    fw.stop()
    wait_online(daemon, fw, DEVICE, False)
    done = set_cli(daemon, DEVICE, "volume=55")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        f"saved; {DEVICE} is offline: it gets them when it next says hello"
    ]
    before = len(fw.records())
    fw.start()
    fw.wait_for(
        lambda rows: any(r["hw"] == "i2s_out" and r.get("volume") == 55 for r in rows[before:]),
        what="the volume after the next hello",
    )


def test_a_device_that_does_not_answer_is_not_claimed(daemon: DaemonProcess) -> None:
    """A device that takes the settings command but never acks it (the simulator)."""
    import asyncio

    daemon.add_device("quiet-1")

    async def run() -> subprocess.CompletedProcess[str]:
        async with daemon.sim("quiet-1") as device:
            await device.hello(roles=("speaker",))
            await asyncio.sleep(0.5)
            return await asyncio.to_thread(set_cli, daemon, "quiet-1", "volume=30", "--wait", "1")

    done = asyncio.run(run())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "saved; quiet-1 did not confirm within 1 s: it gets them when it next says hello"
    ]


def mic_turn(daemon: DaemonProcess, fw: FirmwareProcess, speech: np.ndarray) -> list[dict]:
    """The speech reaches the microphone (appended to the host's mic.pcm); the records until
    the daemon's spoken reply is over."""
    before = len(fw.records())
    with (fw.folder / "mic.pcm").open("ab") as f:
        f.write(float_to_pcm16(speech))
    fw.wait_for(lambda rows: reply_over(rows[before:]), within_s=180, what="a spoken reply")
    return fw.records()[before:]


def test_push_to_talk_button(make_daemon, firmware, speak) -> None:
    daemon = make_daemon()
    fw = firmware(daemon_config(daemon, "ptt-1", ["mic", "speaker"], mic={"ptt_pin": 0}))
    wait_online(daemon, fw, "ptt-1", True)
    assert fw.records("mic")[0]["mode"] == "ptt"  # a ptt pin and no mode: push-to-talk
    (fw.folder / "mic.pcm").write_bytes(float_to_pcm16(speak("Good morning.")))  # not heard
    fw.inject(ptt=True)
    fw.wait_for(lambda rows: any(r.get("ptt") is True for r in rows), what="the press")
    speech = speak("What time is it?", pad_s=0.5)
    with (fw.folder / "mic.pcm").open("ab") as f:
        f.write(float_to_pcm16(speech))
    fw.wait_for(  # the firmware sends at the microphone's pace: 32 ms a frame
        lambda rows: (
            status_device(daemon, "ptt-1").get("audio", {}).get("received", 0)  # type: ignore[union-attr]
            * 512
            >= len(speech)
        ),
        within_s=60,
        what="the speech sent",
    )
    before = len(fw.records())
    fw.inject(ptt=False)
    fw.wait_for(lambda rows: reply_over(rows[before:]), within_s=180, what="a spoken reply")
    [sent] = [r for r in fw.records("mic") if "frames" in r]
    assert sent["frames"] * 512 >= len(speech)
    [question] = [text for role, text, _ in stored_messages(daemon, "ptt-1") if role == "user"]
    assert "time" in words(question), question
    assert "morning" not in words(question)  # sound before the press is not sent


def test_streaming_microphone_without_a_button(make_daemon, firmware, speak) -> None:
    daemon = make_daemon()
    fw = firmware(daemon_config(daemon, "stream-1", ["mic", "speaker"], mic={}))
    wait_online(daemon, fw, "stream-1", True)
    assert fw.records("mic")[0]["mode"] == "stream"  # no ptt pin: it streams
    rows = mic_turn(daemon, fw, speak("What time is it?"))
    assert any(r["hw"] == "rx" and r["key"] == "log" for r in rows)
    device = status_device(daemon, "stream-1")
    assert device and device["audio"]["received"] > 50 and device["audio"]["lost"] == 0


def test_a_run_from_the_checkout_writes_nothing_into_it(tmp_path: Path, make_daemon) -> None:
    """firmware/tools/host_boot.py on the checkout: the device's files (sensor ring, OTA
    pointer and folders, hw.jsonl) go to its state folder, never into firmware/."""
    daemon = make_daemon()
    config = daemon_config(daemon, "home-1", ["sensor"])
    config.pop("host", None)
    (tmp_path / "config.json").write_text(json.dumps(config))

    def listing() -> set[Path]:
        return {p for p in FIRMWARE.rglob("*") if ".host" not in p.parts}

    before = listing()
    env = {
        **os.environ,
        "FAYD_FW_CONFIG": str(tmp_path / "config.json"),
        "XDG_STATE_HOME": str(tmp_path / "xdg"),
        "MICROPYPATH": "",
    }
    env.pop("FAYD_FW_STATE", None)
    state = tmp_path / "xdg" / "fayd-fw" / "home-1"
    fw = FirmwareProcess.__new__(FirmwareProcess)  # read its records, not start it
    fw.folder, fw.proc, fw.log = state, None, tmp_path / "fw.log"
    with fw.log.open("wb") as log:
        proc = subprocess.Popen(
            [str(micropython()), str(FIRMWARE / "tools" / "host_boot.py")],
            cwd=FIRMWARE.parent,
            env=env,
            stdout=log,
            stderr=log,
        )
    try:
        fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
        fw.inject(sensor="door", data={"open": True})
        fw.wait_for(lambda rows: any(r.get("acked") == 1 for r in rows), what="ack")
    finally:
        proc.terminate()
        proc.wait(10)
    assert listing() == before
    assert {"hw.jsonl", "events.seq", "events"} <= {p.name for p in state.iterdir()}
