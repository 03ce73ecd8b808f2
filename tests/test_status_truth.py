"""``fayd status`` tells the truth (issue 28): ``ready`` only while devices can reach fayd and
their events are saved; each way it is degraded said with its reason (a broker gone, a
model file broken while it runs, one's own model broken and the default used instead); and
the embedded broker keeps its port or stops with one line. Against the real daemon
(fayd.testing.harness), real mosquitto and the real models."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fayd.agent.output import NO_VOICE_ERROR
from fayd.models import resolve
from fayd.protocol import SensorEvent, encode
from fayd.testing.disk import NoTmpfs, fill, small_disk
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import ANY_DEVICE, Broker, needs_mosquitto
from .test_broken_models import BROKEN, GARBAGE, broken_daemon, frames_until_text_end


def status(daemon: DaemonProcess) -> dict[str, Any]:
    done = daemon.cli("status", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def until(daemon: DaemonProcess, test: Callable[[dict[str, Any]], bool], within_s: float = 60):
    """The first status that passes ``test``; fails with the last one after ``within_s``."""
    deadline = time.monotonic() + within_s
    while True:
        found = status(daemon)
        if test(found):
            return found
        assert time.monotonic() < deadline, json.dumps(found, indent=1)[:4000]
        time.sleep(0.5)


def parts(found: dict[str, Any]) -> dict[str, str]:
    return {p["part"]: p["reason"] for p in found["degraded"]}


def mosquitto_of(daemon: DaemonProcess) -> int:
    assert daemon.proc is not None
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if name.endswith("(mosquitto") and int(rest.split()[1]) == daemon.proc.pid:
            return int(stat.parent.name)
    raise AssertionError("the daemon has no mosquitto")


def hold(port: int) -> socket.socket | None:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        return None
    sock.listen()
    return sock


@needs_mosquitto
def test_a_broker_that_dies_makes_status_not_ready_with_the_reason(make_daemon) -> None:
    daemon = make_daemon()
    assert until(daemon, lambda s: s["ready"] and s["broker"]["connected"])["health"] == "ok"
    port = int(daemon.runtime["mqtt"].rsplit(":", 1)[1])
    os.kill(mosquitto_of(daemon), signal.SIGKILL)
    thief = None  # the port taken as the broker dies: its restarts fail meanwhile
    deadline = time.monotonic() + 10
    while thief is None and time.monotonic() < deadline:
        thief = hold(port)
        time.sleep(0.01)
    assert thief is not None, "the broker's port did not come free"
    try:
        found = until(daemon, lambda s: "broker" in parts(s) and "mqtt" in parts(s))
        assert not found["ready"] and found["serving"] and found["health"] == "degraded"
        assert "the embedded broker is not running" in parts(found)["broker"]
        assert "devices cannot reach it" in parts(found)["mqtt"]
        text = daemon.cli("status").stdout
        assert "NOT READY" in text.splitlines()[0], text
        assert "degraded: the embedded broker is not running" in text
    finally:
        thief.close()
    # The port is free: the broker's next try brings it back, and status says ready.
    found = until(daemon, lambda s: s["ready"], within_s=150)
    assert found["health"] == "ok" and found["degraded"] == []


@needs_mosquitto
def test_an_external_broker_that_goes_away_is_said(make_daemon, tmp_path: Path) -> None:
    broker = Broker(tmp_path)
    broker.start()
    try:
        daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
        until(daemon, lambda s: s["ready"])
        broker.stop()
        found = until(daemon, lambda s: "mqtt" in parts(s))
        assert not found["ready"] and not found["broker"]["connected"]
        assert "fayd is not connected to the MQTT broker" in parts(found)["mqtt"]
        assert "broker" not in parts(found)  # not fayd's own broker: nothing of it to fail
        broker.start()  # the same port: fayd's link reconnects by itself
        until(daemon, lambda s: s["ready"], within_s=90)
    finally:
        broker.stop()


def on_broker(make_daemon: Any, broker: Broker) -> Callable[[dict[str, str]], DaemonProcess]:
    """``make_daemon`` on an open broker of the test's: its simulated devices need no key
    (what is tested here is status and models, not the broker's accounts)."""
    return lambda env: make_daemon(env | {"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})


@needs_mosquitto
async def test_a_model_file_broken_while_running_is_degraded_and_answered(
    make_daemon, broker: Broker, tmp_path: Path, speak
) -> None:
    daemon = broken_daemon(on_broker(make_daemon, broker), tmp_path, "vad", copy=True)
    module, [name] = BROKEN["vad"]
    found = status(daemon)
    assert found["ready"] and found["models"]["vad"]["ok"], found["models"]
    (tmp_path / "broken-models" / module / name).write_bytes(GARBAGE)  # the SD card's doing
    found = until(daemon, lambda s: not s["models"]["vad"]["ok"], within_s=30)
    assert found["ready"], "devices reach fayd and events are saved: still ready"
    assert found["health"] == "degraded"
    assert "changed while fayd runs" in parts(found)["model:vad"]
    assert "reinstall it with" in found["models"]["vad"]["problem"]
    text = daemon.cli("status").stdout
    assert "DEGRADED" in text.splitlines()[0] and "model vad  BROKEN " in text, text
    assert "the vad model broke while fayd runs" in daemon.log_text()
    async with SimDevice(broker.url, "kitchen-9") as sim:  # a new microphone: no VAD
        await sim.hello()
        await sim.speak(speak("What time is it?"))
        heard = await frames_until_text_end(sim)
    assert any(k == "error" and f.code == "no-model" for k, f in heard), heard


@needs_mosquitto
async def test_a_speaker_whose_voice_is_broken_gets_an_error_frame(
    make_daemon, broker: Broker, tmp_path: Path
) -> None:
    daemon = broken_daemon(on_broker(make_daemon, broker), tmp_path, "tts")
    found = status(daemon)
    assert found["models"]["tts"]["problem"] and "model:tts" in parts(found)
    assert "model tts  BROKEN " in daemon.cli("status").stdout
    async with SimDevice(broker.url, "speaker-9") as sim:
        await sim.hello(roles=("speaker",))  # no screen: the text alone would be silence
        await sim.say_text("what time is it")
        heard = await frames_until_text_end(sim)
    errors = [f for k, f in heard if k == "error"]
    assert errors and errors[0].code == "no-model" and errors[0].message == NO_VOICE_ERROR


@needs_mosquitto
def test_ones_own_corrupt_model_is_found_by_verify_and_the_default_runs(
    make_daemon, tmp_path: Path
) -> None:
    real = resolve("llm").files["model"]
    cut = tmp_path / "mine.gguf"  # a copy cut short: its header is whole, its tensors not
    with real.open("rb") as f:
        cut.write_bytes(f.read(16 << 20))
    env = {"FAYD_LLM_MODEL_PATH": str(cut), "FAYD_PATHS_STATE_DIR": str(tmp_path / "cli")}
    plain = subprocess.run(
        [sys.executable, "-m", "fayd", "models", "check"],
        env=os.environ | env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert f"llm    ok        {cut}\n" in plain.stdout  # there; only --verify loads it
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "models", "check", "--verify"],
        env=os.environ | env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"llm    broken    {cut}\n" in done.stdout
    assert "lies beyond the end of the file" in done.stdout
    assert "asr    ok " in done.stdout  # the others are still checked

    daemon = make_daemon({"FAYD_LLM_MODEL_PATH": str(cut)})  # was: exit 78, for good
    found = status(daemon)
    llm = found["models"]["llm"]
    assert llm["ok"] and not llm["own"] and llm["file"] == str(real), llm
    assert f'FAYD_LLM_MODEL_PATH="{cut}": cannot load it' in llm["fallback"]
    assert found["ready"] and found["health"] == "degraded"
    assert "the default runs instead" in parts(found)["model:llm"]
    text = daemon.cli("status").stdout
    assert "model llm  ok     default instead of yours" in text
    assert f"{cut}" in daemon.log_text() and "the default llm model is used instead" in (
        daemon.log_text()
    )
    reply = daemon.api("POST", "/api/say", json={"text": "tell me about the sea"}, timeout=120)
    assert reply.status_code == 200 and reply.json()["reply"]  # the default model answers


@needs_mosquitto
def test_a_taken_default_broker_port_stops_with_one_line(tmp_path: Path) -> None:
    held = hold(1884)  # None: something else holds it already, which serves as well
    base = {k: v for k, v in os.environ.items() if not k.startswith("FAYD_")}
    env = base | {
        "FAYD_PATHS_STATE_DIR": str(tmp_path / "state"),
        "FAYD_API_PORT": "0",
        "XDG_STATE_HOME": str(tmp_path),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fayd", "run"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        if held is not None:
            held.close()
    assert done.returncode == 1, done.stderr  # not 78: systemd tries again (the holder may go)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "fayd: mqtt.embedded_port = 1884 (the default): 127.0.0.1:1884 is in use by "
    ), line
    assert "the devices are set to this port, so the broker does not move" in line
    if held is not None:
        assert f"(pid {os.getpid()})" in line  # who holds it: this test


@needs_mosquitto
async def test_events_that_cannot_be_saved_make_status_not_ready(
    broker: Broker, tmp_path: Path
) -> None:
    try:
        with small_disk(tmp_path / "state", 48) as state:
            daemon = DaemonProcess(state, {"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
            daemon.log = tmp_path / "daemon.log"  # not on the disk that is filled
            daemon.start()
            try:
                await _fill_and_send(daemon, SimDevice(broker.url, "door-9"), state)
            finally:
                daemon.stop()
    except NoTmpfs as exc:
        pytest.skip(f"no tmpfs for a full disk (root?): {exc}")


async def _fill_and_send(daemon: DaemonProcess, device: SimDevice, state: Path) -> None:
    async with device as sim:
        await sim.hello(roles=("sensor",))
        until(daemon, lambda s: s["ready"])
        fillers = [fill(state).rename(state / "filler-0")]
        try:
            seq = 0
            deadline = time.monotonic() + 60
            found = status(daemon)
            while "events" not in parts(found):
                assert time.monotonic() < deadline, json.dumps(found["degraded"])
                # fayd frees its reserve and caches at the first full write: taken too.
                fillers.append(fill(state).rename(state / f"filler-{len(fillers)}"))
                for _ in range(20):  # each a write the full disk refuses
                    seq += 1
                    event = SensorEvent(seq=seq, sensor="door", data={"open": True})
                    await sim.publish("event", encode(event))
                await asyncio.sleep(0.5)
                found = await asyncio.to_thread(status, daemon)
            assert not found["ready"] and found["serving"]
            assert "sensor events are not being saved" in parts(found)["events"]
        finally:
            for filler in fillers:
                filler.unlink(missing_ok=True)
        found = await asyncio.to_thread(lambda: until(daemon, lambda s: "events" not in parts(s)))
        assert found["ready"] or "events" not in parts(found)
