"""The token of fayd's HTTP doors: one random string in ``<state>/api_token``, created at
the daemon's first start, readable by the daemon's user only (mode 0600) or, under systemd,
by the ``fayd`` group too (0640: a service install lets its administrators in that way).
Every HTTP route asks for it as ``Authorization: Bearer <token>``; the CLI reads the file."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from fayd.errors import FaydError

TOKEN_FILE = "api_token"
MIN_LENGTH = 16


class TokenUnreadable(FaydError):
    """The token file is missing or this user may not read it."""


#: The state folder's mode: the daemon's user's alone, or, in the service install (systemd's
#: StateDirectoryMode=0750, install.sh), group fayd's too, so that administrators who join
#: the group use the CLI without sudo (docs/security.md).
STATE_MODE = 0o700
SERVICE_STATE_MODE = 0o750


def under_service() -> bool:
    """Run by systemd's unit (it names the state folder in $STATE_DIRECTORY)."""
    return bool(os.environ.get("STATE_DIRECTORY"))


def state_mode() -> int:
    """The most the state folder may be open to (fayd.service.daemon closes it to this)."""
    return SERVICE_STATE_MODE if under_service() else STATE_MODE


def private_mode() -> int:
    """A secret file's mode: the daemon's user's alone, or under systemd (whose
    StateDirectory is group fayd, 0750) its group's too, so its members may use the CLI."""
    return 0o640 if under_service() else 0o600


def write_private(path: Path, text: str, mode: int | None = None) -> None:
    """``text`` in ``path``, whole or not at all (a new file, synced, renamed over the old),
    with ``mode`` (default :func:`private_mode`) from its first byte."""
    new = path.with_name(f".{path.name}.new")
    new.unlink(missing_ok=True)
    mode = private_mode() if mode is None else mode
    fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(new, path)


def ensure_token(state_dir: Path) -> str:
    """The token, created now if there is none (never replaced: clients keep working)."""
    path = state_dir / TOKEN_FILE
    state_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private_mode())
    except FileExistsError:
        token = read_token(state_dir)
        if len(token) >= MIN_LENGTH:
            return token
        path.unlink()  # empty or cut short (a crash while writing it): make a new one
        return ensure_token(state_dir)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    return read_token(state_dir)


def read_token(state_dir: Path) -> str:
    path = state_dir / TOKEN_FILE
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError as exc:
        raise TokenUnreadable(f"no {path}: the daemon creates it when it starts") from exc
    except PermissionError as exc:
        raise TokenUnreadable(
            f"{path} is not readable by this user: run as the daemon's user, use sudo, "
            "or join its group (sudo adduser $USER fayd, then log in again)"
        ) from exc
