"""The scheduler's clock, a port (``Clock``): the real one, and one a test can move.

``SystemClock`` never sleeps more than ``MAX_SLEEP_S`` at once and looks at the time again
after each sleep, so a jump of the system clock (NTP setting a board without a battery-backed
clock at boot, or a person setting it) is noticed within that time, and the scheduler's own
records, not the sleep, decide what fires. ``offset_s`` moves it: only the test harness sets
it (``FAYD_TEST_CLOCK=1`` lets ``POST /test/clock`` change it; docs/reminders.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

MAX_SLEEP_S = 30.0


class Clock(Protocol):
    def now(self) -> datetime:
        """Now, timezone-aware (UTC)."""
        ...

    async def sleep_until(self, when: datetime) -> None:
        """Return at ``when`` or a little after (also earlier when the clock was moved)."""
        ...


class SystemClock:
    def __init__(self, offset_s: float = 0.0) -> None:
        self.offset_s = offset_s
        self._moved = asyncio.Event()
        self._watchers: list[Callable[[], None]] = []

    def on_move(self, watcher: Callable[[], None]) -> None:
        """Call ``watcher`` when a test moves the clock (another loop reading it looks now)."""
        self._watchers.append(watcher)

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.offset_s)

    def move(self, offset_s: float) -> None:
        """Tests only: the clock reads ``offset_s`` seconds ahead of the system's."""
        self.offset_s = offset_s
        self._moved.set()
        for watcher in self._watchers:
            watcher()

    async def sleep_until(self, when: datetime) -> None:
        left = (when - self.now()).total_seconds()
        if left <= 0:
            return
        self._moved.clear()
        try:
            async with asyncio.timeout(min(left, MAX_SLEEP_S)):
                await self._moved.wait()
        except TimeoutError:
            pass
