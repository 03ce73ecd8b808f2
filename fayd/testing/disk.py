"""A small disk of its own, and filling it: for the full-disk test and benchmarks/chaos.py.
A tmpfs needs root to mount; callers say what to do without one."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path


class NoTmpfs(RuntimeError):
    """The tmpfs could not be mounted (not root, or no mount in this container)."""


@contextlib.contextmanager
def small_disk(folder: Path, size_mb: int) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` at ``folder`` (made), unmounted after."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise NoTmpfs(done.stderr.strip())
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Fill the filesystem to the last byte: big writes, then small ones."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        for size in (1 << 20, 4096, 512, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    return filler


def truncate_wal(db: Path) -> None:
    """Empty the WAL (its space is given back): the daemon's next commit must grow it."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()
