"""The embedded broker: a private mosquitto that fayd starts and supervises.

A newcomer should not have to set up a broker. When ``mqtt.url = "embedded"`` fayd runs
Debian's mosquitto with a generated config on loopback (or the LAN address the user sets).

A device cannot speak for another device: the generated ACL lets a client publish only on
``<prefix>/dev/<its client id>/up/#`` and read only its own ``down`` topics and fayd's
status, so a device's MQTT client id must be its device id. fayd itself logs in as the
user ``fayd`` with a password made at every start (hashed in a 0600 file next to the
config), and may read and write everything.
"""

from __future__ import annotations

import asyncio
import base64
import getpass
import hashlib
import logging
import os
import secrets
import shutil
import socket
from pathlib import Path

from fayd.errors import LinkError

log = logging.getLogger(__name__)

INSTALL_HINT = "sudo apt-get install mosquitto (or set mqtt.url to an existing broker)"
#: The broker user fayd logs in as; the ACL gives it every topic.
DAEMON_USER = "fayd"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def acl_text(prefix: str, daemon_user: str = DAEMON_USER) -> str:
    """mosquitto ACL: each client only on its own device topics (``%c`` = its client id)."""
    return (
        "# Written by fayd at every start. A device's MQTT client id must be its device id.\n"
        f"pattern write {prefix}/dev/%c/up/#\n"
        f"pattern read {prefix}/dev/%c/down/#\n"
        f"pattern read {prefix}/daemon/status\n"
        f"\nuser {daemon_user}\n"
        "topic readwrite #\n"
    )


def password_line(user: str, password: str, iterations: int = 101) -> str:
    """One mosquitto password-file line (``$7$``: PBKDF2-SHA512, as mosquitto_passwd)."""
    salt = secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    b64 = base64.b64encode
    return f"{user}:$7${iterations}${b64(salt).decode()}${b64(digest).decode()}\n"


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o600)


def write_config(
    folder: Path,
    host: str,
    port: int,
    prefix: str = "fayd/v1",
    password: str | None = None,
) -> Path:
    """The config; with ``password``, also the ACL and fayd's password file."""
    folder.mkdir(parents=True, exist_ok=True)
    access = ""
    if password is not None:
        acl, passwd = folder / "acl", folder / "passwd"
        _write_private(acl, acl_text(prefix))
        _write_private(passwd, password_line(DAEMON_USER, password))
        # Devices connect without a username (anonymous) and get the ACL's patterns.
        access = f"password_file {passwd}\nacl_file {acl}\n"
    conf = folder / "mosquitto.conf"
    conf.write_text(
        "# Written by fayd at every start; edit fayd's [mqtt] settings instead.\n"
        f"listener {port} {host}\n"
        "allow_anonymous true\n"
        f"{access}"
        # Retained presence and alerts survive a broker restart.
        "persistence true\n"
        f"persistence_location {folder}/\n"
        # Stay the user fayd runs as (as root mosquitto would switch to 'mosquitto' and
        # lose access to fayd's state folder).
        f"user {getpass.getuser()}\n"
        "log_dest stderr\n"
        "log_type error\n"
        "log_type warning\n"
        # No Nagle: small frames (acks, audio, human frames) leave at once instead of
        # waiting for the peer's delayed ACK (measured: ~40 ms per hop without this).
        "set_tcp_nodelay true\n"
        # Room for bursts of sensor events (QoS 1) while fayd catches up.
        "max_queued_messages 20000\n"
        "max_packet_size 1048576\n",
        encoding="utf-8",
    )
    return conf


async def wait_listening(host: str, port: int, within_s: float = 10.0) -> None:
    """Until a TCP connect succeeds, or LinkError."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1.0)
            writer.close()
            await writer.wait_closed()
            return
        except (OSError, TimeoutError) as exc:
            if loop.time() > deadline:
                raise LinkError(f"broker at {host}:{port} did not start listening") from exc
            await asyncio.sleep(0.05)


def _child_env() -> dict[str, str]:
    """fayd's environment minus systemd's notify/watchdog variables: Debian's mosquitto
    would otherwise send its own READY=1 on fayd's notify socket."""
    hidden = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")
    return {k: v for k, v in os.environ.items() if k not in hidden}


class EmbeddedBroker:
    """Runs mosquitto until cancelled; raises LinkError when it dies or cannot start."""

    def __init__(
        self,
        folder: Path,
        host: str,
        port: int,
        binary: str = "mosquitto",
        prefix: str = "fayd/v1",
        acl: bool = True,
    ) -> None:
        self.folder = folder
        self.host = host
        self.port = port or free_port(host)
        self.binary = binary
        self.prefix = prefix
        #: fayd's login (user, password) when the ACL is on, else None (anonymous).
        self.credentials = (DAEMON_USER, secrets.token_urlsafe(24)) if acl else None
        self.ready = asyncio.Event()

    @property
    def connect_host(self) -> str:
        """Where local clients reach it (a wildcard listener is reached on loopback)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host

    @property
    def url(self) -> str:
        return f"mqtt://{self.connect_host}:{self.port}"

    def _find_binary(self) -> str:
        found = shutil.which(self.binary) or shutil.which(self.binary, path="/usr/sbin:/sbin")
        if not found:
            raise LinkError(f"embedded broker: {self.binary!r} not found; {INSTALL_HINT}")
        return found

    async def run(self) -> None:
        password = self.credentials[1] if self.credentials else None
        conf = write_config(self.folder, self.host, self.port, self.prefix, password)
        proc = await asyncio.create_subprocess_exec(
            self._find_binary(),
            "-c",
            str(conf),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(),
        )
        assert proc.stderr is not None
        errors = asyncio.create_task(self._log_stderr(proc.stderr))
        try:
            waiting = asyncio.create_task(wait_listening(self.connect_host, self.port))
            exited = asyncio.create_task(proc.wait())
            done, _ = await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
            if exited in done:
                waiting.cancel()
                raise LinkError(f"mosquitto exited with {proc.returncode} (port {self.port} busy?)")
            waiting.result()
            log.info("embedded broker listening on %s:%d", self.host, self.port)
            self.ready.set()
            code = await exited
            raise LinkError(f"embedded broker exited with code {code}")
        finally:
            self.ready.clear()
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 5)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
            errors.cancel()

    @staticmethod
    async def _log_stderr(stream: asyncio.StreamReader) -> None:
        async for line in stream:
            text = line.decode(errors="replace").rstrip()
            # mosquitto's warnings include the harmless "should not be run as root" in dev.
            log.log(logging.ERROR if "Error" in text else logging.INFO, "mosquitto: %s", text)
