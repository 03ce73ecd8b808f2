"""What the ``fayd`` command says when a command fails: one line and an exit code, never a
traceback for a person's mistake (a missing file, a typo, a daemon that is not running).
The codes are listed in README.md ("Talk to it"); ``fayd --debug`` shows the traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from fayd.cli.client import (
    JOIN_GROUP,
    SYSTEM_CONFIG,
    SYSTEM_STATE,
    NoPermission,
    NotRunning,
    system_root,
)
from fayd.errors import ConfigError, FaydError, StoreError

EXIT_ERROR = 1
EXIT_USAGE = 2  # argparse's own code for a wrong command line
EXIT_NOT_RUNNING = 3
EXIT_PERMISSION = 4
#: A wrong setting (sysexits' EX_CONFIG): systemd's RestartPreventExitStatus=78 stops the
#: service retrying every 5 s with the same one line until the file is fixed.
EXIT_CONFIG = 78
#: An error fayd did not expect: a bug (sysexits' EX_SOFTWARE).
EXIT_BUG = 70
EXIT_INTERRUPTED = 130
#: What reads the output has gone (``fayd today | head -1``): quiet, and the code a shell
#: gives a command that SIGPIPE stopped (128 + 13), as other command-line tools end.
EXIT_PIPE = 141


class UsageError(FaydError):
    """The command line asks for something impossible (exit 2, like argparse's errors)."""


#: The service's files belong to its user: a change made as root could lock the daemon out.
WRITE_HINT = (
    "this changes the database: run it as its owner (sudo -u fayd /opt/fayd/venv/bin/fayd …)"
)
BUG_HINT = (
    "this is a bug in fayd: run the command again with --debug for the traceback "
    "(the daemon's log: journalctl -u fayd, or the terminal running fayd run)"
)


def explain(exc: BaseException, system: bool = False) -> tuple[str, int]:
    """The line to print (without the ``fayd:`` prefix) and the exit code; ``system``: the
    command was about the service install (its files are the fayd user's and group's)."""
    if isinstance(exc, UsageError):
        return _line(exc), EXIT_USAGE
    if isinstance(exc, NoPermission):
        return _line(exc), EXIT_PERMISSION
    if isinstance(exc, NotRunning):
        return _line(exc), EXIT_NOT_RUNNING
    if isinstance(exc, ConfigError):
        return _line(exc), EXIT_CONFIG
    if isinstance(exc, StoreError) and (hint := _denied(exc.__cause__, system)):
        return f"{_line(exc)}; {hint}", EXIT_PERMISSION
    if isinstance(exc, FaydError | RuntimeError):
        return _line(exc), EXIT_ERROR
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, sqlite3.Error):
        if hint := _denied(exc, system):
            return f"the database failed: {exc}; {hint}", EXIT_PERMISSION
        return f"the database failed: {exc}", EXIT_ERROR
    if isinstance(exc, httpx.HTTPError):
        return f"talking to fayd failed: {exc}", EXIT_ERROR
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text: {exc}", EXIT_ERROR
    if isinstance(exc, ValueError):
        return _line(exc), EXIT_USAGE
    return f"unexpected {type(exc).__name__}: {_line(exc)}; {BUG_HINT}", EXIT_BUG


def _line(exc: BaseException) -> str:
    """The message on one line (some, e.g. a missing model's, have an indented hint)."""
    return "; ".join(part.strip() for part in str(exc).splitlines() if part.strip())


def _os_error(exc: OSError) -> tuple[str, int]:
    name = exc.filename
    if isinstance(exc, PermissionError):
        hint = JOIN_GROUP if name and _in_service_install(Path(name)) else "check its permissions"
        return f"permission denied: {name or exc}; {hint}", EXIT_PERMISSION
    if isinstance(exc, FileNotFoundError) and name:
        return f"no such file: {name}", EXIT_ERROR
    if isinstance(exc, IsADirectoryError) and name:
        return f"{name} is a folder, not a file", EXIT_ERROR
    if name and exc.strerror:
        return f"{name}: {exc.strerror}", EXIT_ERROR
    return _line(exc), EXIT_ERROR


def _in_service_install(path: Path) -> bool:
    root = system_root()
    folders = ((root / SYSTEM_CONFIG).parent, root / SYSTEM_STATE)
    return any(path.absolute().is_relative_to(folder) for folder in folders)


def _denied(exc: BaseException | None, system: bool) -> str:
    """What to do when SQLite may not open or write the database ("": it is not that)."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and "readonly" in text:
        # The fayd group may read the service's database, not write it.
        return WRITE_HINT if system else "check the permissions of the file and its folder"
    if isinstance(exc, PermissionError) or (
        isinstance(exc, sqlite3.OperationalError) and "unable to open" in text
    ):
        return JOIN_GROUP if system else "check the permissions of the file and its folder"
    return ""
