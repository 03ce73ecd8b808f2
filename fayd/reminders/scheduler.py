"""The scheduler: one supervised task that fires reminders at their minute and asks
medication check-ins again, on an injectable clock (``fayd.reminders.clock.Clock``).

Each round asks the database only for what is due (a partial index on ``next_at``) and for
the soonest next time, then sleeps until then (or until a change wakes it): thousands of
reminders cost one indexed query a round. A fire is one transaction (the reminder moves on,
an announcement is kept), so a restart, a kill -9 or a clock that jumps back can never fire
it twice; what was due while fayd was down (or before a clock jumped forward) fires once,
late, saying so. A row that cannot be read is marked broken, logged and counted
(``fayd status``), and the rest go on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from fayd.beat import Pulse
from fayd.logwords import words
from fayd.reminders import queue, records
from fayd.reminders.clock import Clock
from fayd.store import Store

log = logging.getLogger(__name__)

#: Reminders fired per transaction (more wait for the next round, at once).
BATCH = 500
#: The scheduler looks again at least this often (and beats its pulse).
IDLE_S = 60.0

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
CareEvent = Callable[[dict[str, Any]], None]


class Scheduler:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        deliver: Deliver,
        checks: queue.Settings = queue.DEFAULTS,
        on_care_event: CareEvent | None = None,
    ) -> None:
        """``deliver`` takes each new announcement (it is already kept in the database);
        ``on_care_event`` hears each unconfirmed medication (the care engine)."""
        self.store = store
        self.clock = clock
        self.deliver = deliver
        self.checks = checks
        self.on_care_event = on_care_event
        self.pulse = Pulse(IDLE_S * 2, essential=False)
        self._wake = asyncio.Event()
        self.fired = 0
        self.broken = 0
        self.care_events = 0

    def wake(self) -> None:
        """A reminder was added, cancelled or snoozed: look again now."""
        self._wake.set()

    async def run(self) -> None:
        self.broken = await self.store.run(records.broken)
        if self.broken:
            log.error(
                "%d reminders are broken and skipped (fayd reminders list --all)", self.broken
            )
        while True:
            self.pulse.beat()
            self._wake.clear()
            if await self.round() >= BATCH:
                continue
            soonest = await self.store.run(records.next_time)
            now = self.clock.now()
            until = now + timedelta(seconds=IDLE_S)
            if soonest is not None:
                until = min(until, datetime.fromtimestamp(soonest, UTC))
            await self._sleep(until)

    async def round(self) -> int:
        """Fire what is due now; how many reminders fired."""
        now = self.clock.now().timestamp()
        made, broke = await self.store.run(records.take_due, now, BATCH, self.checks)
        asked, events = await self.store.run(queue.take_checkins, now, self.checks)
        if broke:
            self.broken += broke
            log.error("%d reminders could not be read and were marked broken", broke)
        for event in events:
            self.care_events += 1
            log.warning(
                "medication not confirmed by %s: reminder %s (%s)",
                event["user"],
                event.get("reminder"),
                words(event["what"]),
            )
            log.debug("reminder %s's words: %s", event.get("reminder"), words(event["what"]))
            if self.on_care_event is not None:
                self.on_care_event(event)
        self.fired += len(made)
        for item in [*made, *asked]:
            await self.deliver(item)
        return len(made)

    async def _sleep(self, until: datetime) -> None:
        if self._wake.is_set():
            return
        sleeper = asyncio.ensure_future(self.clock.sleep_until(until))
        waker = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, waker):
                task.cancel()
            await asyncio.gather(sleeper, waker, return_exceptions=True)

    def status(self) -> dict[str, Any]:
        return {"fired": self.fired, "broken": self.broken, "unconfirmed": self.care_events}
