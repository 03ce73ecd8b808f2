"""``fayd devices add NAME --port /dev/ttyUSB0``: provision a board in one command. The
firmware and the board's own config.json (fayd.devices.provision makes it) are copied with
mpremote, then the command waits for the board's hello through the running daemon.

The daemon may hold the board's port (it watches /dev/ttyUSB*, /dev/ttyACM* and locks what
it opens), so it is asked to let go of the port while mpremote runs and takes it back after
(``POST /api/serial/release``, fayd.transport.hotplug). ``--copy-to DIR`` writes the same
files into a folder instead, for boards flashed another way."""

from __future__ import annotations

import argparse
import getpass
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fayd.cli.client import NotRunning, call, runtime
from fayd.config import Config
from fayd.devices.provision import (
    CA_FILE,
    CONFIG,
    Broker,
    board_config,
    board_files,
    broker_for_board,
    check_transport,
    firmware_dir,
    firmware_version,
    mpremote_args,
    parse_broker,
    read_template,
)
from fayd.errors import FaydError
from fayd.logwords import hide_secrets
from fayd.transport.mqtt import parse_mqtt_url

DEFAULT_WAIT_S = 90.0
#: The firmware is ~100 KB: about 10 s of bytes at mpremote's 115200 baud, plus the raw
#: REPL's round trips. The bound is for a board that stops answering half-way.
MPREMOTE_TIMEOUT_S = 300.0
POLL_S = 0.5


def add_provision_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "provisioning a board",
        "with --port (or --copy-to): copy the firmware and the board's config.json (its id, "
        "key, Wi-Fi, broker) onto it with mpremote, then wait for its hello",
    )
    g.add_argument("--port", help="the board's serial port, e.g. /dev/ttyUSB0 or /dev/ttyACM0")
    g.add_argument(
        "--copy-to",
        type=Path,
        metavar="DIR",
        help="write the board's files into DIR instead of onto a board (to flash another way)",
    )
    g.add_argument("--wifi-ssid", metavar="NAME", help="the Wi-Fi network (asked when not given)")
    g.add_argument(
        "--wifi-password",
        metavar="PASSWORD",
        help='its password (asked, unechoed, when not given; "" for an open network)',
    )
    g.add_argument(
        "--broker",
        metavar="HOST:PORT",
        help="where the board finds fayd's broker (default: this box's LAN address and "
        "the embedded broker's port)",
    )
    g.add_argument(
        "--transport",
        default="mqtt",
        help="mqtt (Wi-Fi; the default) or serial (a serial cable to this box)",
    )
    g.add_argument(
        "--firmware-dir",
        type=Path,
        metavar="DIR",
        help="the firmware to copy (default: the one installed with fayd, or the checkout's)",
    )
    g.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help=f"how long to wait for the board's hello (default {DEFAULT_WAIT_S:g})",
    )
    g.add_argument("--no-wait", action="store_true", help="do not wait for the board's hello")


def provision(cfg: Config, args: argparse.Namespace, device: str, key: str) -> int:
    """Copy the firmware and the board's config onto ``args.port`` (or into
    ``args.copy_to``), then wait for the board's hello. Everything is checked first."""
    transport, port = _check_args(args)
    folder = firmware_dir(args.firmware_dir)
    files, template = board_files(folder), read_template(folder)
    wifi, broker, extras = _link(cfg, args, transport)
    config = board_config(
        template, cfg, device=device, key=key, transport=transport, wifi=wifi, broker=broker
    )
    version = firmware_version(folder)
    over = f"Wi-Fi {wifi[0]!r}, broker {broker}" if wifi and broker else "a serial cable"
    print(f"{device}: firmware {version} from {folder} ({len(files)} files), over {over}")
    since = time.time()
    if port is None:
        _write_board(folder, files, config, extras, args.copy_to)
        print(
            f"{device}: written to {args.copy_to}; copy its files onto the board "
            f"({CONFIG} holds its key{' and Wi-Fi password' if wifi else ''}: keep it private)"
        )
    else:
        with tempfile.TemporaryDirectory(prefix="fayd-board-") as stage:
            _write_board(folder, files, config, extras, Path(stage))
            _flash(cfg, port, Path(stage), [*files, *extras, CONFIG])
    if args.no_wait:
        print(f"{device}: not waiting for its hello; see it in: fayd devices list")
        return 0
    return _wait_for_hello(cfg, device, since, args, config, version)


# --- checks and questions ---------------------------------------------------------------------


def check_provision(args: argparse.Namespace) -> None:
    """The command line's own mistakes (a port that is not there, --port with --copy-to),
    before ``devices add`` makes a key: a typo must not leave a half-added device."""
    _check_args(args)


def _check_args(args: argparse.Namespace) -> tuple[str, str | None]:
    """The transport, and the board's port (None: --copy-to)."""
    transport = check_transport(args.transport)
    if args.port and args.copy_to:
        raise FaydError("give --port or --copy-to, not both")
    if getattr(args, "json", False):
        raise FaydError("--json prints the key only: leave it out with --port or --copy-to")
    if not args.no_wait and args.wait <= 0:
        raise FaydError(f"--wait {args.wait:g}: give a number of seconds above 0 (or --no-wait)")
    if not args.port:
        return transport, None
    port = os.path.abspath(args.port)
    _check_port(port)
    return transport, port


def _link(
    cfg: Config, args: argparse.Namespace, transport: str
) -> tuple[tuple[str, str] | None, Broker | None, dict[str, bytes]]:
    """Wi-Fi, broker and extra files (the household CA for TLS) of a board on MQTT; asks a
    person at a terminal for what is missing. The daemon is looked for last, when waiting."""
    wifi = _wifi(args) if transport == "mqtt" else None
    given = parse_broker(args.broker) if args.broker and transport == "mqtt" else None
    running = None if args.no_wait else _running(cfg)
    if transport != "mqtt":
        return wifi, None, {}
    broker = _broker(cfg, given, running)
    if cfg.mqtt.url != "embedded":
        print(
            f"note: fayd uses the broker {hide_secrets(cfg.mqtt.url)}: give it the board's "
            "account yourself (docs/security.md)",
            file=sys.stderr,
        )
    return wifi, broker, {CA_FILE: _household_ca(cfg)} if broker.tls else {}


def _check_port(port: str) -> None:
    if not os.path.exists(port):
        raise FaydError(
            f"{port}: no such port (is the board plugged in? ls /dev/ttyUSB* /dev/ttyACM*)"
        )
    if importlib.util.find_spec("mpremote") is None:
        raise FaydError("mpremote is not installed: pip install mpremote (fayd depends on it)")


def _running(cfg: Config) -> dict[str, Any]:
    """The running daemon's runtime file (its broker's address); it must answer."""
    try:
        call(cfg, "GET", "/api/status")
        return runtime(cfg)
    except NotRunning as exc:
        raise NotRunning(f"{exc} (it hears the board's hello), or give --no-wait") from exc


def _wifi(args: argparse.Namespace) -> tuple[str, str]:
    ssid, password = args.wifi_ssid, args.wifi_password
    asking = sys.stdin.isatty()
    if ssid is None:
        if not asking:
            raise FaydError("a board on Wi-Fi needs --wifi-ssid NAME and --wifi-password PASSWORD")
        ssid = input("Wi-Fi network (SSID) the board joins: ").strip()
    if not ssid or len(ssid.encode()) > 32:
        raise FaydError(f"Wi-Fi network name {ssid!r}: 1-32 bytes")
    if password is None:
        if not asking:
            raise FaydError(f'give --wifi-password for {ssid!r} ("" for an open network)')
        password = getpass.getpass(f"Wi-Fi password for {ssid!r} (empty: an open network): ")
    if password and not 8 <= len(password) <= 63:
        raise FaydError("a Wi-Fi (WPA2) password has 8-63 characters")
    return ssid, password


def _broker(cfg: Config, given: tuple[str, int] | None, running: dict[str, Any] | None) -> Broker:
    if given is not None:
        host, port = given
        m = cfg.mqtt
        return Broker(
            host, port, tls=m.url == "embedded" and bool(m.tls_port) and port == m.tls_port
        )
    embedded_port = None
    if running and cfg.mqtt.url == "embedded":  # the port the broker took (0 = any free one)
        embedded_port = parse_mqtt_url(running["mqtt"])[1]
    broker, warnings = broker_for_board(cfg, lan_address(), embedded_port)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return broker


def lan_address() -> str | None:
    """This box's address on the LAN: the source address of a route to the outside (a UDP
    connect sends nothing), else a non-loopback address of the host name."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1: only the route is looked up
            address = str(sock.getsockname()[0])
            if not address.startswith("127."):
                return address
        except OSError:  # no route at all: an offline box
            pass
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return None
    return next((str(i[4][0]) for i in infos if not str(i[4][0]).startswith("127.")), None)


def _household_ca(cfg: Config) -> bytes:
    path = cfg.state_dir / "mosquitto" / "tls" / CA_FILE
    try:
        return path.read_bytes()
    except OSError as exc:
        raise FaydError(
            f"{path} is missing: start fayd once with mqtt.tls_port set (it makes it)"
        ) from exc


# --- the copy ---------------------------------------------------------------------------------


def _write_board(
    folder: Path, files: list[str], config: dict[str, Any], extras: dict[str, bytes], dest: Path
) -> None:
    """The board's files in ``dest``, laid out as on its flash."""
    if dest.resolve() == folder.resolve():
        raise FaydError(
            f"--copy-to {dest} is the firmware folder itself: its {CONFIG} is the template"
        )
    dest.mkdir(parents=True, exist_ok=True)
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / name, dest / name)
    for name, data in extras.items():
        (dest / name).write_bytes(data)
    # The key and the Wi-Fi password: readable by this user only.
    fd = os.open(dest / CONFIG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def _flash(cfg: Config, port: str, stage: Path, names: list[str]) -> None:
    """mpremote copies ``names`` from ``stage`` onto the board and resets it; fayd lets go
    of the port meanwhile (a lease: it takes it back by itself if this process dies)."""
    held = _release(cfg, port, MPREMOTE_TIMEOUT_S + 60)
    command = [sys.executable, "-m", "mpremote", *mpremote_args(port, names)]
    try:
        done = subprocess.run(
            command, cwd=stage, capture_output=True, text=True, timeout=MPREMOTE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        raise FaydError(
            f"mpremote did not finish within {MPREMOTE_TIMEOUT_S:g} s on {port}: is MicroPython "
            "on the board (the one-time esptool step, docs/hardware.md)?"
        ) from exc
    finally:
        if held:
            _give_back(cfg, port)
    if done.returncode != 0:
        why = _mpremote_error(done)
        hint = ""
        if "raw repl" in why.lower():
            hint = " (is MicroPython on the board? the one-time esptool step: docs/hardware.md)"
        raise FaydError(f"mpremote could not copy onto {port}: {why}{hint}")
    same = sum(ln.startswith("Up to date") for ln in done.stdout.splitlines())
    unchanged = f", {same} already there" if same else ""
    print(f"copied onto {port} ({len(names) - same} files{unchanged}) and reset the board")


def _mpremote_error(done: subprocess.CompletedProcess[str]) -> str:
    """mpremote's reason in a few words: its own "mpremote: …" line, or the last line of
    the traceback it prints for a board that does not answer."""
    for text in (done.stderr, done.stdout):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            last = lines[-1].removeprefix("mpremote: ")
            return re.sub(r"^[\w.]+(Error|Exception): ", "", last)
    return f"exit status {done.returncode}"


def _release(cfg: Config, port: str, seconds: float) -> bool:
    """Ask a running daemon to let go of ``port``; True if it did (and must take it back)."""
    try:
        done = call(cfg, "POST", "/api/serial/release", json={"port": port, "seconds": seconds})
    except NotRunning:
        return False  # nobody holds it
    if done.get("released"):
        print(f"fayd let go of {port} while mpremote copies")
    return bool(done.get("released"))


def _give_back(cfg: Config, port: str) -> None:
    try:
        call(cfg, "POST", "/api/serial/release", json={"port": port, "seconds": 0})
    except FaydError as exc:
        print(f"warning: fayd takes {port} back by itself later ({exc})", file=sys.stderr)


# --- the hello --------------------------------------------------------------------------------


def _wait_for_hello(
    cfg: Config,
    device: str,
    since: float,
    args: argparse.Namespace,
    config: dict[str, Any],
    version: str,
) -> int:
    print(f"{device}: waiting up to {args.wait:g} s for its hello …", flush=True)
    deadline = time.monotonic() + args.wait
    while True:
        row = _seen(cfg, device, since)
        if row is not None:
            roles = ",".join(row.get("roles") or []) or "none"
            print(f"{device}: said hello (firmware {row.get('fw')}, roles {roles})")
            if row.get("fw") != version:
                print(
                    f"warning: it runs {row.get('fw')}, not the copied {version}", file=sys.stderr
                )
            print(f"Whose it is, and its settings: fayd devices set {device} user=NAME …")
            return 0
        if time.monotonic() >= deadline:
            break
        time.sleep(POLL_S)
    print(f"fayd: {device} did not say hello within {args.wait:g} s. Check:", file=sys.stderr)
    for line in _checklist(cfg, args, config):
        print(f"  - {line}", file=sys.stderr)
    return 1


def _seen(cfg: Config, device: str, since: float) -> dict[str, Any] | None:
    """The device's row once it said hello after ``since``. A hello stores the device as
    online with last_seen = now (so does a heartbeat: with --port the old firmware was
    stopped by mpremote before ``since``, so only the new one can be heard)."""
    for row in call(cfg, "GET", "/api/status")["devices"]:
        if row["id"] == device and row["online"] and (row.get("last_seen") or 0) >= since:
            return row
    return None


def _checklist(cfg: Config, args: argparse.Namespace, config: dict[str, Any]) -> list[str]:
    log = "fayd status (recent problems) and fayd's log"
    board_log = (
        f"what the board prints: mpremote connect {args.port} repl, then Ctrl-D restarts it "
        "(stop fayd first if serial.patterns covers that port)"
        if args.port
        else "what the board prints on its USB console (mpremote connect PORT repl)"
    )
    if config["transport"] == "serial":
        patterns = ", ".join(cfg.serial.patterns)
        link = json.dumps(config.get("serial"), separators=(",", ":"))
        return [
            f"the board's serial link ({link}) is wired to this box "
            f"on a port serial.patterns covers ({patterns}); fayd status lists the open ports",
            f"the baud rates agree: serial.baudrate is {cfg.serial.baudrate}",
            log,
            board_log,
        ]
    m = config["mqtt"]
    listen = (
        f"mqtt.embedded_host is {cfg.mqtt.embedded_host}: it must be 0.0.0.0 or this box's "
        "LAN address"
        if cfg.mqtt.url == "embedded"
        else f"fayd's broker ({hide_secrets(cfg.mqtt.url)}) listens on the LAN and knows the"
        " board's account"
    )
    return [
        f"the board joins Wi-Fi {config['wifi']['ssid']!r}: a 2.4 GHz network (an ESP32 "
        "does not see 5 GHz ones) and the right password",
        f"the board reaches fayd's broker at {m['host']}:{m['port']}: {listen}; no firewall "
        f"blocks port {m['port']}",
        log,
        board_log,
    ]
