"""What a board gets when it is provisioned (``fayd devices add NAME --port …``), as plain
data: its ``config.json`` (the firmware's own ``config.json`` as the template, with this
device's id, key, transport, Wi-Fi and broker), the firmware files copied beside it, and the
mpremote command line that copies them. Nothing here talks to a board or to the daemon:
that is ``fayd.cli.provision``.

The template is read when a board is provisioned, never copied into this module: its pins
and defaults are the firmware's business and change with it."""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from fayd.config import Config
from fayd.errors import FaydError
from fayd.protocol import check_device_id
from fayd.transport.broker_tls import default_names
from fayd.transport.mqtt import parse_mqtt_url

TRANSPORTS = ("mqtt", "serial")
CONFIG = "config.json"
#: The household CA a board checks fayd's TLS listener with (its config's ``mqtt.ca``).
CA_FILE = "ca.crt"
#: The firmware's package; its other files on a board are the top-level modules.
PACKAGE = "fayd_fw"
#: Files of an OTA-updated board that would run instead of the copied firmware: a new
#: flash starts from the app as copied (fayd_fw/ota.py, boot.py).
OTA_STATE = "ota.json"


@dataclass(frozen=True)
class Broker:
    """Where a board finds fayd's MQTT broker."""

    host: str
    port: int
    tls: bool = False

    def __str__(self) -> str:
        return f"{self.host}:{self.port}{' (TLS)' if self.tls else ''}"


def firmware_dir(given: Path | None = None) -> Path:
    """The firmware folder: ``given``, else the copy an installed wheel carries beside this
    module (pyproject.toml's force-include), else the checkout's ``firmware/``."""
    if given is not None:
        candidates = [given]
    else:
        packaged = Path(__file__).with_name("firmware")
        candidates = [packaged, Path(__file__).resolve().parents[2] / "firmware"]
    for folder in candidates:
        if (folder / "main.py").is_file() and (folder / PACKAGE).is_dir():
            return folder
    if given is not None:
        raise FaydError(f"--firmware-dir {given}: no main.py and {PACKAGE}/ in it")
    raise FaydError(
        "the firmware folder was not found: give --firmware-dir (the checkout's firmware/)"
    )


def board_files(folder: Path) -> list[str]:
    """The firmware files a board gets, as POSIX paths relative to ``folder``, sorted: the
    top-level modules (boot.py, main.py, version.py …) and the fayd_fw package. Not the
    host's tools/ and .host/, the README, caches, nor config.json (each board's is made)."""
    found = [p.name for p in folder.glob("*.py") if p.is_file()]
    for path in (folder / PACKAGE).rglob("*"):
        rel = path.relative_to(folder)
        if not path.is_file() or path.suffix == ".pyc":
            continue
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        found.append(rel.as_posix())
    if "main.py" not in found or "boot.py" not in found:
        raise FaydError(f"{folder} is not the firmware folder: no boot.py and main.py")
    return sorted(found)


def firmware_version(folder: Path) -> str:
    """FW_VERSION from version.py (what the board's hello will say), or "unknown"."""
    try:
        text = (folder / "version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    m = re.search(r"FW_VERSION\s*=\s*[\"']([^\"']+)[\"']", text)
    return m.group(1) if m else "unknown"


def read_template(folder: Path) -> dict[str, Any]:
    path = folder / CONFIG
    try:
        template = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FaydError(f"{path}: the template config is unreadable: {exc}") from exc
    if not isinstance(template, dict):
        raise FaydError(f"{path}: the template config is not a JSON object")
    return template


def check_transport(transport: str) -> str:
    if transport not in TRANSPORTS:
        raise FaydError(f"--transport {transport!r}: use one of {', '.join(TRANSPORTS)}")
    return transport


def parse_broker(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for an IPv6 address) → (host, port)."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise FaydError(f"--broker {text!r}: expected HOST:PORT, e.g. 192.168.1.5:1884")
    return host, int(port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _any_address(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


def broker_for_board(
    cfg: Config, lan: str | None, embedded_port: int | None = None
) -> tuple[Broker, list[str]]:
    """Where a board on the LAN reaches fayd's broker, and warnings when it cannot.

    ``lan`` is this box's LAN address; ``embedded_port`` the port the running daemon's
    broker took (it may differ from the setting: 0 means any free port)."""
    m = cfg.mqtt
    warnings: list[str] = []

    def here() -> str:
        if lan is None:
            raise FaydError("cannot tell this box's address on the LAN: give --broker HOST:PORT")
        return lan

    if m.url != "embedded":
        host, port = parse_mqtt_url(m.url)
        if _loopback(host):
            host = here()
            warnings.append(
                f"fayd's broker is {m.url}: the board is told {host}:{port}, so that broker "
                "must listen on the LAN too"
            )
        return Broker(host, port), warnings
    if m.tls_port:  # the plain listener then serves loopback only (docs/security.md)
        names = list(m.tls_names) or default_names(m.embedded_host)
        host = here()
        if host not in names:
            chosen = [n for n in m.tls_names if not _loopback(n)]
            if chosen:
                host = chosen[0]
            else:
                warnings.append(
                    f"the broker's certificate does not name {host}: add it to "
                    "mqtt.tls_names and restart fayd"
                )
        return Broker(host, m.tls_port, tls=True), warnings
    port = embedded_port or m.embedded_port
    if _loopback(m.embedded_host):
        warnings.append(
            f"fayd's broker listens on {m.embedded_host} only (mqtt.embedded_host): a board "
            'on Wi-Fi cannot reach it; set mqtt.embedded_host = "0.0.0.0" and restart fayd'
        )
    host = (
        here() if _any_address(m.embedded_host) or _loopback(m.embedded_host) else m.embedded_host
    )
    return Broker(host, port), warnings


def board_config(
    template: dict[str, Any],
    cfg: Config,
    *,
    device: str,
    key: str,
    transport: str,
    wifi: tuple[str, str] | None,
    broker: Broker | None,
) -> dict[str, Any]:
    """The board's config.json: the template with this device's values. The board logs in
    to the broker as its id with the password derived from ``key`` (mqtt.user and password
    empty), on fayd's topic prefix; over serial, at fayd's baud rate."""
    check_device_id(device)
    check_transport(transport)
    if transport == "mqtt" and (broker is None or wifi is None or not wifi[0]):
        raise FaydError("a board on MQTT needs the Wi-Fi network's name and a broker address")
    out = copy.deepcopy(template)
    out["device"] = device
    out["key"] = key
    out["transport"] = transport
    # The template's user is an example; whose a board is: fayd devices set NAME user=…
    out.pop("user", None)
    ssid, password = wifi or ("", "")
    out["wifi"] = {"ssid": ssid, "password": password}
    mqtt = out.setdefault("mqtt", {})
    mqtt.update({"prefix": cfg.mqtt.prefix, "user": "", "password": ""})
    if broker is not None:
        mqtt.update({"host": broker.host, "port": broker.port, "tls": broker.tls})
        if broker.tls:
            mqtt["ca"] = CA_FILE
    out.setdefault("serial", {})["baud"] = cfg.serial.baudrate
    return out


def mpremote_args(port: str, files: list[str]) -> list[str]:
    """mpremote's arguments: copy ``files`` (relative paths; run from the folder that holds
    them) onto the board at ``port``, each to the same path, then reset it.

    ``resume``: no soft reset first. mpremote's Ctrl-C already stops the running firmware
    and the reset at the end restarts the board anyway; and on MicroPython's unix port (the
    tests' board) a soft reset in the raw REPL ends the process. Folders are made and a
    previous OTA's ota.json is removed by one ``exec`` (``fs mkdir`` fails on a folder that
    exists); unchanged files are skipped by mpremote (it compares hashes)."""
    dirs = sorted({str(PurePosixPath(f).parent) for f in files} - {"."})
    prepare = (
        "import os\n"
        f"for d in {dirs!r}:\n"
        "    try:\n        os.mkdir(d)\n    except OSError:\n        pass\n"
        f"try:\n    os.remove({OTA_STATE!r})\nexcept OSError:\n    pass\n"
    )
    args = ["connect", port, "resume", "exec", prepare]
    for name in files:
        args += ["+", "fs", "cp", name, f":{name}"]
    return [*args, "+", "reset"]
