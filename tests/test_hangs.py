"""No hangs on stop (issue 14): a long-lived loop that waits with a timeout must end when
it is cancelled, even when the cancel comes at the moment its wait ends.

On Python 3.11 ``asyncio.wait_for`` returns the inner result instead of raising when both
happen on one turn of the loop: the cancel is swallowed, the loop goes round again, and
whoever awaits the task (the supervisor's stop, a component's cleanup) waits for good. The
disk-full runs hit it when the hub failed again right after a restart: a wake and a cancel
together. These tests make that moment happen on purpose."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from fayd.devices import sensors
from fayd.devices.sensors import EventMemory
from fayd.store import Store

TRIALS = 20


async def _until_waiting(event: asyncio.Event) -> None:
    """Until a task waits on ``event`` (asyncio keeps its waiters in ``_waiters``)."""
    while not event._waiters:  # the one way to see a waiter
        await asyncio.sleep(0.001)


async def _wake_and_cancel(task: asyncio.Task[None], wake: asyncio.Event) -> bool:
    """Wake the task and cancel it on the same turn of the loop; True if it ended."""
    await _until_waiting(wake)
    wake.set()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2)
    return task in done


def test_the_trigger_swallows_a_cancel_in_wait_for() -> None:
    """The old pattern, to show the trigger below is the real race (fixed in 3.12)."""
    if sys.version_info >= (3, 12):
        pytest.skip("Python 3.12 rewrote wait_for on asyncio.timeout: no race to show")

    async def old_loop(wake: asyncio.Event) -> None:
        while True:
            try:
                await asyncio.wait_for(wake.wait(), 60)
            except TimeoutError:
                pass
            wake.clear()

    async def main() -> bool:
        wake = asyncio.Event()
        task = asyncio.create_task(old_loop(wake))
        ended = await _wake_and_cancel(task, wake)
        task.cancel()  # a second cancel, while it waits, does end it
        await asyncio.wait({task})
        return ended

    assert asyncio.run(main()) is False


def test_event_memory_stops_when_cancelled_as_it_wakes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sensors, "MEMORY_GATHER_S", 0.0)
    store = Store(tmp_path / "fayd.db")

    async def main() -> list[bool]:
        ended = []
        for _ in range(TRIALS):
            # No events are waiting, so the memory itself is never reached.
            memory = EventMemory(store, None, "ann")  # type: ignore[arg-type]
            task = asyncio.create_task(memory.run())
            ended.append(await _wake_and_cancel(task, memory._wake))
            if task.done():
                assert task.cancelled()
            task.cancel()
        return ended

    try:
        assert asyncio.run(main()) == [True] * TRIALS
    finally:
        store.close()
