"""Room kept for the moment the disk fills: a reserve file, and fayd's rebuildable files.

When a write fails because the disk is full, :meth:`Reserve.release` deletes the reserve
file (``<state>/reserve``) and what fayd can make again (everything under
``<state>/cache``: the LLM's prompt cache, the example vectors, spoken-phrase audio), so the
next write — a care alert first of all — has room. The reserve is made again once the disk
has room (``fayd.service.disk``). A disk another program keeps filling takes that room too;
urgent alerts then go out from memory (``fayd.care.early``).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger(__name__)

RESERVE_FILE = "reserve"
CACHE_DIR = "cache"
MB = 1024 * 1024


class Reserve:
    def __init__(self, state_dir: Path, size_mb: int) -> None:
        self.path = state_dir / RESERVE_FILE
        self.cache = state_dir / CACHE_DIR
        self.size = size_mb * MB
        #: Times the reserve was given up to a full disk.
        self.released = 0

    @property
    def kept(self) -> bool:
        return self.size == 0 or self.path.exists()

    def keep(self) -> bool:
        """Make the reserve file when it is missing and the disk has room for it and as
        much again; True when it is there afterwards."""
        if self.kept:
            return True
        if shutil.disk_usage(self.path.parent).free < 2 * self.size:
            return False
        part = self.path.with_name(self.path.name + ".part")
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.posix_fallocate(fd, 0, self.size)  # real blocks, not a sparse file
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(part, self.path)
        except OSError as exc:
            part.unlink(missing_ok=True)
            if exc.errno != errno.ENOSPC:
                log.warning(
                    "could not keep a reserve of %d MB on the disk: %s", self.size // MB, exc
                )
            return False
        log.info("a reserve of %d MB is kept at %s for a full disk", self.size // MB, self.path)
        return True

    def release(self) -> int:
        """Free the reserve and the rebuildable files; the bytes freed (0: nothing left)."""
        freed = 0
        for path in [self.path, *_files_under(self.cache)]:
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                continue
            freed += size
        if freed:
            self.released += 1
            log.error(
                "the disk is full: fayd freed %.1f MB (its reserve and caches) to go on writing",
                freed / MB,
            )
        return freed


def _files_under(folder: Path) -> list[Path]:
    found = []
    for root, _dirs, files in os.walk(folder):
        found += [Path(root, name) for name in files]
    return found
