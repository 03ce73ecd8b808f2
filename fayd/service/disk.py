"""The state folder's disk: how much is free, what fayd keeps on it, and a warning before it
is full (``paths.disk_warn_mb`` / ``paths.disk_warn_percent``). Crossing the threshold is
said once — in the log, as an ``alert`` frame to every device and as a notification to every
caregiver — and again only after the disk has had room for a while; ``fayd status`` shows it
all along. While the disk has room, the reserve (fayd.store.reserve) is kept."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from fayd.protocol import Alert
from fayd.store.backup import folder_of
from fayd.store.reserve import Reserve

log = logging.getLogger(__name__)

#: How often the free space is looked at.
CHECK_S = 5.0
#: The caregivers are told of a full disk at most this often (a disk at the edge comes and
#: goes).
TELL_AGAIN_S = 6 * 3600.0
#: Journald's folder: counted as fayd's logs when it is on the state folder's disk.
JOURNAL = Path("/var/log/journal")
MB = 1024 * 1024


def size_of(path: Path) -> int:
    """Bytes in a file, or in every file under a folder (0 when it is not there)."""
    try:
        if path.is_file():
            return path.stat().st_size
        total = 0
        for root, _dirs, files in os.walk(path):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:  # removed meanwhile
                    pass
        return total
    except OSError:
        return 0


class DiskWatch:
    def __init__(
        self,
        state_dir: Path,
        warn_mb: int,
        warn_percent: float,
        model_files: Callable[[], Iterable[str]],
        raise_alert: Callable[[Alert], None],
        reserve: Reserve | None = None,
        tell_caregivers: Callable[[str, str], Awaitable[int]] | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.warn_mb = warn_mb
        self.warn_percent = warn_percent
        self.model_files = model_files
        self.raise_alert = raise_alert
        self.reserve = reserve
        self.tell_caregivers = tell_caregivers
        #: The last warning's words, for the caregivers (sent from the loop).
        self._untold: str | None = None
        self._released_seen = 0
        self._told_at = -TELL_AGAIN_S
        #: The disk is under the threshold now (warned once per crossing).
        self.low = False
        self.alerts = 0

    def free(self) -> tuple[int, int]:
        """(free bytes, total bytes) of the state folder's filesystem."""
        usage = shutil.disk_usage(self.state_dir)
        return usage.free, usage.total

    def is_low(self, free: int, total: int) -> bool:
        return free < self.warn_mb * MB or free < total * self.warn_percent / 100

    def using(self) -> dict[str, int]:
        """Bytes fayd keeps on the state folder's disk, by kind."""
        state = self.state_dir
        db = sum(size_of(state / f"fayd.db{end}") for end in ("", "-wal", "-shm"))
        device = _device(state)
        models = sum(
            size_of(Path(f)) for f in set(self.model_files()) if _device(Path(f)) == device
        )
        logs = sum(size_of(p) for p in state.glob("*.log"))
        if _device(JOURNAL) == device:
            logs += size_of(JOURNAL)
        return {
            "db": db,
            "backups": size_of(folder_of(state)),
            "logs": logs,
            "models": models,
            "cache": size_of(state / "cache"),
            "reserve": size_of(self.reserve.path) if self.reserve else 0,
        }

    def status(self) -> dict[str, Any]:
        try:
            free, total = self.free()
        except OSError as exc:
            return {"error": f"cannot look at the disk: {exc}"}
        return {
            "free_mb": round(free / MB, 1),
            "total_mb": round(total / MB, 1),
            "warn_below_mb": self.warn_mb,
            "warn_below_percent": self.warn_percent,
            "low": self.is_low(free, total),
            "reserve_kept": self.reserve.kept if self.reserve else None,
            "reserve_released": self.reserve.released if self.reserve else 0,
            "using_mb": {k: round(v / MB, 1) for k, v in self.using().items()},
        }

    def check(self) -> None:
        free, total = self.free()
        low = self.is_low(free, total)
        # The reserve given up to a full disk: it was full, whatever is free now.
        released = self.reserve is not None and self.reserve.released > self._released_seen
        if released and self.reserve is not None:
            self._released_seen = self.reserve.released
        if (low or released) and not self.low:
            self._warn(free, released)
        elif not low and self.low:
            log.warning("the disk has room again: %.0f MB free", free / MB)
        if not low and self.reserve is not None:
            self.reserve.keep()
        self.low = low or released

    async def run(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self.check)
            except OSError as exc:  # the folder went away or the disk fails: say so, go on
                log.error("could not look at the disk's free space: %s", exc)
            if self._untold is not None and self.tell_caregivers is not None:
                text, self._untold = self._untold, None
                reached = await self.tell_caregivers("fayd: the disk is nearly full", text)
                log.warning("the full disk was told to %d caregivers", reached)
            await asyncio.sleep(CHECK_S)

    def _warn(self, free: int, was_full: bool) -> None:
        using = ", ".join(
            f"{k} {v / MB:.1f} MB" for k, v in self.using().items() if round(v / MB, 1)
        )
        how = "was full (fayd gave up its reserve)" if was_full else "is nearly full"
        text = (
            f"The disk {how}: {free / MB:.1f} MB free on {self.state_dir}"
            f" (fayd uses {using or 'nothing yet'})"
        )
        log.warning("%s", text)
        if time.monotonic() - self._told_at > TELL_AGAIN_S:
            self._told_at = time.monotonic()
            self._untold = (
                f"{text}. Care alerts still reach you, but new readings and conversations "
                "may not be kept until there is room: free some space on the box."
            )
        self.alerts += 1
        now = time.time()
        self.raise_alert(
            Alert(
                id=f"disk-{int(now)}",
                kind="disk",
                severity="warning",
                text=text,
                at=now,
                detail={"free_mb": round(free / MB, 1)},
            )
        )


def _device(path: Path) -> int | None:
    try:
        return path.stat().st_dev
    except OSError:
        return None
