"""The embedded broker: a private mosquitto that fayd starts and supervises.

A newcomer should not have to set up a broker. When ``mqtt.url = "embedded"`` fayd runs
Debian's mosquitto with a generated config on loopback (or the LAN address the user sets).
Its accounts and ACL (fayd.transport.broker_files) admit fayd and the devices added with
``fayd devices add``, nobody else; :meth:`EmbeddedBroker.reload` applies a change at once
(a removed device is disconnected).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt

from fayd.auth import DAEMON_USER, PROBE_USER
from fayd.children import die_with_parent
from fayd.errors import LinkError
from fayd.transport.broker_files import (
    Account,
    ClientAccount,
    TlsFiles,
    broker_account,
    reachable,
    write_accounts,
    write_config,
)
from fayd.transport.broker_scratch import put_away, restore_db

log = logging.getLogger(__name__)

INSTALL_HINT = "sudo apt-get install mosquitto (or set mqtt.url to an existing broker)"

#: Gives the devices' secrets ({device id: secret}) whenever the accounts are written.
SecretsSource = Callable[[], Awaitable[dict[str, str]]]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def broker_folder(state_dir: Path, account: Account) -> Path:
    """Where mosquitto's files go: ``<state>/mosquitto``; but when fayd runs as root and
    mosquitto as an unprivileged account that cannot reach the state folder (e.g. under
    /root), a folder of its own in the system's temporary folder. That one holds password
    hashes and saved alerts where others look: it is removed when the broker stops, and
    its database kept in the state folder meanwhile (``EmbeddedBroker(kept_db=…)``,
    fayd.transport.broker_scratch)."""
    folder = state_dir / "mosquitto"
    if account.is_mine or reachable(folder, account):
        return folder
    key = hashlib.sha256(str(state_dir.absolute()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"fayd-broker-{key}"


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
        device_secrets: SecretsSource,
        *,
        binary: str = "mosquitto",
        prefix: str = "fayd/v1",
        tls: TlsFiles | None = None,
        account: Account | None = None,
        pid_file: Path | None = None,
        clients: tuple[ClientAccount, ...] = (),
        kept_db: Path | None = None,
    ) -> None:
        self.folder = folder
        #: Set when ``folder`` is outside the state folder (broker_folder): the folder goes
        #: when mosquitto stops, its database is kept here between runs.
        self.kept_db = kept_db
        #: Other programs' accounts (Home Assistant), written with the devices'.
        self.clients = clients
        #: Where mosquitto's pid is kept while it runs, for the next start to find if fayd
        #: dies without its cleanup (stop_stale_broker).
        self.pid_file = pid_file
        #: Who mosquitto runs as: fayd's account, or an unprivileged one when fayd is root
        #: and that account can reach ``folder`` (see broker_folder).
        if account is None:
            account = broker_account()
            if not (account.is_mine or reachable(folder, account)):
                account = broker_account(unprivileged=False)
        self.account = account
        self.host = host
        self.port = port or free_port(host)
        self.device_secrets = device_secrets
        self.binary = binary
        self.prefix = prefix
        self.tls = tls
        #: fayd's own login; a new password at every start.
        self.credentials = (DAEMON_USER, secrets.token_urlsafe(24))
        self.accounts = 0
        self.ready = asyncio.Event()
        self._proc: asyncio.subprocess.Process | None = None
        #: mosquitto's last error line: why it exited.
        self.last_error = ""
        self._errors_seen: set[str] = set()

    @property
    def connect_host(self) -> str:
        """Where local clients reach it (a wildcard or TLS-only LAN listener: on loopback)."""
        if self.tls is not None or self.host in ("0.0.0.0", ""):
            return "127.0.0.1"
        return "::1" if self.host == "::" else self.host

    @property
    def url(self) -> str:
        return f"mqtt://{self.connect_host}:{self.port}"

    def _find_binary(self) -> str:
        found = shutil.which(self.binary) or shutil.which(self.binary, path="/usr/sbin:/sbin")
        if not found:
            raise LinkError(f"embedded broker: {self.binary!r} not found; {INSTALL_HINT}")
        return found

    async def reload(self) -> int:
        """Write the accounts again from the devices' secrets and make mosquitto read them
        (SIGHUP: it also disconnects clients whose account is gone); returns once it has.
        Returns the number of device accounts."""
        device_secrets = await self.device_secrets()
        proc = self._proc
        if proc is not None and proc.returncode is None:  # else run() writes them at start
            probe = secrets.token_urlsafe(16)
            write_accounts(
                self.folder,
                self.credentials[1],
                device_secrets,
                probe,
                self.account,
                self.clients,
            )
            proc.send_signal(signal.SIGHUP)
            try:
                await self._until_admitted(PROBE_USER, probe)
            except LinkError as exc:
                raise LinkError(f"the broker did not reload its accounts: {exc}") from exc
        self.accounts = len(device_secrets)
        return self.accounts

    async def _until_admitted(self, user: str, password: str, within_s: float = 5.0) -> None:
        """Until ``user`` can log in with ``password``, or LinkError. At start this proves
        that the broker on the port is this mosquitto (only it knows fayd's new password,
        not whatever else may hold the port); after a reload, that the new password file is
        in force (mosquitto reloads in its own time)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while True:
            try:
                async with aiomqtt.Client(
                    self.connect_host,
                    self.port,
                    username=user,
                    password=password,
                    identifier=user,
                    timeout=2,
                ):
                    return
            except aiomqtt.MqttError as exc:
                if loop.time() > deadline:
                    raise LinkError(f"{user} cannot log in at {self.url}: {exc}") from exc
                await asyncio.sleep(0.05)

    def _as_account(self) -> dict[str, Any]:
        """When fayd is root: start mosquitto as its account already, rather than let it
        drop to it, since a change of user clears the parent-death signal (the user is set
        before the preexec_fn runs). Only mosquitto itself may drop, as root, when it must
        listen below port 1024; the pid file covers that case."""
        ports = [self.port, self.tls.port if self.tls else self.port]
        if self.account.is_mine or min(ports) < 1024:
            return {}
        return {"user": self.account.uid, "group": self.account.gid, "extra_groups": []}

    async def _spawn(self, conf: Path) -> asyncio.subprocess.Process:
        binary, as_account = self._find_binary(), self._as_account()
        while True:
            try:
                return await asyncio.create_subprocess_exec(
                    binary,
                    "-c",
                    str(conf),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                    env=_child_env(),
                    preexec_fn=die_with_parent(),  # dies with fayd, even by kill -9
                    **as_account,
                )
            except PermissionError:
                if not as_account:
                    raise
                # The account may not run that binary (mqtt.mosquitto_bin in a private
                # folder): as root then, and mosquitto drops to it (the pid file covers).
                log.info(
                    "%s cannot run %s: started as root, it drops to it", self.account.name, binary
                )
                as_account = {}

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            if self.kept_db is not None:
                put_away(self.folder, self.kept_db)

    async def _run(self) -> None:
        device_secrets = await self.device_secrets()
        self.accounts = len(device_secrets)
        conf = write_config(
            self.folder,
            self.host,
            self.port,
            self.prefix,
            self.credentials[1],
            device_secrets,
            self.tls,
            self.account,
            self.clients,
        )
        if self.kept_db is not None:  # retained messages of the last run (broker_scratch)
            restore_db(self.folder, self.kept_db, self.account)
        self.last_error = ""
        proc = self._proc = await self._spawn(conf)
        self._write_pid(proc.pid, conf)
        assert proc.stderr is not None
        errors = asyncio.create_task(self._log_stderr(proc.stderr))
        try:
            # mosquitto exits at once when it cannot listen; a connect alone could reach
            # another program on the port, so fayd logs in before calling it listening.
            waiting = asyncio.create_task(self._until_admitted(*self.credentials, within_s=10))
            exited = asyncio.create_task(proc.wait())
            done, _ = await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
            if exited in done:
                waiting.cancel()
                await asyncio.wait({errors}, timeout=2)  # its last words, still in the pipe
                reason = self.last_error or "no reason given"
                raise LinkError(f"mosquitto exited with code {proc.returncode}: {reason}")
            waiting.result()
            log.info(
                "embedded broker listening on %s:%d%s (%d device accounts), as user %s",
                self.host if self.tls is None else self.connect_host,
                self.port,
                f", TLS on {self.host}:{self.tls.port}" if self.tls else "",
                self.accounts,
                self.account.name,
            )
            self.ready.set()
            code = await exited
            await asyncio.wait({errors}, timeout=2)
            raise LinkError(f"mosquitto exited with code {code}: {self.last_error or 'no reason'}")
        finally:
            self.ready.clear()
            self._proc = None
            if proc.returncode is None:
                proc.terminate()
                try:
                    async with asyncio.timeout(5):  # not wait_for: see fayd.devices.sensors
                        await proc.wait()
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
            errors.cancel()
            if self.pid_file is not None:
                self.pid_file.unlink(missing_ok=True)

    def _write_pid(self, pid: int, conf: Path) -> None:
        if self.pid_file is not None:
            self.pid_file.write_text(json.dumps({"pid": pid, "conf": str(conf)}), "utf-8")

    async def _log_stderr(self, stream: asyncio.StreamReader) -> None:
        async for line in stream:
            text = line.decode(errors="replace").rstrip()
            if "does not contain '%c' or '%u'" in text:
                continue  # fayd's status topic is for every device, on purpose (acl_text)
            if "replace `message_size_limit` with `max_packet_size`" in text:
                continue  # both, on purpose: broker_files.QUOTAS
            level = logging.INFO
            if "Error" in text:
                # "1700000000: Error: Address already in use" → the words after the time.
                self.last_error = text.split(": ", 1)[-1]
                # An error again at each restart is reported once (the supervisor counts).
                if self.last_error not in self._errors_seen:
                    self._errors_seen.add(self.last_error)
                    level = logging.ERROR
            log.log(level, "mosquitto: %s", text)


def stop_stale_broker(pid_file: Path, grace_s: float = 5.0) -> str | None:
    """Stop the embedded broker a fayd on this state folder left running when it died
    without its cleanup (kill -9 while mosquitto had dropped to its own account: see
    fayd.children). Call it holding the state folder's lock: then no fayd owns that
    mosquitto any more. Returns what was done, for the log and ``fayd status``; None when
    nothing was left. A pid that now belongs to another program is left alone."""
    try:
        left = json.loads(pid_file.read_text("utf-8"))
        pid, conf = int(left["pid"]), str(left["conf"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        pid_file.unlink(missing_ok=True)
        return None
    if not _runs_config(pid, conf):
        pid_file.unlink(missing_ok=True)
        return None
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while _runs_config(pid, conf) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _runs_config(pid, conf):
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        return (
            f"the embedded broker of an earlier fayd (mosquitto, pid {pid}) is still "
            f"running and fayd may not stop it; stop it with: sudo kill {pid}"
        )
    pid_file.unlink(missing_ok=True)
    return f"stopped the embedded broker (mosquitto, pid {pid}) left by a fayd that died"


def _runs_config(pid: int, conf: str) -> bool:
    """Whether process ``pid`` runs with ``-c conf`` (fayd's own mosquitto config), and is
    not a zombie."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and (b"-c", os.fsencode(conf)) in itertools.pairwise(argv)
