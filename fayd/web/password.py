"""The household password of the web page: its scrypt hash (stdlib ``hashlib.scrypt``, a
random salt) in ``<state>/web_password``, written by ``fayd web password``. The daemon reads
the file at each login and notices when it changes (a new password ends every session)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path

from fayd.auth.tokens import write_private
from fayd.errors import FaydError

PASSWORD_FILE = "web_password"
MIN_LENGTH = 8
MAX_LENGTH = 1024
#: scrypt's cost: 16 MiB and ~50 ms a guess on a small board; a guessing script pays it too.
N, R, P = 2**14, 8, 1


class BadPassword(FaydError):
    """A password that cannot be set (too short, too long)."""


def _hash(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=64 * 2**20, dklen=32)


def check_new(password: str) -> str:
    if len(password) < MIN_LENGTH:
        raise BadPassword(f"the password must be at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise BadPassword(f"the password must be at most {MAX_LENGTH} characters")
    return password


def write_password(state_dir: Path, password: str) -> Path:
    """Hash ``password`` into the state folder's file, replacing the old one atomically."""
    check_new(password)
    salt = secrets.token_bytes(16)
    line = "$".join(
        ("scrypt", str(N), str(R), str(P), _b64(salt), _b64(_hash(password, salt, N, R, P)))
    )
    state_dir.mkdir(parents=True, exist_ok=True)
    # A service install's state folder is group fayd's (0750): its administrators set the
    # password, the daemon's user reads it. Anywhere else it is the user's alone.
    mode = 0o640 if state_dir.stat().st_mode & 0o070 else 0o600
    path = state_dir / PASSWORD_FILE
    write_private(path, line + "\n", mode)
    return path


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class Stored:
    """The file's hash, and what identifies this version of the file."""

    line: str
    version: tuple[int, int, int]

    def matches(self, password: str) -> bool:
        """Constant time in what is compared; scrypt's cost is the same for any guess."""
        try:
            name, n, r, p, salt, want = self.line.split("$")
            if name != "scrypt":
                return False
            got = _hash(password[:MAX_LENGTH], base64.b64decode(salt), int(n), int(r), int(p))
        except (ValueError, TypeError):  # a damaged file opens for nobody
            return False
        return hmac.compare_digest(got, base64.b64decode(want))


def version_of(state_dir: Path) -> tuple[int, int, int] | None:
    """The file's (inode, mtime, size): changes when a new password is written."""
    try:
        st = (state_dir / PASSWORD_FILE).stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_password(state_dir: Path) -> Stored | None:
    """The stored hash, or None when no password is set (nobody can log in)."""
    version = version_of(state_dir)
    try:
        line = (state_dir / PASSWORD_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return Stored(line, version) if line and version is not None else None
