"""The embedded mosquitto's files, written by fayd: its config, its accounts (a password
file, hashed as mosquitto_passwd does) and its ACL. Who may connect and what each may do is
decided here (docs/security.md):

- no anonymous clients, on loopback too;
- fayd logs in as the user ``fayd`` (a password made at every start) and may use every
  topic;
- a device logs in with its id as user name and the password derived from its secret;
  the broker makes the user name its client id (``use_username_as_clientid``), so no client
  can take another's id and kick it off, and the ACL (by user name) lets it publish only on
  ``<prefix>/dev/<its id>/up/#`` and read only its own ``down`` topics, fayd's status and
  the household's alerts.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from fayd.auth import DAEMON_USER, PROBE_USER, mqtt_password


@dataclass(frozen=True)
class TlsFiles:
    """A TLS listener's port and certificate files (fayd.transport.broker_tls)."""

    port: int
    ca: Path
    cert: Path
    key: Path


def acl_text(prefix: str) -> str:
    return (
        "# Written by fayd at every start. A device logs in as its device id.\n"
        f"pattern write {prefix}/dev/%u/up/#\n"
        f"pattern read {prefix}/dev/%u/down/#\n"
        f"pattern read {prefix}/daemon/status\n"
        f"pattern read {prefix}/alerts/#\n"
        f"\nuser {DAEMON_USER}\n"
        "topic readwrite #\n"
    )


def password_line(user: str, password: str, iterations: int = 101) -> str:
    """One mosquitto password-file line (``$7$``: PBKDF2-SHA512, as mosquitto_passwd). The
    passwords are 256-bit random values, so the iteration count adds nothing."""
    salt = secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    b64 = base64.b64encode
    return f"{user}:$7${iterations}${b64(salt).decode()}${b64(digest).decode()}\n"


def passwd_text(
    daemon_password: str, device_secrets: dict[str, str], probe_password: str = ""
) -> str:
    """fayd's account, the devices', and the probe's (a new password at each reload: fayd
    logs in with it to see that mosquitto has read the file)."""
    lines = [password_line(DAEMON_USER, daemon_password)]
    if probe_password:
        lines.append(password_line(PROBE_USER, probe_password))
    lines += [password_line(d, mqtt_password(s)) for d, s in sorted(device_secrets.items())]
    return "".join(lines)


def write_private(path: Path, text: str) -> None:
    """Readable by fayd's user only, replaced in one rename (the broker may read it now)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def write_accounts(
    folder: Path, daemon_password: str, device_secrets: dict[str, str], probe_password: str = ""
) -> None:
    write_private(folder / "passwd", passwd_text(daemon_password, device_secrets, probe_password))


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


def write_config(
    folder: Path,
    host: str,
    port: int,
    prefix: str,
    daemon_password: str,
    device_secrets: dict[str, str],
    tls: TlsFiles | None = None,
) -> Path:
    """The config, the ACL and the password file; returns the config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    write_private(folder / "acl", acl_text(prefix))
    write_accounts(folder, daemon_password, device_secrets)
    conf = folder / "mosquitto.conf"
    conf.write_text(
        "# Written by fayd at every start; edit fayd's [mqtt] settings instead.\n"
        "per_listener_settings false\n"
        "allow_anonymous false\n"
        f"password_file {folder / 'passwd'}\n"
        f"acl_file {folder / 'acl'}\n"
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
        "max_packet_size 1048576\n" + _listeners(host, port, tls),
        encoding="utf-8",
    )
    return conf
