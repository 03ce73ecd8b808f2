"""Watches the event loop's health: how late a short sleep wakes up. A blocking call on the
loop (a model run that forgot its worker thread) shows up here as lag."""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable

import numpy as np

from fayd.beat import until_beat


class LoopLag:
    """Samples every ``interval_s`` while ``busy()`` says there is work (voice, turns), and
    every ``idle_interval_s`` otherwise: an idle daemon should sleep, and there is little
    to learn from the lag of a loop with nothing to do."""

    def __init__(
        self,
        interval_s: float = 0.25,
        keep: int = 1200,
        idle_interval_s: float = 2.0,
        busy: Callable[[], bool] = lambda: True,
    ) -> None:
        self.interval_s = interval_s
        self.idle_interval_s = idle_interval_s
        self.busy = busy
        #: (wall time, lag in ms) of the most recent wake-ups (1200 × 250 ms = 5 busy minutes).
        self.samples: collections.deque[tuple[float, float]] = collections.deque(maxlen=keep)

    async def run(self) -> None:
        while True:
            # Idle, it wakes with the other pollers (see fayd.beat).
            delay = self.interval_s if self.busy() else until_beat(self.idle_interval_s)
            due = time.perf_counter() + delay
            await asyncio.sleep(delay)
            late = time.perf_counter() - due
            self.samples.append((time.time(), max(0.0, late) * 1000))

    def summary(self, since: float = 0.0) -> dict[str, float]:
        """Percentiles of the lag measured after ``since`` (Unix time; 0 = all kept)."""
        values = np.array([lag for at, lag in self.samples if at >= since], dtype=np.float64)
        if not values.size:
            return {"samples": 0}
        return {
            "samples": int(values.size),
            "p50_ms": round(float(np.percentile(values, 50)), 2),
            "p99_ms": round(float(np.percentile(values, 99)), 2),
            "max_ms": round(float(values.max()), 2),
        }
