"""Putting a backup back (``fayd restore``), only while fayd is stopped.

While fayd runs it holds ``<state>/fayd.lock`` (fayd.service.daemon.take_state_lock); a
restore takes the same lock, so it refuses while fayd runs and fayd cannot start in the
middle of it. The database it replaces is moved aside, never deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fayd.errors import StoreError
from fayd.store.backup import copy_in, own_like_folder
from fayd.store.health import find_damage, move_aside, read_only, with_companions
from fayd.store.migrations import MIGRATIONS

LOCK_FILE = "fayd.lock"


class DaemonRunning(StoreError):
    """fayd holds the state folder."""

    def __init__(self, state_dir: Path, pid: str) -> None:
        super().__init__(
            f"fayd is running (pid {pid}) on {state_dir}: stop it first "
            "(sudo systemctl stop fayd, or Ctrl-C where fayd run runs)"
        )
        self.pid = pid


@contextlib.contextmanager
def daemon_stopped(state_dir: Path) -> Iterator[None]:
    """Hold the state folder's lock for the block; DaemonRunning when fayd holds it."""
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    new = not path.exists()
    try:
        handle = path.open("a+", encoding="utf-8")
    except PermissionError:  # the service's group may read it only: enough for a lock
        handle = path.open(encoding="utf-8")
    with handle:
        if new:  # made by a restore run as root: the daemon must still open it
            own_like_folder(path)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise DaemonRunning(state_dir, handle.read().strip() or "?") from None
        yield


def check_restorable(source: Path) -> None:
    """A sound fayd database of this fayd's schema or older, else StoreError."""
    damage = find_damage(source)
    if damage is not None:
        raise StoreError(
            f"{source} is damaged ({damage}): choose another (fayd restore lists them)"
        )
    try:
        with read_only(source) as conn:
            row = conn.execute("SELECT max(version) FROM _migrations").fetchone()
    except sqlite3.Error:
        raise StoreError(f"{source} is an SQLite database but not fayd's") from None
    if (row[0] or 0) > len(MIGRATIONS):
        raise StoreError(f"{source} was made by a newer fayd: upgrade fayd, then restore it")


def restore(state_dir: Path, db_path: Path, source: Path) -> dict[str, Any]:
    """Replace the database at ``db_path`` by a copy of ``source``; the one it replaces is
    moved to ``fayd.db.before-restore-YYYYmmdd-HHMMSS``. Refuses while fayd runs."""
    with daemon_stopped(state_dir):
        check_restorable(source)
        moved = None
        if any(os.path.lexists(p) for p in with_companions(db_path)):
            moved = move_aside(db_path, "before-restore")
        copy_in(source, db_path)
    return {"restored": str(source), "database": str(db_path), "moved": moved and str(moved)}


def kept_copies(db_path: Path) -> list[Path]:
    """Databases moved aside (damaged, or replaced by a restore), newest first."""
    found = [
        p
        for label in ("damaged", "before-restore")
        for p in db_path.parent.glob(f"{db_path.name}.{label}-*")
        if not p.name.endswith(("-wal", "-shm"))
    ]
    stamp = re.compile(r"\d{8}-\d{6}(-\d+)?$")  # when it was moved (move_aside)
    return sorted(found, key=lambda p: m[0] if (m := stamp.search(p.name)) else "", reverse=True)
