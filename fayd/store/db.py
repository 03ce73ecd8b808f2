"""The one SQLite database: WAL, migrations, and a single writer thread.

Every statement runs on one dedicated thread (the single writer), so the event loop never
blocks on disk and no two writers contend. ``synchronous=NORMAL`` in WAL mode keeps every
committed transaction across a process kill (kill -9); only a power cut can lose the last
few, which is SQLite's documented trade-off for SD cards.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from fayd.errors import StoreError
from fayd.store.health import advice
from fayd.store.migrations import MIGRATIONS, apply_migrations

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Bytes a WAL is cut back to after a checkpoint.
WAL_LIMIT = 4 * 1024 * 1024


class Store:
    """Owns the connection; callers pass functions of a ``sqlite_utils.Database``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fayd-db")
        self._db: sqlite_utils.Database | None = None
        #: Called (on the writer thread) when a write finds the disk full; it frees room and
        #: says how many bytes (fayd.store.reserve), and the write is tried once more.
        self.on_full: Callable[[], int] | None = None
        try:
            self._executor.submit(self._open).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            # A WAL grown by a burst is cut back after its checkpoint: on a small card its
            # space is wanted back (a full disk).
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
            conn.execute("PRAGMA foreign_keys=ON")
            self._db = sqlite_utils.Database(conn)
            apply_migrations(self._db, MIGRATIONS)
        except sqlite3.Error as exc:
            why = f"{exc}; {advice(exc)}"
            raise StoreError(f"cannot open the database {self.path}: {why}") from exc
        except OSError as exc:
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(db, *args)`` on the writer thread and wait (for the CLI and threads)."""
        return self._executor.submit(self._run, fn, *args).result()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Start ``fn(db, *args)`` on the writer thread; the caller does other work (e.g. a
        model run that releases the GIL) and then waits on the future."""
        return self._executor.submit(self._run, fn, *args)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(db, *args)`` on the writer thread without blocking the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, fn, *args)

    def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._db is None:
            raise StoreError("the database is closed")
        try:
            return self._atomic(fn, *args)
        except sqlite3.Error as exc:
            if not (_is_full(exc) and self.on_full is not None and self.on_full()):
                raise StoreError(f"{self.path}: {exc}") from exc
        try:  # room was made: once more
            return self._atomic(fn, *args)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def _atomic(self, fn: Callable[..., T], *args: Any) -> T:
        assert self._db is not None
        with self._db.atomic():
            return fn(self._db, *args)

    def close(self) -> None:
        def _close() -> None:
            if self._db is not None:
                self._db.conn.close()
                self._db = None

        self._executor.submit(_close).result()
        self._executor.shutdown(wait=True)


def _is_full(exc: sqlite3.Error) -> bool:
    """A write the disk had no room for (a WAL index that could not grow is one too)."""
    code = getattr(exc, "sqlite_errorcode", 0) or 0
    return code & 0xFF == sqlite3.SQLITE_FULL or code == sqlite3.SQLITE_IOERR_SHMSIZE
