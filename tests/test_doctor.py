"""``fayd doctor`` on a fresh state folder, beside a running daemon, with its token file
made world-readable and with a model's file missing (a shadow package of that name first
on PYTHONPATH, so the real one in the shared venv is untouched)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.doctor.sockets import exposure, listening
from fayd.testing.harness import DaemonProcess

from .conftest import needs_mosquitto


def doctor(env: dict[str, str]) -> tuple[int, dict[str, str]]:
    """Its exit code, and each check's "level detail" by what it checked ("model vad")."""
    argv = [sys.executable, "-m", "fayd", "doctor", "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    checks = json.loads(done.stdout)
    return done.returncode, {c["what"]: f"{c['level']} {c['detail']}" for c in checks}


def test_the_plain_output_is_one_line_per_check(tmp_path: Path) -> None:
    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(tmp_path / "s")}
    argv = [sys.executable, "-m", "fayd", "doctor"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert len(done.stdout.splitlines()) == len(doctor(env)[1])
    assert all(line.split()[0] in ("ok", "warn", "fail") for line in done.stdout.splitlines())


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("doctor"), {"FAYD_SERIAL_ENABLED": "false"})
    yield d.start()
    assert d.stop() == 0, d.log_text()


def test_a_fresh_state_folder_warns_and_makes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "fresh"
    code, lines = doctor({**os.environ, "FAYD_PATHS_STATE_DIR": str(state)})
    assert code == 0, lines
    assert lines["daemon"].startswith("warn") and "fayd run" in lines["daemon"]
    assert lines["state folder"].startswith("warn") and "not there yet" in lines["state folder"]
    assert lines["model vad"].startswith("ok") and "sha256 right" in lines["model vad"]
    assert lines["broker"].startswith("ok") and lines["clock"].startswith("ok")
    assert not state.exists()  # doctor looks; it makes nothing


@needs_mosquitto
def test_beside_a_running_daemon_everything_is_ok(running: DaemonProcess) -> None:
    code, lines = doctor(running.env)
    assert code == 0, lines
    assert lines["daemon"].startswith("ok running,")
    assert lines["broker"].startswith("ok embedded 127.0.0.1:")
    assert "loopback" in lines["api socket"] and lines["api socket"].startswith("ok")
    assert "loopback" in lines["broker socket"]
    assert lines["state folder"].startswith("ok") and "mode 700" in lines["state folder"]
    assert lines["token file"].startswith("ok") and "mode 600" in lines["token file"]
    assert not [line for line in lines.values() if line.startswith("fail")]


@needs_mosquitto
def test_a_world_readable_token_fails_with_the_fix(running: DaemonProcess) -> None:
    token = running.state / "api_token"
    token.chmod(0o644)
    try:
        code, lines = doctor(running.env)
    finally:
        token.chmod(0o600)
    assert code == 1
    assert lines["token file"].startswith("fail") and f"chmod 600 {token}" in lines["token file"]
    assert doctor(running.env)[0] == 0  # fixed as it says: fine again


def test_a_model_missing_a_file_fails_with_the_install_command(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "silero_vad"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")  # the package, without data/silero_vad.onnx
    path = os.pathsep.join(filter(None, [str(shadow.parent), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "FAYD_PATHS_STATE_DIR": str(tmp_path / "s")}
    code, lines = doctor(env)
    assert code == 1
    vad = lines["model vad"]
    assert vad.startswith("fail") and "silero_vad.onnx" in vad and "fayd models install vad" in vad
    assert lines["model asr"].startswith("ok")


def test_listening_addresses_are_read_from_proc_tables(tmp_path: Path) -> None:
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when uid inode\n"
    row = "   0: {}:{:04X} 00000000:0000 {} 00000000:00000000 00:0 0  1000   0 {} 1\n"
    (tmp_path / "tcp").write_text(
        head
        + row.format("0100007F", 8731, "0A", 11)  # 127.0.0.1, listening
        + row.format("00000000", 1884, "0A", 12)  # 0.0.0.0
        + row.format("0101A8C0", 8731, "01", 13)  # 192.168.1.1, established: not listening
    )
    (tmp_path / "tcp6").write_text(head + row.format("0" * 24 + "01000000", 8731, "0A", 14))
    assert listening(8731, tmp_path) == ["127.0.0.1", "::1"]
    assert exposure(listening(8731, tmp_path)) == "this box only (loopback)"
    assert exposure(listening(1884, tmp_path)) == "the LAN (every interface)"
    assert exposure(["127.0.0.1", "192.168.1.5"]) == "the LAN (192.168.1.5)"
