"""One beat for the daemon's pollers (serial hot-plug, settings, MQTT keepalive, the idle
loop-lag sample): each sleeps until the next multiple of its period on the loop's clock,
so pollers with whole-second periods wake together, once, instead of each on its own.

Why: an idle daemon's CPU is its wake-ups. Each cost ~0.5-1 ms of CPU whatever it then
did (measured on a 2-core VM: caches gone cold in between), so four pollers on one wake-up
cost little more than one.
"""

from __future__ import annotations

import asyncio

#: A beat this close is taken as just passed (the loop may run a timer a hair early).
EPSILON_S = 0.001


def until_beat(period: float) -> float:
    """Seconds from now to the next multiple of ``period`` on the running loop's clock."""
    wait = period - asyncio.get_running_loop().time() % period
    return wait + period if wait < EPSILON_S else wait


class Pulse:
    """A long-lived component's proof of life: it calls :meth:`beat` at least every
    ``every_s`` seconds, also while idle (waking on the shared beat above), and the
    supervisor reports it ``stalled`` when the beats stop: a loop stuck on an await that
    never ends looks "running" otherwise. ``essential``: the systemd watchdog is fed only
    while it beats (fayd.service.daemon), so systemd restarts a daemon that hangs there."""

    def __init__(self, every_s: float, *, essential: bool = False) -> None:
        self.every_s = every_s
        self.essential = essential
        #: The loop's clock at the last beat (0: none yet).
        self.last = 0.0

    def beat(self) -> None:
        self.last = asyncio.get_running_loop().time()

    async def wait(self, event: asyncio.Event) -> bool:
        """Wait for ``event`` until the next beat is due; True if it is set. Cancellation
        safe (asyncio.timeout, not wait_for: see fayd.devices.sensors)."""
        try:
            async with asyncio.timeout(until_beat(self.every_s)):
                await event.wait()
        except TimeoutError:
            return False
        return True
