"""Provisioning a board in one command (``fayd devices add NAME --port …``): the config a
board gets, the files it gets, the copy into a folder, and the whole path end to end: a
MicroPython unix-port "board" on a socat PTY, which the real daemon watches and lets go of
while mpremote copies the firmware onto it through the raw REPL, then the copied firmware
booted from the board's folder says hello to that daemon."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from fayd.config import Config, load_config
from fayd.devices.provision import (
    Broker,
    board_config,
    board_files,
    broker_for_board,
    firmware_dir,
    mpremote_args,
    parse_broker,
    read_template,
)
from fayd.errors import FaydError
from fayd.testing.firmware import FIRMWARE, FIRMWARE_LIB, micropython
from fayd.testing.harness import DaemonProcess
from fayd.transport.hotplug import SerialWatcher

from .conftest import MOSQUITTO, SOCAT, PtyPair
from .test_serial_link import Inbox, keys, running, until

ROOT = Path(__file__).parents[1]
KEY = "ab" * 32


def defaults(**mqtt: object) -> Config:
    cfg = load_config(environ={})
    return dataclasses.replace(cfg, mqtt=dataclasses.replace(cfg.mqtt, **mqtt))


# --- what a board gets ----------------------------------------------------------------------


def test_the_board_config_is_the_template_with_this_devices_values() -> None:
    template = read_template(FIRMWARE)
    cfg = defaults(prefix="home/fayd")
    broker = Broker("192.168.1.20", 1884)
    got = board_config(
        template,
        cfg,
        device="kitchen-1",
        key=KEY,
        transport="mqtt",
        wifi=("home-net", "correct horse"),
        broker=broker,
    )
    assert got["device"] == "kitchen-1" and got["key"] == KEY and got["transport"] == "mqtt"
    assert got["wifi"] == {"ssid": "home-net", "password": "correct horse"}
    # Logs in as its id with the password derived from the key: no user/password of its own.
    assert got["mqtt"]["user"] == "" and got["mqtt"]["password"] == ""
    assert (got["mqtt"]["host"], got["mqtt"]["port"], got["mqtt"]["tls"]) == (
        "192.168.1.20",
        1884,
        False,
    )
    assert got["mqtt"]["prefix"] == "home/fayd"  # fayd's topics, not the template's
    assert got["serial"]["baud"] == cfg.serial.baudrate
    assert "user" not in got  # the template's example user is not this board's
    # Everything else (pins, roles, servos …) is the template's, as it is today.
    changed = {"device", "key", "transport", "wifi", "mqtt", "serial", "user"}
    assert {k: v for k, v in got.items() if k not in changed} == {
        k: v for k, v in template.items() if k not in changed
    }
    assert {k: v for k, v in got["mqtt"].items() if k not in ("host", "port", "tls", "prefix")} | {
        "user": "",
        "password": "",
    } == {k: v for k, v in template["mqtt"].items() if k not in ("host", "port", "tls", "prefix")}
    assert read_template(FIRMWARE) == template  # the template itself is untouched


def test_a_serial_board_needs_no_wifi_and_an_mqtt_board_does() -> None:
    template = read_template(FIRMWARE)
    cfg = defaults()
    got = board_config(
        template, cfg, device="desk-1", key=KEY, transport="serial", wifi=None, broker=None
    )
    assert got["transport"] == "serial" and got["wifi"] == {"ssid": "", "password": ""}
    with pytest.raises(FaydError, match="Wi-Fi"):
        board_config(template, cfg, device="d", key=KEY, transport="mqtt", wifi=None, broker=None)
    with pytest.raises(FaydError, match="--transport 'zigbee'"):
        board_config(template, cfg, device="d", key=KEY, transport="zigbee", wifi=None, broker=None)


def test_the_broker_a_board_is_told() -> None:
    lan = "192.168.1.20"
    # Loopback only: the LAN address, and a warning that says what to change.
    broker, warnings = broker_for_board(defaults(), lan, embedded_port=41883)
    assert broker == Broker(lan, 41883) and "mqtt.embedded_host" in warnings[0]
    broker, warnings = broker_for_board(defaults(embedded_host="0.0.0.0"), lan)
    assert broker == Broker(lan, 1884) and warnings == []
    broker, _ = broker_for_board(defaults(embedded_host="10.0.0.7"), lan)
    assert broker == Broker("10.0.0.7", 1884)
    broker, warnings = broker_for_board(defaults(url="mqtt://nas.lan:1883"), lan)
    assert broker == Broker("nas.lan", 1883) and warnings == []
    broker, warnings = broker_for_board(defaults(url="mqtt://127.0.0.1:1883"), lan)
    assert broker == Broker(lan, 1883) and "listen on the LAN" in warnings[0]
    tls = defaults(embedded_host="0.0.0.0", tls_port=8883, tls_names=("fayd.home", lan))
    assert broker_for_board(tls, lan) == (Broker(lan, 8883, tls=True), [])
    tls = defaults(embedded_host="0.0.0.0", tls_port=8883, tls_names=("localhost", "fayd.home"))
    assert broker_for_board(tls, lan) == (Broker("fayd.home", 8883, tls=True), [])
    with pytest.raises(FaydError, match="--broker"):
        broker_for_board(defaults(), None)
    assert parse_broker("192.168.1.5:1884") == ("192.168.1.5", 1884)
    assert parse_broker("[fd00::5]:8883") == ("fd00::5", 8883)
    for bad in ("nas.lan", ":1884", "nas:0", "nas:http"):
        with pytest.raises(FaydError, match="HOST:PORT"):
            parse_broker(bad)


def test_the_files_a_board_gets(tmp_path: Path) -> None:
    files = board_files(FIRMWARE)
    assert {"boot.py", "main.py", "version.py", "fayd_fw/__init__.py", "fayd_fw/app.py"} <= set(
        files
    )
    assert not [f for f in files if f.startswith(("tools/", ".host/", "fayd_fw/__pycache__"))]
    assert "config.json" not in files and "README.md" not in files
    assert files == sorted(files)
    # Caches and hidden files are never copied.
    scratch = tmp_path / "fw"
    shutil.copytree(FIRMWARE, scratch, ignore=shutil.ignore_patterns(".host"))
    (scratch / "fayd_fw" / "__pycache__").mkdir(exist_ok=True)
    (scratch / "fayd_fw" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"x")
    (scratch / "fayd_fw" / ".app.py.swp").write_bytes(b"x")
    assert board_files(scratch) == files
    with pytest.raises(FaydError, match=r"no boot\.py and main\.py"):
        board_files(tmp_path)
    with pytest.raises(FaydError, match="--firmware-dir"):
        firmware_dir(tmp_path)
    assert firmware_dir() == FIRMWARE  # the checkout's, when no wheel copy is beside it


def test_the_wheel_carries_what_a_board_gets() -> None:
    """An installed fayd (install.sh --system: a wheel) has no checkout to copy from."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    packaged = {k: v for k, v in shipped.items() if k.startswith("firmware/")}
    assert all(v == "fayd/devices/" + k for k, v in packaged.items())
    tops = {f.split("/")[0] for f in board_files(FIRMWARE)} | {"config.json"}
    assert {k.removeprefix("firmware/") for k in packaged} == tops


def test_the_mpremote_command_line() -> None:
    files = ["boot.py", "fayd_fw/__init__.py", "fayd_fw/app.py", "main.py", "config.json"]
    args = mpremote_args("/dev/ttyUSB0", files)
    assert args[:4] == ["connect", "/dev/ttyUSB0", "resume", "exec"]
    prepare = args[4]
    compile(prepare, "prepare", "exec")  # valid Python (MicroPython runs it)
    assert "'fayd_fw'" in prepare and "ota.json" in prepare
    copies = [args[i + 3 : i + 5] for i, a in enumerate(args) if a == "+" and args[i + 1] == "fs"]
    assert copies == [[f, f":{f}"] for f in files]
    assert args[-2:] == ["+", "reset"]


# --- the command, without a daemon ----------------------------------------------------------


def fayd(state: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "fayd", *args],
        env=env,
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_copy_to_a_folder(tmp_path: Path) -> None:
    state, board = tmp_path / "state", tmp_path / "board"
    done = fayd(
        state,
        "devices",
        "add",
        "porch-1",
        "--copy-to",
        str(board),
        "--wifi-ssid",
        "home-net",
        "--wifi-password",
        "correct horse",
        "--broker",
        "192.168.1.5:1884",
        "--no-wait",
    )
    assert done.returncode == 0, done.stderr
    assert "written to" in done.stdout
    files = board_files(FIRMWARE)
    copied = sorted(p.relative_to(board).as_posix() for p in board.rglob("*") if p.is_file())
    assert copied == sorted([*files, "config.json"])
    for name in files:
        assert (board / name).read_bytes() == (FIRMWARE / name).read_bytes()
    config = json.loads((board / "config.json").read_text())
    assert stat.S_IMODE((board / "config.json").stat().st_mode) == 0o600  # key, Wi-Fi password
    key = json.loads(fayd(state, "devices", "add", "porch-1", "--json").stdout)["key"]
    assert (config["device"], config["key"]) == ("porch-1", key)  # the registry's key
    assert (config["mqtt"]["host"], config["mqtt"]["port"]) == ("192.168.1.5", 1884)
    assert config["wifi"] == {"ssid": "home-net", "password": "correct horse"}


#: Mistakes of the command line itself, found before anything is made.
LINE_MISTAKES = (
    "--transport 'zigbee': use one of",
    "/dev/ttyNOPE7: no such port",
    "give --port or --copy-to, not both",
    "--wait 0",
    "--json",
)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--copy-to", "B", "--transport", "zigbee"], "--transport 'zigbee': use one of"),
        (["--port", "/dev/ttyNOPE7", "--no-wait"], "/dev/ttyNOPE7: no such port"),
        (["--port", "/dev/null", "--copy-to", "B"], "give --port or --copy-to, not both"),
        (["--copy-to", "B", "--no-wait"], "needs --wifi-ssid NAME and --wifi-password"),
        (["--copy-to", "B", "--wifi-ssid", "x", "--wifi-password", "short"], "8-63 characters"),
        (["--copy-to", "B", "--wifi-ssid", "x", "--wifi-password", "", "--broker", "x"], "HOST"),
        (["--copy-to", "B", "--transport", "serial", "--wait", "0"], "--wait 0"),
        (["--copy-to", "B", "--transport", "serial", "--json"], "--json"),
        (["--copy-to", "B", "--transport", "serial"], "fayd is not running"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    args = [str(tmp_path / "board") if a == "B" else a for a in args]
    done = fayd(tmp_path / "state", "devices", "add", "porch-1", *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (tmp_path / "board" / "config.json").exists()
    if message in LINE_MISTAKES:  # refused before a key was made: no half-added device
        listed = fayd(tmp_path / "state", "devices", "list")
        assert "porch-1" not in listed.stdout, listed.stdout


# --- the hot-plug watcher lets go of a port --------------------------------------------------


async def test_a_released_port_is_closed_then_taken_back(tmp_path: Path) -> None:
    if SOCAT is None:
        pytest.skip("socat not installed (./install.sh installs it)")
    import serial

    watcher = SerialWatcher(Inbox(), keys, patterns=[str(tmp_path / "ttyFAYD*")], interval=0.05)
    pair = PtyPair(tmp_path).start()
    try:
        async with running(watcher):
            await until(lambda: str(pair.a) in watcher.links)
            await asyncio.wait_for(watcher.links[str(pair.a)][0].connected.wait(), 5)
            done = await watcher.release(str(pair.a), 600)
            assert done["released"] and str(pair.a) not in watcher.links
            with serial.Serial(str(pair.a), exclusive=True):  # free for another program
                pass
            await asyncio.sleep(0.2)  # several polls: the watcher leaves it alone
            assert str(pair.a) not in watcher.links
            assert "released for" in watcher.status()[0]["last_error"]
            assert (await watcher.release(str(pair.a), 0))["given_back"]
            await until(lambda: str(pair.a) in watcher.links)
            await asyncio.wait_for(watcher.links[str(pair.a)][0].connected.wait(), 5)
            # A lease ends by itself (the provisioning command died): watched again.
            await watcher.release(str(pair.a), 0.3)
            await until(lambda: str(pair.a) in watcher.links)
            assert not watcher.released
            # A port fayd does not watch is not fayd's to give.
            other = await watcher.release("/dev/null", 60)
            assert other == {"port": "/dev/null", "released": False, "watched": False}
    finally:
        pair.stop()


# --- end to end: a unix-port board on a socat PTY, the real daemon, mpremote ------------------


class UnixBoard:
    """MicroPython's unix port at its REPL behind a socat PTY: a freshly flashed board on a
    USB cable. Its filesystem is ``folder`` (the process's working folder)."""

    def __init__(self, folder: Path, tty: Path) -> None:
        self.folder, self.tty = folder, tty
        self.log = folder.parent / f"socat-{tty.name}.log"
        folder.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen[bytes] | None = None

    def plug_in(self, within_s: float = 10.0) -> UnixBoard:
        assert SOCAT
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [
                    SOCAT,
                    "-d",
                    "-d",
                    f"pty,raw,echo=0,link={self.tty}",
                    f"exec:{micropython()},pty,raw,echo=0",
                ],
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        deadline = time.monotonic() + within_s
        while b"starting data transfer loop" not in self.log.read_bytes():
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.01)
        return self

    def unplug(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


def serial_ports(daemon: DaemonProcess) -> dict[str, dict]:
    status = json.loads(daemon.cli("status", "--json").stdout)
    return {p["port"]: p for p in status["serial"] or []}


def wait_until(check, within_s: float, what: str, daemon: DaemonProcess) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"no {what} after {within_s} s:\n{daemon.log_text()}"
        time.sleep(0.1)


needs_board = pytest.mark.skipif(
    SOCAT is None
    or micropython() is None
    or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists()
    or MOSQUITTO is None,
    reason="needs socat, mosquitto and the MicroPython unix port with umqtt "
    "(./install.sh; sh firmware/tools/host_setup.sh)",
)


@needs_board
def test_provision_a_board_on_a_pty_end_to_end(make_daemon, tmp_path: Path) -> None:
    tty = tmp_path / "ttyBOARD0"
    daemon: DaemonProcess = make_daemon(
        {"FAYD_SERIAL_PATTERNS": str(tmp_path / "ttyBOARD*"), "FAYD_SERIAL_POLL_S": "0.5"}
    )
    # The route: bad bodies are refused, a port fayd does not watch is left alone.
    assert daemon.api("POST", "/api/serial/release", json={"port": "x", "seconds": 1}).is_error
    assert daemon.api("POST", "/api/serial/release", json={"port": "/x", "seconds": -1}).is_error
    done = daemon.api("POST", "/api/serial/release", json={"port": "/dev/null", "seconds": 5})
    assert done.json() == {"port": "/dev/null", "released": False, "watched": False}

    board = UnixBoard(tmp_path / "board", tty).plug_in()
    try:
        wait_until(
            lambda: serial_ports(daemon).get(str(tty), {}).get("open"), 30, "port open", daemon
        )
        # While fayd holds the port, mpremote cannot open it (fayd locks the ports it opens).
        held = subprocess.run(
            [sys.executable, "-m", "mpremote", "connect", str(tty), "resume", "exec", "1"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert held.returncode != 0 and "in use" in held.stdout + held.stderr

        broker_port = daemon.runtime["mqtt"].rsplit(":", 1)[1]
        command = [
            sys.executable,
            "-m",
            "fayd",
            "devices",
            "add",
            "board-1",
            "--port",
            str(tty),
            "--wifi-ssid",
            "test-net",
            "--wifi-password",
            "not a real one",
            "--broker",
            f"127.0.0.1:{broker_port}",
            "--wait",
            "120",
        ]
        proc = subprocess.Popen(
            command,
            env=daemon.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            out = []
            assert proc.stdout is not None
            for line in proc.stdout:
                out.append(line)
                if "waiting up to" in line:
                    break
            assert any("fayd let go of" in line for line in out), (out, proc.stderr)
            assert any("copied onto" in line for line in out), out
            # mpremote could open the port (so fayd had let go of it); fayd has it again.
            wait_until(
                lambda: serial_ports(daemon).get(str(tty), {}).get("open"),
                10,
                "port taken back",
                daemon,
            )
            # The board's flash: the firmware files and its own config.json.
            files = board_files(FIRMWARE)
            for name in files:
                assert (board.folder / name).read_bytes() == (FIRMWARE / name).read_bytes()
            config = json.loads((board.folder / "config.json").read_text())
            key = daemon.add_device("board-1")["key"]
            assert (config["device"], config["key"]) == ("board-1", key)
            assert config["mqtt"]["port"] == int(broker_port)

            # mpremote's reset: the unix port has no machine.reset, so the test power-cycles
            # the board: the REPL goes, and the copied firmware boots from its folder.
            board.unplug()
            boot = subprocess.Popen(
                [str(micropython()), str(FIRMWARE / "tools" / "host_boot.py")],
                cwd=board.folder,
                env={**os.environ, "MICROPYPATH": f"{board.folder}:{FIRMWARE_LIB}"},
                stdin=subprocess.DEVNULL,
                stdout=(board.folder / "boot.log").open("wb"),
                stderr=subprocess.STDOUT,
            )
            try:
                rest, errors = proc.communicate(timeout=150)
            finally:
                boot.terminate()
                boot.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        boot_log = (board.folder / "boot.log").read_text(errors="replace")
        assert proc.returncode == 0, (out, rest, errors, boot_log, daemon.log_text()[-3000:])
        assert "board-1: said hello (firmware 0.1.0" in rest, rest
        status = json.loads(daemon.cli("status", "--json").stdout)
        row = next(d for d in status["devices"] if d["id"] == "board-1")
        assert row["fw"] == "0.1.0"
    finally:
        board.unplug()

    # No hello at all: the command says so, with what to check, and fails.
    late = daemon.cli(
        "devices",
        "add",
        "ghost-1",
        "--copy-to",
        str(tmp_path / "ghost"),
        "--wifi-ssid",
        "test-net",
        "--wifi-password",
        "",
        "--broker",
        f"127.0.0.1:{broker_port}",
        "--wait",
        "1",
    )
    assert late.returncode == 1
    assert "ghost-1 did not say hello within 1 s" in late.stderr
    assert "Wi-Fi 'test-net'" in late.stderr and f"127.0.0.1:{broker_port}" in late.stderr

    # A port with no MicroPython behind it: one line from mpremote's failure, and fayd has
    # the port back.
    silent = PtyPair(tmp_path, a="ttyBOARD9", b="nobody").start()
    try:
        wait_until(
            lambda: serial_ports(daemon).get(str(silent.a), {}).get("open"), 30, "open", daemon
        )
        failed = daemon.cli(
            "devices",
            "add",
            "board-2",
            "--port",
            str(silent.a),
            "--transport",
            "serial",
            "--no-wait",
        )
        assert failed.returncode == 1
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1 and "mpremote could not copy onto" in lines[0], failed.stderr
        assert "esptool" in lines[0]
        wait_until(
            lambda: serial_ports(daemon).get(str(silent.a), {}).get("open"),
            10,
            "port taken back after a failure",
            daemon,
        )
    finally:
        silent.stop()


def test_wifi_is_asked_in_a_terminal_and_the_password_not_shown(tmp_path: Path) -> None:
    """Without --wifi-ssid/--wifi-password a person at a terminal is asked; getpass reads
    the password from the controlling terminal without echoing it."""
    import fcntl
    import pty
    import select
    import termios

    board = tmp_path / "board"
    leader, follower = pty.openpty()

    def own_terminal() -> None:  # the pty becomes the command's controlling terminal
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(tmp_path / "state")}
    command = ["devices", "add", "hall-1", "--copy-to", str(board), "--no-wait"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fayd", *command],
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        preexec_fn=own_terminal,
    )
    os.close(follower)
    seen = b""

    def read_until(text: bytes, within_s: float = 60.0) -> None:
        nonlocal seen
        deadline = time.monotonic() + within_s
        while text not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen
            if select.select([leader], [], [], 0.2)[0]:
                seen += os.read(leader, 4096)

    try:
        read_until(b"SSID")
        os.write(leader, b"home-net\n")
        read_until(b"password")
        os.write(leader, b"correct horse\n")
        read_until(b"not waiting")
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(leader)
    assert b"correct horse" not in seen  # not echoed
    config = json.loads((board / "config.json").read_text())
    assert config["wifi"] == {"ssid": "home-net", "password": "correct horse"}
