"""Firmware updates over the link (issue 5 item 8), on MicroPython's unix port: the device's
filesystem is a folder laid out like the ESP32's (boot.py, main.py, config.json and the app
as flashed); firmware/tools/host_boot.py runs boot.py then main.py, and is run again on the
same folder after every reset (exit status 3) or crash: those are the boots. Updates go
through the real daemon and its broker with ``fayd devices ota``."""

from __future__ import annotations

import asyncio
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

from fayd.auth import ota_signature, read_token
from fayd.devices.ota import DeviceRefused, OtaFile, OtaManager
from fayd.protocol import Topics, decode
from fayd.testing.firmware import FIRMWARE, FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess
from fayd.transport.mqtt import MqttLink

from .test_firmware_mqtt import daemon_config, mqtt_config, status_device

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
    dev = esp32(daemon_config(daemon, "ota-1", ["sensor"]))
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
    config = daemon_config(daemon, "ota-2", ["sensor"])
    key = config["key"]
    dev = esp32(config)
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
    manifest = [(f["path"], len(base64.b64decode(f["data"])), f["sha256"]) for f in files]
    signature = ota_signature(key, "ota-2", "0.2.0", manifest)
    r = httpx.post(
        daemon.runtime["api"] + "/api/devices/ota-2/ota",
        json={"version": "0.2.0", "files": files, "signature": signature},
        headers={"Authorization": f"Bearer {read_token(daemon.state)}"},
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
    assert cli.returncode == 1 and "no device 'nobody' (known: ota-2)" in cli.stderr
    cli = daemon.cli("devices", "ota", "ota-2", "--dir", str(new), "--version", "9", timeout=60)
    assert cli.returncode == 1 and "--version 9, but" in cli.stderr


def staged_nothing(dev: Esp32) -> bool:
    return not (dev.folder / "ota.json").exists() and not (dev.folder / "app_a").exists()


def test_forged_updates_never_reach_the_device(make_daemon, esp32, tmp_path) -> None:
    daemon = make_daemon()
    dev = esp32(daemon_config(daemon, "ota-3", ["sensor"]))
    wait_fw(daemon, dev, "ota-3", "0.1.0")
    evil = app_folder(tmp_path / "evil", "6.6.6")
    (evil / "fayd_fw" / "payload.py").write_text("open('pwned', 'w').write('x')\n")
    files = [
        {
            "path": p.relative_to(evil).as_posix(),
            "data": base64.b64encode(p.read_bytes()).decode(),
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
        }
        for p in sorted(evil.rglob("*"))
        if p.is_file()
    ]
    url = daemon.runtime["api"] + "/api/devices/ota-3/ota"
    body = {"version": "6.6.6", "files": files}
    manifest = [(f["path"], len(base64.b64decode(f["data"])), f["sha256"]) for f in files]
    token = {"Authorization": f"Bearer {read_token(daemon.state)}"}
    # The probe of the issue: what any page open in a browser on the box can send.
    page = httpx.post(
        url,
        content=json.dumps(body).encode(),
        headers={
            "Content-Type": "text/plain",
            "Origin": "http://evil.example",
            "Host": "evil.example",
        },
        timeout=30,
    )
    assert page.status_code == 403, page.text
    # With the token (stolen), unsigned, or signed with a key that is not the device's.
    for signature, why in (
        (None, "updates are signed by fayd devices ota"),
        ("0" * 64, "signature is wrong"),
        (ota_signature("ab" * 32, "ota-3", "6.6.6", manifest), "signature is wrong"),
        (ota_signature(daemon.add_device("ota-x")["key"], "ota-3", "6.6.6", manifest), "wrong"),
    ):
        signed = {**body, **({"signature": signature} if signature else {})}
        sent = httpx.post(url, json=signed, headers=token, timeout=30)
        assert sent.status_code == 403 and why in sent.json()["error"], sent.text
    assert dev.proc is not None and dev.proc.poll() is None  # never reset
    assert staged_nothing(dev) and not (dev.folder / "pwned").exists()
    assert not dev.records("ota") and status_device(daemon, "ota-3")["fw"] == "0.1.0"


async def test_the_firmware_refuses_a_badly_signed_update_from_any_sender(
    broker, esp32, tmp_path
) -> None:
    """The device checks for itself: here a sender that owns the broker (no fayd in the
    way) pushes an update signed with the wrong key; the device refuses it, keeps running
    the old version and stages nothing. The right signature goes through."""
    key = "5e" * 32
    dev = esp32(mqtt_config(broker.url, "ota-4", ["sensor"], key=key))
    dev.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    link = MqttLink(Topics(), lambda d, k, p: _observe(ota, d, k, p))
    ota = OtaManager(link)
    running = asyncio.create_task(link.run(_url(broker.url)))
    try:
        await asyncio.wait_for(link.connected.wait(), 10)
        new = app_folder(tmp_path / "v2", "0.2.0")
        files = [
            OtaFile(p.relative_to(new).as_posix(), p.read_bytes())
            for p in sorted(new.rglob("*"))
            if p.is_file()
        ]
        manifest = [(f.path, len(f.data), f.sha256) for f in files]
        for wrong in (ota_signature("00" * 32, "ota-4", "0.2.0", manifest), ""):
            with pytest.raises(DeviceRefused) as refused:
                await ota.push("ota-4", "0.2.0", files, wrong)
            assert refused.value.code == "ota-signature"
        assert dev.proc is not None and dev.proc.poll() is None and staged_nothing(dev)
        assert [r.get("why") for r in dev.records("ota")] == ["signature", "signature"]
        good = ota_signature(key, "ota-4", "0.2.0", manifest)
        pushing = asyncio.create_task(ota.push("ota-4", "0.2.0", files, good))
        assert await asyncio.to_thread(dev.wait_exit) == 3  # staged, switched, reset
        assert dev.pointer()["state"] == "trial"
        pushing.cancel()
        await asyncio.gather(pushing, return_exceptions=True)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def _url(url: str):
    async def source() -> str:
        return url

    return source


async def _observe(ota: OtaManager, device: str, kind: str, payload: bytes) -> None:
    if kind in ("ack", "error", "hello"):  # what the hub would tell it
        ota.device_answered(device, decode(kind, payload), payload)


RESUME = r"""
import binascii, hashlib, sys
sys.path.insert(0, "%(fw)s")
from fayd_fw import FwError, hw
from fayd_fw.auth import hmac_sha256, ota_message
from fayd_fw.ota import Ota
hw.setup({"host": {"dir": "%(dir)s"}})
KEY = "ab" * 32
data = b"x = 1\n" * 1000
sha = binascii.hexlify(hashlib.sha256(data).digest()).decode()
sig = hmac_sha256(KEY.encode(), ota_message("dev-1", "9", [("big.py", len(data), sha)]))
begin = {"version": "9", "files": [{"path": "big.py", "size": len(data), "sha256": sha}],
         "sig": sig}
def chunk(o, off, n):
    return o.handle("ota_chunk", {"path": "big.py", "offset": off,
                                  "data": binascii.b2a_base64(data[off:off + n]).decode()})
for key, signature in (("", sig), (KEY, sig[:-1] + "0"), (KEY, None)):
    try:
        Ota("%(dir)s", "1", 300, "dev-1", key).handle("ota_begin", dict(begin, sig=signature))
    except FwError as e:
        print(e.code, e)
o = Ota("%(dir)s", "1", 300, "dev-1", KEY)
print(o.handle("ota_begin", begin)["have"])
print(chunk(o, 0, 2048)["have"], chunk(o, 0, 2048)["have"])  # a retried chunk
for bad in (4096, -1):
    try:
        chunk(o, bad, 10)
    except FwError as e:
        print(e.code)
o = Ota("%(dir)s", "1", 300, "dev-1", KEY)  # a reboot: the transfer is gone from memory
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
    assert run.stdout.split("\n")[:9] == [
        # No key, a wrong signature, none: refused before anything is staged.
        "ota-signature ota_begin: this device has no key: updates are refused",
        "ota-signature ota_begin: the update is not signed with this device's key",
        "ota-signature ota_begin: the update is not signed with this device's key",
        "{'big.py': 0}",
        "2048 2048",
        "ota-offset",
        "malformed",
        "ota-state",
        "2048",
    ]
    assert "'reboot': True" in run.stdout
    assert json.loads((tmp_path / "ota.json").read_text())["state"] == "trial"
