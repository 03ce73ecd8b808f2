"""Start-up that stops or heals, never loops blindly: each wrong setting, missing file and
taken port stops ``fayd run`` (a real subprocess) with one line naming the setting and
where it came from, and a non-zero exit; a default API port that is taken is swapped for a
free one and said so; a component that keeps failing is reported once, then retried quietly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.testing.harness import DaemonProcess

from .conftest import MOSQUITTO, Broker, needs_mosquitto

#: Every start-up error comes well before this (the models load in ~15 s here).
BOUND_S = 120


def fayd_run(tmp_path: Path, env: dict[str, str | None], *args: str) -> subprocess.CompletedProcess:
    """``fayd [args] run`` in a folder of its own, without the harness's port-0 settings
    (an ``env`` value of None unsets that variable)."""
    base: dict[str, str | None] = {k: v for k, v in os.environ.items() if not k.startswith("FAYD_")}
    base |= {"FAYD_PATHS_STATE_DIR": str(tmp_path / "state"), "XDG_STATE_HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "fayd", *args, "run"],
        env={k: v for k, v in (base | env).items() if v is not None},
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )


def one_line(done: subprocess.CompletedProcess, code: int = 78) -> str:
    """The error line, which must be the only thing on stderr for a settings error (exit
    78: systemd does not retry it) or a port in use (exit 1: the holder may go away)."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fayd.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_malformed_mqtt_url_stops_at_start_naming_the_file(tmp_path: Path) -> None:
    conf = write_config(tmp_path, '[mqtt]\nurl = "mqtt:/x"\n')
    line = one_line(fayd_run(tmp_path, {}, "--config", str(conf)))
    assert line == (
        f"fayd: {conf}: mqtt.url = \"mqtt:/x\": not a URL like mqtt://host:1883, or 'embedded'"
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"FAYD_MQTT_URL": "mqtt://broker:99999"},
            'FAYD_MQTT_URL="mqtt://broker:99999": not a URL like mqtt://host:1883 (its port',
        ),
        ({"FAYD_API_PORT": "70000"}, "FAYD_API_PORT=70000: not a port: 1-65535"),
        ({"FAYD_LLM_URL": "192.168.1.20:8080"}, "not a URL like http://192.168.1.20:8080"),
        ({"FAYD_SPEECH_TTS_ENGINE": "festival"}, "must be one of 'piper', 'sherpa'"),
        ({"FAYD_AGENT_DEFAULT_USER": " ann"}, "not a user name: up to 64 printable characters"),
        ({"FAYD_AGENT_DEFAULT_USER": ""}, 'FAYD_AGENT_DEFAULT_USER="": an empty user name'),
        ({"FAYD_MQTT_PREFIX": "fayd/+/v1"}, "not a topic prefix like fayd/v1"),
        ({"FAYD_AGENT_TIMEZONE": "Mars/Base"}, "not a time zone like Europe/London"),
        ({"FAYD_LOG_LEVEL": "loud"}, "must be one of 'debug', 'info'"),
        # $'fayd/\xff' in a shell: the byte reaches Python as "\udcff" (surrogateescape).
        (
            {"FAYD_MQTT_PREFIX": "fayd/\udcff"},
            'FAYD_MQTT_PREFIX="fayd/\\udcff": not UTF-8 text (the byte 0xff at character 5)',
        ),
        ({"FAYD_LLM_THREADS": "-3"}, "FAYD_LLM_THREADS=-3: must be 1-256 threads"),
        ({"FAYD_LLM_MAX_TOKENS": "0"}, "FAYD_LLM_MAX_TOKENS=0: must be at least 1"),
        ({"FAYD_MQTT_EMBEDDED_PORT": "70000"}, "FAYD_MQTT_EMBEDDED_PORT=70000: not a port"),
    ],
)
def test_a_wrong_value_stops_at_start_naming_the_setting(
    tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    line = one_line(fayd_run(tmp_path, env))
    assert line.startswith("fayd: environment: FAYD_"), line
    assert expected in line


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("llm.model_path", "/nope.gguf", 'llm.model_path = "/nope.gguf": no such file or folder'),
        ("speech.asr_model", "/nope/whisper", "no such file or folder"),
        ("speech.tts_model", "/etc/hostname", "needs /etc/hostname.json beside it"),
        ("speech.wake_word", "hey_jarvs", "not a bundled wake word (hey_jarvis, alexa,"),
        ("agent.qa_csv", "/nope/qa.csv", 'agent.qa_csv = "/nope/qa.csv": no such file'),
        ("mqtt.mosquitto_bin", "/nope/mosquitto", "not found; sudo apt-get install mosquitto"),
        ("paths.state_dir", "/dev/null/fayd", "cannot use /dev/null/fayd: Not a directory"),
    ],
)
def test_a_path_that_is_not_there_stops_at_start(
    tmp_path: Path, setting: str, value: str, expected: str
) -> None:
    section, key = setting.split(".")
    conf = write_config(tmp_path, f'[{section}]\n{key} = "{value}"\n')
    env: dict[str, str | None] = {"FAYD_PATHS_STATE_DIR": None} if section == "paths" else {}
    done = fayd_run(tmp_path, env, "--config", str(conf))
    line = one_line(done)
    assert line.startswith(f"fayd: {conf}: {setting} = "), line
    assert expected in line


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port this test listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_configured_api_port_in_use_stops_naming_who_holds_it(
    tmp_path: Path, held_port: int
) -> None:
    line = one_line(fayd_run(tmp_path, {"FAYD_API_PORT": str(held_port)}), code=1)
    assert line.startswith(
        f"fayd: environment: FAYD_API_PORT={held_port}: 127.0.0.1:{held_port} is in use by "
    ), line
    assert f"(pid {os.getpid()})" in line  # this test holds it


@needs_mosquitto
def test_a_configured_broker_port_in_use_by_mosquitto_stops(tmp_path: Path) -> None:
    other = Broker(tmp_path)
    other.start()
    try:
        conf = write_config(tmp_path, f"[mqtt]\nembedded_port = {other.port}\n")
        line = one_line(fayd_run(tmp_path, {"FAYD_API_PORT": "0"}, "--config", str(conf)), code=1)
    finally:
        other.stop()
    assert line == (
        f"fayd: {conf}: mqtt.embedded_port = {other.port}: 127.0.0.1:{other.port} is in use"
        f" by mosquitto (pid {other.proc.pid})"
    )


@needs_mosquitto
def test_a_broker_that_cannot_start_stops_the_start_with_its_reason(tmp_path: Path) -> None:
    # A mosquitto that fails the way a real one does when its port is taken after the
    # check: it says why on stderr and exits at once.
    fake = tmp_path / "mosquitto"
    fake.write_text("#!/bin/sh\necho '1700000000: Error: Address already in use' >&2\nexit 1\n")
    fake.chmod(0o755)
    env = {"FAYD_MQTT_MOSQUITTO_BIN": str(fake), "FAYD_API_PORT": "0"}
    done = fayd_run(tmp_path, env | {"FAYD_MQTT_EMBEDDED_PORT": "0"})
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "fayd: the embedded broker could not start:"
        " mosquitto exited with code 1: Error: Address already in use"
    )
    assert "embedded broker listening" not in done.stderr
    assert "Traceback" not in done.stderr


# --- defaults that heal: a daemon whose default ports are taken ----------------------------


def hold(port: int) -> socket.socket | None:
    """Listen on ``port``, or None when something else already does (taken either way)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        return None
    sock.listen()
    return sock


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """fayd on its default API port while 8731 is taken (the broker's default is never
    swapped: tests/test_status_truth.py)."""
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    held = [hold(8731)]
    daemon = DaemonProcess(tmp_path_factory.mktemp("crowded"))
    del daemon.env["FAYD_API_PORT"]  # the default, not port 0
    try:
        daemon.start()
        yield daemon
    finally:
        assert daemon.stop() == 0, daemon.log_text()
        for sock in held:
            if sock:
                sock.close()


def test_a_taken_default_api_port_is_swapped_for_a_free_one_and_said(
    crowded: DaemonProcess,
) -> None:
    runtime = crowded.runtime
    assert not runtime["api"].endswith(":8731")
    status = crowded.cli("status")
    assert status.returncode == 0, status.stderr
    assert f"broker: {runtime['mqtt']} (embedded), connected" in status.stdout
    assert "note: api.port 8731 was in use" in status.stdout
    assert f"fayd listens on {runtime['api']} instead" in status.stdout
    assert "api.port 8731 was in use" in crowded.log_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="mosquitto only warns when started as root")
def test_mosquitto_does_not_run_as_root(crowded: DaemonProcess) -> None:
    assert "should not be run as root" not in crowded.log_text()
    pid = mosquitto_of(crowded)
    assert Path(f"/proc/{pid}").stat().st_uid != 0


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


def test_a_component_failing_the_same_way_is_reported_once_then_heals(
    crowded: DaemonProcess,
) -> None:
    port = int(crowded.runtime["mqtt"].rsplit(":", 1)[1])
    before = crowded.log_text()
    os.kill(mosquitto_of(crowded), signal.SIGKILL)
    thief = None
    deadline = time.monotonic() + 10
    while thief is None and time.monotonic() < deadline:  # its socket closes as it dies
        thief = hold(port)
        time.sleep(0.01)
    assert thief is not None, "the broker's port did not come free"
    try:
        # Restarts 1 s, 2 s, 4 s after failures: two fail on the taken port within ~4 s.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            components = json.loads(crowded.cli("status", "--json").stdout)["components"]
            broker = next(c for c in components if c["name"] == "broker")
            if broker["failures"] >= 2:
                break
            time.sleep(0.5)
        assert broker["state"] == "failing" and broker["failures"] >= 2, broker
        assert "Address already in use" in broker["last_error"]
        text = crowded.cli("status").stdout
        assert "component broker FAILING (" in text and "Address already in use" in text
    finally:
        thief.close()
    log = crowded.log_text()[len(before) :]
    # The kill is one failure; the taken port another, reported once with its reason…
    taken = "mosquitto exited with code 1: Error: Address already in use"
    assert log.count(f"ERROR   fayd.service.supervisor: component broker failed: {taken}") == 1
    assert log.count("ERROR   fayd.transport.broker: mosquitto:") == 1, log
    assert f"component broker still failing (2 times): {taken}" in log  # …then a line a try
    assert "Traceback" not in log
    # The port is free again: the next try brings the broker back.
    deadline = time.monotonic() + 30
    while "connected" not in crowded.cli("status").stdout.split("broker:", 1)[1].split("\n")[0]:
        assert time.monotonic() < deadline, crowded.log_text()[len(before) :]
        time.sleep(0.5)
