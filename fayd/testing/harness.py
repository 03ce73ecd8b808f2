"""Runs ``fayd run`` as a subprocess in a folder of its own, on its embedded defaults:
the harness of the end-to-end tests and the benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import httpx

from fayd.auth import read_token
from fayd.testing.simulator import SimDevice
from fayd.transport.mqtt import parse_mqtt_url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: What a start makes in the state's ``cache/`` and a later start reuses: the examples'
#: vectors, the model's read prompt, the models' digests (5 of a fresh start's 10 s here).
#: Each file says what it was made from and is made again when that differs, so the test
#: daemons of a run share them: each fresh one is given the latest, and leaves its own.
CACHED = ("example-vectors.npz", "llm-prefix.bin", "model-digests.json")
SHARED_CACHE = Path(tempfile.gettempdir()) / f"fayd-test-cache-{os.getuid()}"
#: The tests' conftest turns this on; benchmarks that time a start leave it off.
SHARE_CACHE = False
#: Settings every test daemon starts with, before a test's own (the tests' conftest sets them).
DAEMON_ENV: dict[str, str] = {}


def _copy_newer(source: Path, target: Path) -> None:
    """``source`` over ``target`` when newer, atomically; a full disk or a race: not copied."""
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        if target.exists() and target.stat().st_mtime_ns >= source.stat().st_mtime_ns:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, part)
        os.replace(part, target)
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)


class DaemonProcess:
    """``fayd run`` in a subprocess, on its embedded defaults in a temporary folder.
    ``shared_cache``: start with the rebuildable files other test daemons made (above;
    None: ``SHARE_CACHE``)."""

    def __init__(
        self, state: Path, env: dict[str, str] | None = None, shared_cache: bool | None = None
    ) -> None:
        self.state = state
        self.shared_cache = SHARE_CACHE if shared_cache is None else shared_cache
        self.env = {
            **os.environ,
            "FAYD_PATHS_STATE_DIR": str(state),
            "FAYD_MQTT_EMBEDDED_PORT": "0",
            "FAYD_API_PORT": "0",
            "PYTHONUNBUFFERED": "1",
            **DAEMON_ENV,
            **(env or {}),
        }
        self.log = state / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_ready: bool = True) -> DaemonProcess:
        self.state.mkdir(parents=True, exist_ok=True)
        # One left by a daemon that was killed would pass for this one's.
        (self.state / "runtime.json").unlink(missing_ok=True)
        if self.shared_cache:
            for name in CACHED:
                if (SHARED_CACHE / name).exists() and not (self.state / "cache" / name).exists():
                    _copy_newer(SHARED_CACHE / name, self.state / "cache" / name)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fayd", "run"], env=self.env, stdout=log, stderr=log
            )
        if wait_ready:
            self.wait_runtime()
        return self

    def wait_runtime(self, within_s: float = 300.0) -> dict:
        # Generous: a test is not a speed check (benchmarks/ measure starts), and a shared
        # CI machine once took 94 s to load the models.
        deadline = time.monotonic() + within_s
        path = self.state / "runtime.json"
        while time.monotonic() < deadline:
            assert self.proc and self.proc.poll() is None, f"fayd exited:\n{self.log_text()}"
            if path.exists():
                return json.loads(path.read_text())
            time.sleep(0.05)
        raise TimeoutError(f"fayd not ready after {within_s} s:\n{self.log_text()}")

    @property
    def runtime(self) -> dict:
        return json.loads((self.state / "runtime.json").read_text())

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fayd", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def add_device(self, device: str) -> dict:
        """``fayd devices add DEVICE --json``: its key and MQTT login (the broker admits it
        once this returns)."""
        done = self.cli("devices", "add", device, "--json", timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"fayd devices add {device}: {done.stderr}")
        return json.loads(done.stdout)

    def mqtt_client(self, device: str, **options: object) -> aiomqtt.Client:
        """A raw MQTT client logged in as ``device`` (added first), on the daemon's broker."""
        password = self.add_device(device)["mqtt_password"]
        host, port = parse_mqtt_url(self.runtime["mqtt"])
        return aiomqtt.Client(
            host, port, identifier=device, username=device, password=password, **options
        )

    def sim(self, device: str) -> SimDevice:
        """A simulated device, added first (with a key) like a real one."""
        password = self.add_device(device)["mqtt_password"]
        return SimDevice(self.runtime["mqtt"], device, password=password)

    def api(self, method: str, path: str, **kw: object) -> httpx.Response:
        """A request to the control API, with the token (fayd.auth)."""
        token = read_token(self.state)
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.request(method, self.runtime["api"] + path, headers=headers, **kw)

    def setting(self, device: str, name: str) -> Any:
        """A device's stored setting (``device_settings.<name>``), None when not set."""
        if not name.isidentifier():
            raise ValueError(f"not a setting's column: {name!r}")
        conn = sqlite3.connect(self.state / "fayd.db", timeout=10)
        try:
            sql = f"SELECT {name} FROM device_settings WHERE device = ?"
            found = conn.execute(sql, [device]).fetchone()
            return found[0] if found else None
        finally:
            conn.close()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.shared_cache:
            for name in CACHED:
                if (self.state / "cache" / name).exists():
                    _copy_newer(self.state / "cache" / name, SHARED_CACHE / name)
        return self.proc.returncode


def run_against_daemon(measure: Callable[[DaemonProcess], Awaitable[dict]]) -> dict:
    """Run an async measurement against a fresh daemon in a temporary folder (for the
    benchmarks); the result also says how the daemon ended and if its log has a traceback."""
    with tempfile.TemporaryDirectory(prefix="fayd-bench-") as tmp:
        daemon = DaemonProcess(Path(tmp) / "state").start()
        try:
            result = asyncio.run(measure(daemon))
        finally:
            code = daemon.stop()
        result["daemon_exit"] = code
        result["log_tracebacks"] = daemon.log_text().count("Traceback")
    return result
