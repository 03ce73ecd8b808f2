"""The supervisor: each component is a long-lived task; a failed one is restarted with
exponential back-off; stop() cancels all and waits for them.

A component that fails the same way again and again is reported once: the first failure is
an error in the log (with its traceback when it is not one of fayd's own, explained errors),
each retry after that one line ("still failing (N times): reason") at the back-off times,
and ``fayd status`` shows it as ``failing`` with its reason until it has run for a while."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fayd.errors import FaydError

log = logging.getLogger(__name__)

STARTING, RUNNING, FAILING, FINISHED, STOPPED = (
    "starting",
    "running",
    "failing",
    "finished",
    "stopped",
)


@dataclass
class ComponentState:
    name: str
    #: starting, running, failing (waiting for its next try), finished or stopped.
    state: str = STARTING
    running: bool = False
    restarts: int = 0
    #: Failures in a row with the same reason; back to 0 once it has run for a while.
    failures: int = 0
    last_error: str = ""
    last_error_at: float = 0.0
    #: The back-off after the last failure, and when that try is (epoch seconds).
    retry_in_s: float = 0.0
    next_try_at: float = 0.0


class Supervisor:
    def __init__(
        self, min_backoff: float = 1.0, max_backoff: float = 120.0, healthy_after_s: float = 60.0
    ) -> None:
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        #: A component that runs this long after failing counts as recovered.
        self.healthy_after_s = healthy_after_s
        self.states: dict[str, ComponentState] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Called with (component, error text) whenever a component fails.
        self.on_failure: Callable[[str, str], None] | None = None

    def start(self, name: str, factory: Callable[[], Awaitable[None]]) -> None:
        """Run ``factory()`` as a component; restart it whenever it fails."""
        self.states[name] = ComponentState(name)
        self._tasks[name] = asyncio.create_task(self._guard(name, factory), name=name)

    async def _guard(self, name: str, factory: Callable[[], Awaitable[None]]) -> None:
        state = self.states[name]
        backoff = self.min_backoff
        while True:
            state.running, state.state = True, RUNNING
            started = time.monotonic()
            recovered = self._when_healthy(state) if state.failures else None
            try:
                await factory()
                state.state = FINISHED
                log.info("component %s finished", name)
                return
            except asyncio.CancelledError:
                state.state = STOPPED
                raise
            except Exception as exc:
                failure = exc
            finally:
                state.running = False
                if recovered is not None:
                    recovered.cancel()
            if time.monotonic() - started > self.healthy_after_s:
                backoff = self.min_backoff  # it had recovered: start over gently
            self._failed(state, failure, backoff)
            try:
                await asyncio.sleep(backoff)
            except asyncio.CancelledError:
                state.state = STOPPED
                raise
            backoff = min(backoff * 2, self.max_backoff)

    def _failed(self, state: ComponentState, exc: Exception, backoff: float) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        same = state.failures > 0 and reason == state.last_error
        state.failures = state.failures + 1 if same else 1
        state.restarts += 1
        state.last_error, state.last_error_at = reason, time.time()
        state.state, state.retry_in_s = FAILING, backoff
        state.next_try_at = state.last_error_at + backoff
        if self.on_failure:
            self.on_failure(state.name, reason)
        if state.failures == 1:
            # fayd's own errors and OS errors say what is wrong; anything else is a bug,
            # whose traceback is wanted once.
            explained = isinstance(exc, FaydError | OSError)
            log.error(
                "component %s failed: %s; next try in %.3g s",
                state.name,
                exc,
                backoff,
                exc_info=None if explained else exc,
            )
        else:
            log.info(
                "component %s still failing (%d times): %s; next try in %.3g s",
                state.name,
                state.failures,
                exc,
                backoff,
            )

    def _when_healthy(self, state: ComponentState) -> asyncio.TimerHandle:
        """After a failure: once the new run has lasted ``healthy_after_s``, say so and
        forget the failures (the handle is cancelled if it fails before)."""

        def healthy() -> None:
            log.info("component %s is running again after %d failures", state.name, state.failures)
            state.failures = 0

        return asyncio.get_running_loop().call_later(self.healthy_after_s, healthy)

    async def stop(self, grace_s: float = 10.0) -> None:
        """Cancel every component (in reverse start order) and wait for them."""
        for task in reversed(list(self._tasks.values())):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks.values(), timeout=grace_s)
        self._tasks.clear()

    def status(self) -> list[dict[str, object]]:
        return [vars(state).copy() for state in self.states.values()]
