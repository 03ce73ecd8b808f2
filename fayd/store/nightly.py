"""The nightly backup (a supervisor component), and ``fayd backup`` through the daemon.

At ``backup.time`` (local: ``agent.timezone`` or the system's) the database is backed up
(fayd.store.backup) in a worker thread. A night that was missed (the box was off) is made
up a minute after the start; the backups folder itself says whether one was: the newest
backup's mtime against the latest scheduled time. A failed backup is logged, shown by
``fayd status``, and tried again an hour later; the good ones already there are kept.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from fayd.beat import until_beat
from fayd.config import BackupConfig
from fayd.errors import StoreError
from fayd.store.backup import list_backups, make_backup

log = logging.getLogger(__name__)

#: Longest sleep between looks at the clock (a suspended box or a clock change).
POLL_S = 60.0
#: A missed night is made up this long after the start, when the models are loaded.
CATCH_UP_S = 60.0
RETRY_S = 3600.0


def latest_slot(at: str, zone: tzinfo, now: float) -> float:
    """The scheduled time ``at`` ("HH:MM", local in ``zone``) at or before ``now``."""
    hour, minute = (int(part) for part in at.split(":"))
    local = datetime.fromtimestamp(now, zone)
    slot = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if slot.timestamp() > now:
        slot = (slot - timedelta(days=1)).replace(hour=hour, minute=minute)
    return slot.timestamp()


def next_slot(at: str, zone: tzinfo, now: float) -> float:
    latest = datetime.fromtimestamp(latest_slot(at, zone, now), zone)
    return (latest + timedelta(days=1)).timestamp()


class NightlyBackup:
    def __init__(
        self,
        db_path: Path,
        folder: Path,
        cfg: BackupConfig,
        zone: tzinfo,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db_path, self.folder, self.cfg, self.zone = db_path, folder, cfg, zone
        self._clock = clock
        self._lock = asyncio.Lock()
        self._stop = threading.Event()
        #: The last backup's report, or its error; shown by ``fayd status``.
        self.last: dict[str, Any] = {}
        self.next_at = 0.0

    async def backup_now(self) -> dict[str, Any]:
        """One backup now (one at a time); raises StoreError or OSError when it fails."""
        async with self._lock:
            day = datetime.fromtimestamp(self._clock(), self.zone).date()
            try:
                report = await asyncio.to_thread(
                    make_backup, self.db_path, self.folder, self.cfg.keep_days, day, self._stop
                )
            except (StoreError, OSError) as exc:
                self.last = {"ok": False, "at": self._clock(), "error": str(exc)}
                raise
            self.last = {"ok": True, "at": self._clock(), **report}
            return report

    def _first_due(self, now: float) -> float:
        made = list_backups(self.folder)
        newest = made[0].made if made else 0.0
        if newest < latest_slot(self.cfg.time, self.zone, now):  # a night was missed
            return now + CATCH_UP_S
        return next_slot(self.cfg.time, self.zone, now)

    async def run(self) -> None:
        """Back up at every scheduled time, for ever. Cancelling stops a copy under way."""
        self._stop.clear()
        try:
            due = self._first_due(self._clock())
            while True:
                self.next_at = due
                # The wall clock (suspend, a clock change) is looked at once a minute.
                while (wait := due - self._clock()) > 0:  # noqa: ASYNC110
                    await asyncio.sleep(min(wait, until_beat(POLL_S)))
                try:
                    await self.backup_now()
                    due = next_slot(self.cfg.time, self.zone, self._clock())
                except (StoreError, OSError) as exc:
                    due = self._clock() + RETRY_S
                    log.error("the nightly backup failed: %s; next try in 1 hour", exc)
        finally:
            self._stop.set()  # a copy still running in its thread stops at its next step

    def status(self) -> dict[str, Any]:
        made = list_backups(self.folder)
        return {
            "folder": str(self.folder),
            "count": len(made),
            "newest": str(made[0].path) if made else None,
            "newest_at": made[0].made if made else None,
            "next_at": self.next_at or None,
            "last": self.last,
        }
