from __future__ import annotations

import asyncio
import logging

from fayd.errors import LinkError
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


async def wait_until(check, within_s: float = 5.0) -> None:
    async with asyncio.timeout(within_s):
        while not check():
            await asyncio.sleep(0.005)


async def test_the_same_failure_is_reported_once_then_one_line_per_retry(caplog) -> None:
    runs = []

    async def broken() -> None:
        runs.append(1)
        raise ValueError("no such thing")

    sup = Supervisor(min_backoff=0.01, max_backoff=0.04)
    with caplog.at_level(logging.INFO, logger="fayd.service.supervisor"):
        sup.start("broken", broken)
        await wait_until(lambda: len(runs) >= 5)
        await sup.stop()
    [state] = sup.status()
    assert state["state"] == "stopped" and not state["running"]
    assert state["failures"] >= 4 and state["last_error"] == "ValueError: no such thing"
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # One error with the traceback (not one of fayd's own explained errors)…
    assert len(errors) == 1 and errors[0].exc_info is not None
    assert "component broken failed: no such thing" in errors[0].getMessage()
    # …then one line per retry, without a traceback.
    retries = [r for r in caplog.records if "still failing" in r.getMessage()]
    assert retries and all(r.exc_info is None for r in retries)
    assert "still failing (2 times): no such thing" in retries[0].getMessage()


async def test_back_off_doubles_up_to_its_limit_and_status_says_failing() -> None:
    backoffs: list[float] = []
    sup = Supervisor(min_backoff=0.01, max_backoff=0.04)

    def seen(name: str, error: str) -> None:
        backoffs.append(sup.states[name].retry_in_s)

    async def broken() -> None:
        raise LinkError("broker at 127.0.0.1:1 did not start listening")

    sup.on_failure = seen
    sup.start("broker", broken)
    await wait_until(lambda: len(backoffs) >= 5)
    [state] = sup.status()
    await sup.stop()
    assert backoffs[:5] == [0.01, 0.02, 0.04, 0.04, 0.04]
    assert state["state"] in ("failing", "running")  # between tries, or in one
    assert state["last_error"] == "LinkError: broker at 127.0.0.1:1 did not start listening"


async def test_a_new_reason_is_reported_again_and_recovery_is_logged(caplog) -> None:
    reasons = iter(["first", "first", "second"])
    runs = []

    async def flaky() -> None:
        runs.append(1)
        reason = next(reasons, None)
        if reason:
            raise LinkError(reason)
        await asyncio.Event().wait()

    sup = Supervisor(min_backoff=0.01, max_backoff=0.02, healthy_after_s=0.05)
    with caplog.at_level(logging.INFO, logger="fayd.service.supervisor"):
        sup.start("link", flaky)
        await wait_until(lambda: sup.states["link"].running and len(runs) == 4)
        await wait_until(lambda: sup.states["link"].failures == 0)
        await sup.stop()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert [e.split(";")[0] for e in errors] == [
        "component link failed: first",
        "component link failed: second",
    ]
    # fayd's own errors explain themselves: no traceback.
    assert all(r.exc_info is None for r in caplog.records)
    assert any("running again after 1 failures" in r.getMessage() for r in caplog.records)
