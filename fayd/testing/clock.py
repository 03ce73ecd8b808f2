"""A clock for tests and benchmarks (``fayd.reminders.clock.Clock``): time stands still until
the test moves it (``set``/``advance``), or, with ``auto``, jumps straight to whatever a
sleeper waits for (a simulated week runs in seconds)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta


class SimClock:
    def __init__(self, start: datetime, auto: bool = False) -> None:
        assert start.tzinfo is not None
        self.t = start
        self.auto = auto
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self.t

    def set(self, when: datetime) -> None:
        self.t = when
        self._moved.set()

    def advance(self, **delta: float) -> None:
        self.set(self.t + timedelta(**delta))

    async def sleep_until(self, when: datetime) -> None:
        while self.t < when:
            if self.auto:
                self.t = when
                await asyncio.sleep(0)
                return
            self._moved.clear()
            await self._moved.wait()
