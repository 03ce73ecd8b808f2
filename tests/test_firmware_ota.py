"""Firmware updates over the link (issue 5 item 8), on MicroPython's unix port: the device's
filesystem is a folder laid out like the ESP32's (boot.py, main.py, config.json and the app
as flashed); firmware/tools/host_boot.py runs boot.py then main.py, and is run again on the
same folder after every reset (exit status 3) or crash: those are the boots. Updates go
through the real daemon and its broker with ``fayd devices ota``."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from fayd.service.harness import DaemonProcess

from .conftest import FIRMWARE, FIRMWARE_LIB, FirmwareProcess, micropython
from .test_firmware_mqtt import mqtt_config, status_device

pytestmark = pytest.mark.skipif(
    micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists(),
    reason="MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh",
)

APP = ["version.py", "fayd_fw"]  # what the flashed app is, next to boot.py and main.py


class Esp32(FirmwareProcess):
    """A device folder with the firmware copied in, booted by tools/host_boot.py."""

    def __init__(self, folder: Path, config: dict) -> None:
        folder.mkdir(parents=True)
        for name in ["boot.py", "main.py", *APP]:
            src = FIRMWARE / name
            if src.is_dir():
                shutil.copytree(src, folder / name)
            else:
                shutil.copy(src, folder / name)
        super().__init__(folder, config)

    def start(self) -> Esp32:
        assert self.proc is None
        env = {
            **os.environ,
            "MICROPYPATH": f"{self.folder}:{FIRMWARE_LIB}",
            "FAYD_FW_CONFIG": str(self.config_path),
        }
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(micropython()), str(FIRMWARE / "tools" / "host_boot.py")],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        return self

    def wait_exit(self, within_s: float = 60.0) -> int:
        """The process ends by itself (a reset or a crash); its exit status."""
        assert self.proc is not None
        try:
            rc = self.proc.wait(within_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the device did not restart:\n{self.log_text()}") from None
        self.proc = None
        return rc

    def pointer(self) -> dict:
        return json.loads((self.folder / "ota.json").read_text())

    def booted(self) -> list[str]:
        return [r["fw"] for r in self.records("boot")]


@pytest.fixture
def esp32(tmp_path: Path):
    made: list[Esp32] = []

    def make(config: dict) -> Esp32:
        made.append(Esp32(tmp_path / "esp32", config))
        return made[-1].start()

    yield make
    for dev in made:
        dev.stop()


def app_folder(where: Path, version: str, broken: bool = False) -> Path:
    """The flashed app with one module changed: version.py says ``version``; a broken one
    also raises when imported."""
    where.mkdir(parents=True)
    shutil.copytree(FIRMWARE / "fayd_fw", where / "fayd_fw")
    text = f'FW_VERSION = "{version}"\n'
    if broken:
        text += 'raise RuntimeError("broken build")\n'
    (where / "version.py").write_text(text)
    return where


def wait_fw(daemon: DaemonProcess, dev: Esp32, device: str, fw: str) -> dict:
    def check(_rows: list) -> dict | None:
        d = status_device(daemon, device)
        return d if d and d["online"] and d["fw"] == fw else None

    return dev.wait_for(check, within_s=60, what=f"hello with fw {fw}")  # type: ignore[return-value]


def ota_cli(daemon: DaemonProcess, device: str, folder: Path) -> subprocess.Popen[str]:
    """``fayd devices ota`` in the background: it returns once the device rebooted."""
    return subprocess.Popen(
        [sys.executable, "-m", "fayd", "devices", "ota", device, "--dir", str(folder)],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(cli: subprocess.Popen[str], within_s: float = 120.0) -> tuple[int, str]:
    try:
        out, err = cli.communicate(timeout=within_s)
    except subprocess.TimeoutExpired:
        cli.kill()
        cli.communicate(timeout=10)
        raise
    return cli.returncode, out + err


def test_update_then_a_broken_update_goes_back(make_daemon, esp32, tmp_path) -> None:
    daemon = make_daemon()
    dev = esp32(mqtt_config(daemon.runtime["mqtt"], "ota-1", ["sensor"]))
    wait_fw(daemon, dev, "ota-1", "0.1.0")
    assert not (dev.folder / "ota.json").exists()

    # A new version.py: only it is sent; the device reboots into the new version.
    new = app_folder(tmp_path / "v2", "0.2.0")
    n_files = sum(1 for p in new.rglob("*") if p.is_file())
    cli = ota_cli(daemon, "ota-1", new)
    assert dev.wait_exit() == 3, dev.log_text()  # the reset after the commit
    assert dev.pointer()["state"] == "trial" and dev.pointer()["active"] == "app_a"
    assert (dev.folder / "app_a" / "version.py").read_text() == 'FW_VERSION = "0.2.0"\n'
    dev.start()
    rc, out = finish(cli)
    assert rc == 0, out + daemon.log_text()
    assert "now running 0.2.0" in out
    assert f"{n_files - 1} of {n_files} files unchanged" in out and "in 1 chunks" in out
    device = wait_fw(daemon, dev, "ota-1", "0.2.0")
    assert device["caps"]["ota"] == {"slot": "app_a", "state": "trial"}  # as it said hello
    assert dev.pointer()["state"] == "ok"  # then confirmed: it heard from fayd
    assert any(r.get("confirmed") == "0.2.0" for r in dev.records("ota"))
    assert dev.booted() == ["0.1.0", "0.2.0"]

    # A confirmed version stays after a power cycle.
    dev.stop()
    dev.start()
    dev.wait_for(lambda rows: len([r for r in rows if r["hw"] == "boot"]) == 3, what="boot")
    assert dev.booted()[-1] == "0.2.0"

    # A version that raises at import: after the failed boot, back to 0.2.0.
    broken = app_folder(tmp_path / "v3", "0.3.0", broken=True)
    cli = ota_cli(daemon, "ota-1", broken)
    assert dev.wait_exit() == 3, dev.log_text()
    assert dev.pointer()["active"] == "app_b" and dev.pointer()["previous"] == "app_a"
    dev.start()
    assert dev.wait_exit() != 0  # the trial boot: RuntimeError at import
    assert "broken build" in dev.log.read_text()
    dev.start()  # boot.py finds 0.3.0 unconfirmed and goes back
    rc, out = finish(cli)
    assert rc == 1, out
    assert "did not keep 0.3.0: it went back to 0.2.0 (0.3.0 failed to boot)" in out
    device = wait_fw(daemon, dev, "ota-1", "0.2.0")
    assert device["caps"]["ota"] == {"slot": "app_a", "state": "ok", "failed": "0.3.0"}
    assert dev.booted() == ["0.1.0", "0.2.0", "0.2.0", "0.2.0"]
    assert dev.proc is not None and dev.proc.poll() is None


def test_a_corrupted_file_is_refused_and_the_old_version_stays(
    make_daemon, esp32, tmp_path
) -> None:
    daemon = make_daemon()
    dev = esp32(mqtt_config(daemon.runtime["mqtt"], "ota-2", ["sensor"]))
    wait_fw(daemon, dev, "ota-2", "0.1.0")
    new = app_folder(tmp_path / "v2", "0.2.0")
    files = []
    for path in sorted(p for p in new.rglob("*") if p.is_file()):
        data = path.read_bytes()
        rel = path.relative_to(new).as_posix()
        # version.py's bytes change on the way: the hash is of what was read.
        sent = data.replace(b"0.2.0", b"0.2.1") if rel == "version.py" else data
        files.append(
            {
                "path": rel,
                "data": base64.b64encode(sent).decode(),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    r = httpx.post(
        daemon.runtime["api"] + "/api/devices/ota-2/ota",
        json={"version": "0.2.0", "files": files},
        timeout=120,
    )
    assert r.status_code == 502, r.text
    assert r.json()["error"] == (
        "the device refused ota_commit: ota-hash: ota_commit: sha256 mismatch: version.py"
    )
    assert dev.proc is not None and dev.proc.poll() is None  # no reset
    assert not (dev.folder / "ota.json").exists()  # nothing switched
    assert any(r.get("refused") == "0.2.0" for r in dev.records("ota"))
    assert status_device(daemon, "ota-2")["fw"] == "0.1.0"
    dev.stop()
    dev.start()
    wait_fw(daemon, dev, "ota-2", "0.1.0")
    assert dev.booted() == ["0.1.0", "0.1.0"]

    # Clear errors for what cannot be sent.
    cli = daemon.cli("devices", "ota", "nobody", "--dir", str(new), timeout=60)
    assert cli.returncode == 1 and "no device 'nobody' has said hello" in cli.stderr
    cli = daemon.cli("devices", "ota", "ota-2", "--dir", str(new), "--version", "9", timeout=60)
    assert cli.returncode == 1 and "--version 9, but" in cli.stderr


RESUME = r"""
import binascii, hashlib, sys
sys.path.insert(0, "%(fw)s")
from fayd_fw import FwError, hw
from fayd_fw.ota import Ota
hw.setup({"host": {"dir": "%(dir)s"}})
data = b"x = 1\n" * 1000
sha = binascii.hexlify(hashlib.sha256(data).digest()).decode()
begin = {"version": "9", "files": [{"path": "big.py", "size": len(data), "sha256": sha}]}
def chunk(o, off, n):
    return o.handle("ota_chunk", {"path": "big.py", "offset": off,
                                  "data": binascii.b2a_base64(data[off:off + n]).decode()})
o = Ota("%(dir)s", "1")
print(o.handle("ota_begin", begin)["have"])
print(chunk(o, 0, 2048)["have"], chunk(o, 0, 2048)["have"])  # a retried chunk
for bad in (4096, -1):
    try:
        chunk(o, bad, 10)
    except FwError as e:
        print(e.code)
o = Ota("%(dir)s", "1")  # a reboot: the transfer is gone from memory, not from the disk
try:
    chunk(o, 2048, 2048)
except FwError as e:
    print(e.code)
have = o.handle("ota_begin", begin)["have"]["big.py"]
print(have)
while have < len(data):
    have = chunk(o, have, 2048)["have"]
print(o.handle("ota_commit", {"version": "9"}))
"""


def test_chunks_are_idempotent_and_resume_after_a_reboot(tmp_path: Path) -> None:
    script = tmp_path / "resume.py"
    script.write_text(RESUME % {"fw": FIRMWARE, "dir": tmp_path})
    run = subprocess.run(
        [str(micropython()), str(script)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split("\n")[:6] == [
        "{'big.py': 0}",
        "2048 2048",
        "ota-offset",
        "malformed",
        "ota-state",
        "2048",
    ]
    assert "'reboot': True" in run.stdout
    assert json.loads((tmp_path / "ota.json").read_text())["state"] == "trial"
