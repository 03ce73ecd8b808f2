from __future__ import annotations

import asyncio

from fayd.service.supervisor import Supervisor


async def test_a_failed_component_is_restarted_and_reported() -> None:
    runs = []
    failures = []

    async def flaky() -> None:
        runs.append(1)
        if len(runs) < 3:
            raise RuntimeError(f"boom {len(runs)}")
        await asyncio.Event().wait()

    sup = Supervisor(min_backoff=0.01, max_backoff=0.02)
    sup.on_failure = lambda name, error: failures.append((name, error))
    sup.start("flaky", flaky)
    async with asyncio.timeout(5):
        while len(runs) < 3:
            await asyncio.sleep(0.01)
    [state] = sup.status()
    assert state["restarts"] == 2 and state["running"]
    assert "boom 2" in state["last_error"]
    assert failures == [("flaky", "RuntimeError: boom 1"), ("flaky", "RuntimeError: boom 2")]
    await sup.stop()
    assert not sup.status()[0]["running"]


async def test_stop_cancels_and_awaits_every_component() -> None:
    cleaned = []

    async def worker(name: str) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append(name)

    sup = Supervisor()
    for name in ("a", "b", "c"):
        sup.start(name, lambda n=name: worker(n))
    await asyncio.sleep(0.01)
    await sup.stop()
    assert cleaned == ["c", "b", "a"]  # reverse start order
