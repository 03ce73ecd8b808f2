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
