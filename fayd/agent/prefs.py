"""What a user asked fayd to keep doing, by voice: quiet hours ("don't talk to me after ten
at night"). Kept in SQLite (fayd.store.prefs_records) and, as a persistent rule, in the
user's memory, so the model knows it too. The reminders' scheduler obeys quiet hours."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time

from fayd.store import Store, prefs_records

QUIET = "quiet_hours"


@dataclass(frozen=True)
class QuietHours:
    start: time
    end: time

    def covers(self, at: time) -> bool:
        """``at`` is inside, also across midnight (22:00-07:00)."""
        if self.start <= self.end:
            return self.start <= at < self.end
        return at >= self.start or at < self.end


class Preferences:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def set_quiet_hours(self, user: str, hours: QuietHours) -> None:
        value = {"start": hours.start.strftime("%H:%M"), "end": hours.end.strftime("%H:%M")}
        await self.store.run(prefs_records.set_preference, user, QUIET, value)

    async def quiet_hours(self, user: str) -> QuietHours | None:
        value = await self.store.run(prefs_records.preference, user, QUIET)
        if not isinstance(value, dict):
            return None
        return QuietHours(time.fromisoformat(value["start"]), time.fromisoformat(value["end"]))
