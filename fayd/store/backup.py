"""Backups of the database: made online with SQLite's backup API, verified, pruned.

A backup is ``<state>/backups/fayd-YYYYmmdd.db``, one self-contained file a day (a second
one the same day replaces the first). It is copied from a read-only connection of its own
that holds one read transaction: in WAL mode that blocks neither the store's writer nor
the event loop, and every step copies the same snapshot. (Steps without it start over
whenever the daemon writes: on a 237 MB database with a write every 50 ms the copy had not
finished after 10 minutes.) The copy is made under a temporary name, checked with
``PRAGMA quick_check``, and only then renamed into place and the oldest beyond ``keep``
removed: a failed or damaged backup never costs a good one.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from fayd.errors import StoreError
from fayd.store.health import (
    CHECK_BUDGET_S,
    advice,
    find_damage,
    read_only,
    sync_folder,
    sync_path,
    with_companions,
)

log = logging.getLogger(__name__)

FOLDER = "backups"
NAME = re.compile(r"^fayd-(\d{8})\.db$")
#: Pages copied per step (4 MB of 4 KiB pages), and the pause after each: the copy takes
#: turns with the writer's disk I/O instead of saturating an SD card.
STEP_PAGES = 1024
STEP_PAUSE_S = 0.01


@dataclass(frozen=True)
class Backup:
    path: Path
    day: date
    size: int
    #: When it was made (its file's mtime).
    made: float

    def describe(self) -> str:
        made = datetime.fromtimestamp(self.made).strftime("%Y-%m-%d %H:%M")
        return f"{self.path} (made {made}, {self.size / 2**20:.1f} MB)"


class Stopped(StoreError):
    """The backup was stopped (the daemon is stopping)."""


def folder_of(state_dir: Path) -> Path:
    return state_dir / FOLDER


def list_backups(folder: Path) -> list[Backup]:
    """The backups in ``folder``, newest first."""
    found = []
    for path in folder.glob("fayd-*.db") if folder.is_dir() else ():
        match = NAME.match(path.name)
        if not match:
            continue
        try:
            day = datetime.strptime(match[1], "%Y%m%d").date()
            st = path.stat()
        except (ValueError, OSError):
            continue
        found.append(Backup(path, day, st.st_size, st.st_mtime))
    return sorted(found, key=lambda b: (b.day, b.made), reverse=True)


def newest_good(folder: Path, budget_s: float = CHECK_BUDGET_S) -> Backup | None:
    """The newest backup that passes the integrity check (damaged ones are left alone)."""
    for backup in list_backups(folder):
        try:
            damage = find_damage(backup.path, budget_s)
        except StoreError as exc:
            damage = str(exc)
        if damage is None:
            return backup
        log.warning("the backup %s is damaged (%s): passed over", backup.path, damage)
    return None


def make_backup(
    db_path: Path,
    folder: Path,
    keep: int,
    day: date | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Back ``db_path`` up into ``folder`` as the backup of ``day`` (today), verify it, then
    keep the newest ``keep`` backups. Blocking: run it in a worker thread."""
    started = time.monotonic()
    day = day or date.today()
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True)
        own_like_folder(folder)
    for stale in folder.glob(".fayd-*.db.tmp*"):  # left by a crash or a power cut
        stale.unlink(missing_ok=True)
    _check_space(db_path, folder)
    final = folder / f"fayd-{day:%Y%m%d}.db"
    tmp = folder / f".{final.name}.tmp"
    try:
        _copy(db_path, tmp, stop)
        damage = find_damage(tmp)
        if damage is not None:
            raise StoreError(
                f"the new backup failed its check ({damage}): the database may be damaged "
                "(fayd checks it at its next start); the old backups are kept"
            )
        own_like_folder(tmp)
        os.replace(tmp, final)
        sync_folder(folder)
    except BaseException:
        for path in [*with_companions(tmp), tmp.with_name(tmp.name + "-journal")]:
            path.unlink(missing_ok=True)
        raise
    pruned = prune(folder, keep)
    seconds = round(time.monotonic() - started, 2)
    size = final.stat().st_size
    log.info("backup: %s (%.1f MB, verified) in %.1f s", final, size / 2**20, seconds)
    return {
        "path": str(final),
        "size": size,
        "verified": True,
        "seconds": seconds,
        "pruned": [str(p) for p in pruned],
        "kept": [str(b.path) for b in list_backups(folder)],
    }


def _check_space(db_path: Path, folder: Path) -> None:
    need = sum(p.stat().st_size for p in (db_path, Path(f"{db_path}-wal")) if p.exists())
    free = shutil.disk_usage(folder).free
    if free < need * 1.1:
        raise StoreError(
            f"no space for a backup in {folder}: it needs about {need / 2**20:.0f} MB and "
            f"{free / 2**20:.0f} MB are free"
        )


def _copy(db_path: Path, dest: Path, stop: threading.Event | None) -> None:
    def pause(status: int, remaining: int, total: int) -> None:
        if stop is not None and stop.is_set():
            raise Stopped("the backup was stopped")
        time.sleep(STEP_PAUSE_S)

    dst = sqlite3.connect(dest, isolation_level=None)
    try:
        with read_only(db_path) as src:
            # One read transaction for the whole copy: every step reads the same snapshot.
            src.execute("BEGIN")
            src.execute("SELECT count(*) FROM sqlite_master").fetchone()
            src.backup(dst, pages=STEP_PAGES, progress=pause)
            src.execute("COMMIT")
        # The copy keeps the source's WAL mode; a backup is one self-contained file.
        dst.execute("PRAGMA journal_mode=DELETE").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"the backup of {db_path} failed: {exc}; {advice(exc)}") from exc
    finally:
        dst.close()
    sync_path(dest)


def prune(folder: Path, keep: int) -> list[Path]:
    """Remove the backups beyond the newest ``keep``; returns the removed paths."""
    removed = []
    for old in list_backups(folder)[max(keep, 1) :]:
        old.path.unlink(missing_ok=True)
        removed.append(old.path)
        log.info("backup: removed %s (older than the newest %d)", old.path, keep)
    return removed


def copy_in(source: Path, db_path: Path) -> None:
    """Put a copy of ``source`` at ``db_path`` (which, with its WAL, must be gone already),
    durably, owned like its folder (a restore run with sudo must not lock the daemon out)."""
    tmp = db_path.with_name(db_path.name + ".restoring")
    shutil.copyfile(source, tmp)
    os.chmod(tmp, 0o600)
    own_like_folder(tmp)
    sync_path(tmp)
    os.replace(tmp, db_path)
    sync_folder(db_path.parent)


def own_like_folder(path: Path) -> None:
    """Give what root made (``sudo fayd backup``/``restore``) to the owner of its folder,
    the user fayd runs as, who must go on writing and removing it."""
    if os.geteuid() == 0:
        st = path.parent.stat()
        os.chown(path, st.st_uid, st.st_gid)
