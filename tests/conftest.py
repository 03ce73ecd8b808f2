"""Shared fixtures: a real mosquitto on a free loopback port, and fayd itself as a
subprocess on embedded defaults in a temporary state folder. Every wait is bounded."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.service.harness import DaemonProcess, free_port

MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
needs_mosquitto = pytest.mark.skipif(
    MOSQUITTO is None, reason="mosquitto binary not installed (./install.sh installs it)"
)


def wait_port(port: int, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on {port} after {within_s} s")


class Broker:
    """A real mosquitto on loopback that a test can stop and start again."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
            f"user {os.environ.get('USER') or 'root'}\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert MOSQUITTO
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.port)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    b = Broker(tmp_path)
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon with the real default models, shared by the end-to-end tests."""
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    d = DaemonProcess(tmp_path_factory.mktemp("fayd-state")).start()
    yield d
    assert d.stop() == 0, d.log_text()


@pytest.fixture
def make_daemon(tmp_path: Path) -> Iterator[type]:
    """Start daemons with special settings; each is stopped after the test."""
    started: list[DaemonProcess] = []

    def make(env: dict[str, str] | None = None, wait_ready: bool = True) -> DaemonProcess:
        d = DaemonProcess(tmp_path / f"state{len(started)}", env)
        started.append(d)
        return d.start(wait_ready)

    yield make  # type: ignore[misc]
    for d in started:
        d.stop()


@pytest.fixture(scope="session")
def speak():
    """text → 16 kHz float32 speech from the default Piper voice, made at test time."""
    from fayd.models import resolve
    from fayd.speech.audio import pcm16_to_float, resample
    from fayd.speech.tts import PiperTts

    try:
        files = resolve("tts").files
    except Exception as exc:  # ModelMissing: say what to install
        pytest.skip(f"the Piper voice is not installed: {exc}")
    tts = PiperTts(files["model"], files.get("config"))

    def make(text: str, pad_s: float = 1.0):
        import numpy as np

        samples = resample(pcm16_to_float(b"".join(tts.synthesize(text))), tts.sample_rate, 16000)
        pad = np.zeros(int(16000 * pad_s), dtype=np.float32)
        return np.concatenate([pad, samples, pad])

    return make
