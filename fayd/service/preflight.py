"""Before the daemon loads anything: the files the settings name exist, and the ports it
will listen on are free. Each problem stops the start with one line naming the setting,
where it came from and, for a port, who holds it when that can be found cheaply.

A port the user configured (in the file or the environment) must be free: devices and
scripts rely on it. So must the embedded broker's, even its default (1884): the boards are
set to it, and a broker moved to a free port would cut them all off while looking fine.
Either stops the start with a non-zero exit that is not 78, so systemd tries again every
few seconds (the holder may be an old fayd still stopping, or a mosquitto that will be
stopped): each try says the same one line. A default API port that is taken (another fayd
in developer mode) is swapped for a free one, said in the log and ``fayd status``; the CLI
and ``fayd sim`` find the actual ports in the runtime file.
"""

from __future__ import annotations

import errno
import logging
import os
import pwd
import shutil
import socket
from dataclasses import dataclass, field
from pathlib import Path

from fayd.config import Config
from fayd.errors import ConfigError, FaydError
from fayd.models.user_files import user_file_problems, value
from fayd.transport.broker import INSTALL_HINT

log = logging.getLogger(__name__)

#: Ports devices are set to: never swapped for a free one, even when left at the default.
DEVICE_PORTS = ("mqtt.embedded_port", "mqtt.tls_port")
#: Files of the agent's own that a setting may name (a model's are fayd.models.user_files).
AGENT_FILES = ("agent.action_rules", "agent.qa_csv", "agent.intents")


@dataclass
class Ports:
    """The ports to listen on (0 = any free one) and what was changed, for the log and
    ``fayd status``."""

    api: int
    broker: int
    #: setting → why its default port is not used, e.g. "8731 was in use by mosquitto (pid 7)".
    moved: dict[str, str] = field(default_factory=dict)


def check_files(cfg: Config) -> None:
    """Raise ConfigError for the first setting that names a file that is not there."""
    problems = user_file_problems(cfg)
    if problems:
        raise ConfigError(next(iter(problems.values())))
    for key in AGENT_FILES:
        path = value(cfg, key)
        if path and not Path(path).expanduser().is_file():
            raise ConfigError(f"{cfg.setting(key)}: no such file")
    binary = cfg.mqtt.mosquitto_bin
    if cfg.mqtt.url == "embedded" and not (
        shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/sbin")
    ):
        raise ConfigError(f"{cfg.setting('mqtt.mosquitto_bin')}: not found; {INSTALL_HINT}")


def check_ports(cfg: Config) -> Ports:
    """The ports fayd will listen on: a configured one in use stops the start, a default
    one in use becomes 0 (a free port) with a notice."""
    mqtt = cfg.mqtt
    ports = Ports(cfg.api.port, mqtt.embedded_port)
    ports.api = _free_or_default(cfg, "api.port", "api.host", cfg.api.host, ports)
    if mqtt.url == "embedded":
        # With TLS the plain listener serves fayd itself on loopback (broker_files).
        plain_host = mqtt.embedded_host
        if mqtt.tls_port:
            plain_host = "::1" if ":" in mqtt.embedded_host else "127.0.0.1"
            _free_or_default(cfg, "mqtt.tls_port", "mqtt.embedded_host", mqtt.embedded_host, ports)
        ports.broker = _free_or_default(
            cfg, "mqtt.embedded_port", "mqtt.embedded_host", plain_host, ports
        )
    return ports


def _free_or_default(cfg: Config, key: str, host_key: str, host: str, ports: Ports) -> int:
    port = int(value(cfg, key))
    if port == 0:
        return 0
    try:
        _try_bind(host, port)
        return port
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            by = port_holder(port)
            if cfg.given(key):
                # Not a ConfigError (exit 78, never retried by systemd): the holder may be
                # an old fayd still stopping.
                raise FaydError(f"{cfg.setting(key)}: {host}:{port} is in use{by}") from exc
            if key in DEVICE_PORTS:
                raise FaydError(
                    f"{cfg.setting(key)}: {host}:{port} is in use{by}; the devices are set to"
                    f" this port, so the broker does not move: stop that program, or set"
                    f" {key} here and on every device"
                ) from exc
            ports.moved[key] = f"{port} was in use{by}"
            return 0
        if exc.errno == errno.EACCES:
            raise ConfigError(
                f"{cfg.setting(key)}: only root may listen on a port below 1024"
            ) from exc
        # Retried (not a ConfigError): at boot a LAN address may come after fayd starts.
        raise FaydError(f"{cfg.setting(host_key)}: cannot listen there: {exc.strerror}") from exc


def _try_bind(host: str, port: int) -> None:
    """Bind as the servers do (SO_REUSEADDR: a closed connection's TIME_WAIT is no
    conflict), then let go."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))


# --- who holds a port (Linux /proc; best effort, only when a port is taken) ----------------


def port_holder(port: int) -> str:
    """Who listens on ``port``, as the end of a sentence: ' by another fayd (pid 12)',
    ' by mosquitto (pid 7)', ' by a program of user mosquitto', or '' when not found."""
    listening = _listening_sockets(port)
    if not listening:
        return ""
    for pid in _pids_holding(set(listening)):
        return f" by {_describe(pid)}"
    uid = next(iter(listening.values()))
    try:
        return f" by a program of user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f" by a program of uid {uid}"


def _listening_sockets(port: int) -> dict[str, int]:
    """socket inode → owner uid of the TCP sockets listening on ``port``."""
    found: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                found[fields[9]] = int(fields[7])
    return found


def _pids_holding(inodes: set[str]) -> list[int]:
    wanted = {f"socket:[{inode}]" for inode in inodes}
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) in wanted for fd in (proc / "fd").iterdir()):
                pids.append(int(proc.name))
        except OSError:  # gone, or another user's (not root): skipped
            continue
    return pids


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _is_fayd(pid: int) -> bool:
    return any(arg == "fayd" or arg.endswith("/fayd") for arg in _argv(pid))


def _describe(pid: int) -> str:
    if _is_fayd(pid):
        return f"another fayd (pid {pid})"
    argv = _argv(pid)
    name = Path(argv[0]).name if argv and argv[0] else "a program"
    try:
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        parent = 0
    if name == "mosquitto" and parent and _is_fayd(parent):
        return f"the embedded broker of another fayd (pid {parent})"
    return f"{name} (pid {pid})"
