"""The embedded mosquitto's files, written by fayd: its config, its accounts (a password
file, hashed as mosquitto_passwd does) and its ACL. Who may connect and what each may do is
decided here (docs/security.md):

- no anonymous clients, on loopback too;
- fayd logs in as the user ``fayd`` (a password made at every start) and may use every
  topic;
- a device logs in with its id as user name and the password derived from its secret;
  the broker makes the user name its client id (``use_username_as_clientid``), so no client
  can take another's id and kick it off, and the ACL (by user name) lets it publish only on
  ``<prefix>/dev/<its id>/up/<kind>`` for the protocol's kinds (so a device cannot make
  topics of its own, at any depth) and read only its own ``down`` topics and fayd's status
  (a person's alerts reach the devices that may see them on those ``down`` topics; the
  retained ``<prefix>/alerts/#`` is for fayd and Home Assistant: docs/security.md);
- the broker's quotas (:data:`QUOTAS`, docs/security.md "Quotas") bound what one client can
  make it hold: the size of a packet and of a message, the queue and what is in flight.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import pwd
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from fayd.auth import DAEMON_USER, PROBE_USER, mqtt_password
from fayd.errors import LinkError
from fayd.protocol import KINDS, MAX_JSON


@dataclass(frozen=True)
class TlsFiles:
    """A TLS listener's port and certificate files (fayd.transport.broker_tls)."""

    port: int
    ca: Path
    cert: Path
    key: Path


@dataclass(frozen=True)
class ClientAccount:
    """A broker account for another program (Home Assistant): its user name, its password
    (kept by fayd in the clear: fayd shows it to the user) and the topic filters it may
    read and write. Its user name must not be a device id (fayd.auth.RESERVED_IDS)."""

    user: str
    password: str
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()

    def acl(self) -> str:
        lines = [f"\nuser {self.user}\n"]
        lines += [f"topic read {t}\n" for t in self.read]
        lines += [f"topic write {t}\n" for t in self.write]
        return "".join(lines)


@dataclass(frozen=True)
class Account:
    """The system account mosquitto runs as."""

    name: str
    uid: int
    gid: int

    @property
    def is_mine(self) -> bool:
        """fayd's own account: its files need no handing over."""
        return self.uid == os.geteuid()


#: When fayd itself runs as root, mosquitto drops to the first of these that exists: the
#: service's user, else the one Debian's mosquitto package makes. (It would otherwise stay
#: root, and warn that it "should not be run as root".)
UNPRIVILEGED = ("fayd", "mosquitto")


def broker_account(unprivileged: bool = True) -> Account:
    """The account fayd runs as or, for root, an unprivileged one (UNPRIVILEGED)."""
    me = os.geteuid()
    names = UNPRIVILEGED if me == 0 and unprivileged else ()
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return Account(name, entry.pw_uid, entry.pw_gid)
    try:
        name = pwd.getpwuid(me).pw_name
    except KeyError:  # a uid without a name (containers): mosquitto ignores `user` unless root
        name = str(me)
    return Account(name, me, os.getegid())


def reachable(folder: Path, account: Account) -> bool:
    """``account`` can pass through every folder above ``folder`` (the x bit that applies
    to it: owner's, group's or others')."""
    try:
        groups = set(os.getgrouplist(account.name, account.gid))
    except OSError:
        groups = {account.gid}
    for parent in folder.absolute().parents:
        try:
            info = parent.stat()
        except OSError:  # not there yet: fayd will make it private (0700), so no
            return False
        if info.st_uid == account.uid:
            bit = stat.S_IXUSR
        elif info.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not info.st_mode & bit:
            return False
    return True


def hand_over(path: Path, account: Account) -> None:
    """Make ``path`` mosquitto's when it runs as another account (fayd is root then)."""
    if not account.is_mine:
        os.chown(path, account.uid, account.gid, follow_symlinks=False)


def acl_text(prefix: str, clients: tuple[ClientAccount, ...] = ()) -> str:
    # One line per frame kind, not up/#: a device can then retain at most one message per
    # kind (docs/security.md, "Quotas"), not one per topic it invents.
    writes = "".join(f"pattern write {prefix}/dev/%u/up/{kind}\n" for kind in KINDS)
    return (
        "# Written by fayd at every start. A device logs in as its device id.\n"
        + writes
        + f"pattern read {prefix}/dev/%u/down/#\n"
        f"pattern read {prefix}/daemon/status\n"
        f"\nuser {DAEMON_USER}\n"
        "topic readwrite #\n" + "".join(c.acl() for c in clients)
    )


def password_line(user: str, password: str, iterations: int = 101) -> str:
    """One mosquitto password-file line (``$7$``: PBKDF2-SHA512, as mosquitto_passwd). The
    passwords are 256-bit random values, so the iteration count adds nothing."""
    salt = secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    b64 = base64.b64encode
    return f"{user}:$7${iterations}${b64(salt).decode()}${b64(digest).decode()}\n"


def passwd_text(
    daemon_password: str,
    device_secrets: dict[str, str],
    probe_password: str = "",
    clients: tuple[ClientAccount, ...] = (),
) -> str:
    """fayd's account, the devices', the probe's (a new password at each reload: fayd
    logs in with it to see that mosquitto has read the file) and other programs'."""
    lines = [password_line(DAEMON_USER, daemon_password)]
    if probe_password:
        lines.append(password_line(PROBE_USER, probe_password))
    lines += [password_line(c.user, c.password) for c in clients]
    lines += [password_line(d, mqtt_password(s)) for d, s in sorted(device_secrets.items())]
    return "".join(lines)


def write_private(path: Path, text: str, account: Account | None = None) -> None:
    """Readable by the broker's account only, replaced in one rename (the broker may read it
    now)."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # never written through: O_EXCL below refuses a planted link
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    if account is not None:
        hand_over(tmp, account)
    tmp.replace(path)


def write_accounts(
    folder: Path,
    daemon_password: str,
    device_secrets: dict[str, str],
    probe_password: str = "",
    account: Account | None = None,
    clients: tuple[ClientAccount, ...] = (),
) -> None:
    text = passwd_text(daemon_password, device_secrets, probe_password, clients)
    write_private(folder / "passwd", text, account)


#: The broker's limits (docs/security.md, "Quotas"). A message is at most a JSON frame
#: (MAX_JSON, 64 KiB; an audio frame is 12 + 16,384 bytes): a bigger one is dropped, and a
#: packet of over twice that closes its client's connection before mosquitto reads it.
#: Each client's queue of QoS 1 messages keeps room for a burst of 20,000 sensor events
#: (~300 bytes each, 6 MB) while fayd catches up, but no more than 16 MiB; 20 in flight
#: (mosquitto's default) keeps a device's link busy without flooding it.
QUOTAS = (
    f"message_size_limit {MAX_JSON}\n"
    f"max_packet_size {2 * MAX_JSON}\n"
    "max_queued_messages 20000\n"
    f"max_queued_bytes {16 * 1024 * 1024}\n"
    "max_inflight_messages 20\n"
    # No client of fayd's keeps a session (all connect with a clean session): one that
    # does and never comes back would keep its queue in mosquitto.db for ever.
    "persistent_client_expiration 1d\n"
)

#: After each ``listener`` line: a listener option given before the first listener would
#: make mosquitto open its default listener on port 1883 of every interface.
LISTENER_OPTIONS = "use_username_as_clientid true\n"


def _listeners(host: str, port: int, tls: TlsFiles | None) -> str:
    if tls is None:
        return f"listener {port} {host}\n{LISTENER_OPTIONS}"
    # With TLS, devices use the TLS listener; the plain one serves fayd itself on loopback.
    local = "::1" if ":" in host else "127.0.0.1"
    return (
        f"listener {port} {local}\n{LISTENER_OPTIONS}"
        f"listener {tls.port} {host}\n{LISTENER_OPTIONS}"
        f"cafile {tls.ca}\ncertfile {tls.cert}\nkeyfile {tls.key}\n"
        "tls_version tlsv1.2\n"
    )


def _readable_tls(folder: Path, tls: TlsFiles, account: Account) -> TlsFiles:
    """mosquitto reads its certificate after dropping to its account: copies of the files
    it needs (not the CA's key) that the account may read."""
    if account.is_mine:
        return tls
    run = folder / "tls-broker"  # not "tls": that folder holds the CA key
    run.mkdir(mode=0o700, exist_ok=True)
    hand_over(run, account)
    copies = []
    for source in (tls.ca, tls.cert, tls.key):
        target = run / source.name
        write_private(target, source.read_text(encoding="ascii"), account)
        copies.append(target)
    return TlsFiles(tls.port, *copies)


def prepare_folder(folder: Path, account: Account) -> None:
    """The broker's folder, private to its account; files left by an earlier run as
    another account (the persistence file) are handed over too."""
    folder.mkdir(parents=True, exist_ok=True)
    owner = folder.lstat()
    if stat.S_ISLNK(owner.st_mode) or owner.st_uid not in (os.geteuid(), account.uid):
        # Someone else's (it may be in /tmp: broker_folder): its files are not to be trusted.
        raise LinkError(f"{folder} is not fayd's (owner uid {owner.st_uid}): remove it")
    os.chmod(folder, 0o700)
    hand_over(folder, account)
    if not account.is_mine:
        for path in folder.iterdir():
            if path.is_file() and not path.is_symlink():
                hand_over(path, account)


def write_config(
    folder: Path,
    host: str,
    port: int,
    prefix: str,
    daemon_password: str,
    device_secrets: dict[str, str],
    tls: TlsFiles | None = None,
    account: Account | None = None,
    clients: tuple[ClientAccount, ...] = (),
) -> Path:
    """The config, the ACL and the password file; returns the config's path."""
    account = account or broker_account()
    prepare_folder(folder, account)
    write_private(folder / "acl", acl_text(prefix, clients), account)
    write_accounts(folder, daemon_password, device_secrets, account=account, clients=clients)
    if tls is not None:
        tls = _readable_tls(folder, tls, account)
    conf = folder / "mosquitto.conf"
    write_private(
        conf,
        "# Written by fayd at every start; edit fayd's [mqtt] settings instead.\n"
        "per_listener_settings false\n"
        "allow_anonymous false\n"
        f"password_file {folder / 'passwd'}\n"
        f"acl_file {folder / 'acl'}\n"
        # Retained presence and alerts survive a broker restart.
        "persistence true\n"
        f"persistence_location {folder}/\n"
        # The account to run as: fayd's own (mosquitto ignores it then), or, when fayd is
        # root, an unprivileged one that owns this folder (broker_account).
        f"user {account.name}\n"
        "log_dest stderr\n"
        "log_type error\n"
        "log_type warning\n"
        # No Nagle: small frames (acks, audio, human frames) leave at once instead of
        # waiting for the peer's delayed ACK (measured: ~40 ms per hop without this).
        "set_tcp_nodelay true\n" + QUOTAS + _listeners(host, port, tls),
        account,
    )
    return conf
