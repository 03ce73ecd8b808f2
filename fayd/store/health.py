"""Is a database file sound? A quick integrity check, and moving a damaged file aside.

``find_damage`` says what is wrong with a file, or None: empty (0 bytes), not SQLite, or
failing SQLite's ``PRAGMA quick_check`` (every page read once: for a memory of 100,000
nodes, a 237 MB file, 0.25 s from the page cache and 5-7 s from a cold disk). It opens
the file read-only, so a damaged file is left as it was found.

A damaged file is never deleted or replaced in place: ``move_aside`` renames it, with its
WAL and shared-memory files, to ``fayd.db.damaged-YYYYmmdd-HHMMSS`` beside it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from fayd.errors import StoreError

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
#: The longest a check may take; past it the file is taken as sound (with a warning), so a
#: huge database on a slow card still starts (systemd gives the start 120 s).
CHECK_BUDGET_S = 30.0
#: SQLite's files beside a database in WAL mode.
COMPANIONS = ("-wal", "-shm")
#: Result codes that mean the file itself is damaged, not a lock, a permission or a full
#: disk: corrupt, not a database, and reads the disk could not complete.
_DAMAGE_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_UNREADABLE_CODES = {sqlite3.SQLITE_IOERR_SHORT_READ, sqlite3.SQLITE_IOERR_READ}


def damage_of(exc: BaseException | None) -> str | None:
    """The damage an SQLite error reports, or None when it is about something else."""
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    if (code & 0xFF) in _DAMAGE_CODES:
        return str(exc)
    if code in _UNREADABLE_CODES:
        return f"unreadable: {exc}"
    return None


def read_only_uri(path: Path) -> str:
    return f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"


def find_damage(path: Path, budget_s: float = CHECK_BUDGET_S) -> str | None:
    """What is wrong with the database at ``path``; None when nothing was found. Raises
    StoreError when it cannot be looked at for a reason that is not damage (a permission)."""
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except PermissionError as exc:
        raise StoreError(f"cannot read the database {path}: {exc.strerror}; {OWNER_HINT}") from exc
    except OSError as exc:
        if exc.errno == errno.EIO:  # the card or disk cannot give the file back
            return f"unreadable: {exc.strerror}"
        raise StoreError(f"cannot read the database {path}: {exc.strerror}") from exc
    if not header:
        return "empty: 0 bytes"
    if header != SQLITE_HEADER:
        return "not an SQLite file"
    return _quick_check(path, budget_s)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path``. It still makes the WAL and shared-memory files
    when they are missing: those it made are removed after, so a damaged file is moved as
    it was found and a stopped fayd's folder is left as it was."""
    made = [p for p in with_companions(path)[1:] if not os.path.lexists(p)]
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None, timeout=30)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        for companion in made:
            companion.unlink(missing_ok=True)


def _quick_check(path: Path, budget_s: float) -> str | None:
    expired = threading.Event()
    try:
        with read_only(path) as conn, _deadline(conn, budget_s, expired):
            rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except sqlite3.Error as exc:
        if expired.is_set() and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_INTERRUPT:
            size = path.stat().st_size / 2**20
            log.warning(
                "the integrity check of %s (%.0f MB) did not finish within %g s: it was "
                "skipped this time",
                path,
                size,
                budget_s,
            )
            return None
        if damage := damage_of(exc):
            return damage
        raise StoreError(f"cannot check the database {path}: {exc}; {advice(exc)}") from exc
    problems = [" ".join(str(row[0]).split()) for row in rows]  # on one line
    return None if problems == ["ok"] else "; ".join(problems)


@contextlib.contextmanager
def _deadline(
    conn: sqlite3.Connection, budget_s: float, expired: threading.Event
) -> Iterator[None]:
    """Interrupt ``conn``'s statement once ``budget_s`` has passed. The whole check is one
    step of SQLite's virtual machine, so a progress handler never runs during it; an
    interrupt from another thread does (and again until it lands: one sent before the
    statement starts is lost)."""
    done = threading.Event()

    def watch() -> None:
        if done.wait(budget_s):
            return
        expired.set()
        while not done.is_set():
            conn.interrupt()
            done.wait(0.001)

    watcher = threading.Thread(target=watch, name="fayd-db-check", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


OWNER_HINT = "it and its folder must belong to the user fayd runs as"


def advice(exc: sqlite3.Error) -> str:
    """What to do about an SQLite error that stops the database opening."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return OWNER_HINT
    if code == sqlite3.SQLITE_READONLY:
        return f"{OWNER_HINT}, on a disk that is not read-only (remounted after errors? dmesg)"
    if code == sqlite3.SQLITE_FULL:
        return "the disk is full: free some space"
    if code == sqlite3.SQLITE_IOERR:
        return "the disk failed to read or write it (a failing SD card?): see dmesg"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "another program holds it (a second fayd? sqlite3?)"
    if code in _DAMAGE_CODES:
        return (
            "it is damaged: fayd run moves it aside and starts from what can still be read "
            "of it, completed from the last good backup; fayd restore lists the backups"
        )
    return "see the SQLite message"


def with_companions(path: Path) -> list[Path]:
    """The database file first, then its WAL and shared-memory files."""
    return [path, *(path.with_name(path.name + suffix) for suffix in COMPANIONS)]


def move_aside(path: Path, label: str, now: float | None = None) -> Path:
    """Rename ``path`` (and its WAL and shared-memory files, which belong to it) to
    ``<name>.<label>-YYYYmmdd-HHMMSS`` in the same folder; returns the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while any(os.path.lexists(p) for p in with_companions(target)):
        n += 1
        target = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    # The WAL first: a WAL left behind without its database would be read into the next
    # database of that name.
    for src, dst in reversed(
        list(zip(with_companions(path), with_companions(target), strict=True))
    ):
        if os.path.lexists(src):
            os.replace(src, dst)
    sync_folder(path.parent)
    return target


def sync_folder(folder: Path) -> None:
    """Make renames and new files in ``folder`` survive a power cut."""
    sync_path(folder)


def sync_path(path: Path) -> None:
    """fsync a file's (or a folder's) contents to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
