"""The supervisor: each component is a long-lived task; a failed one is restarted with
exponential back-off; stop() cancels all and waits for them.

A component that fails the same way again and again is reported once: the first failure is
an error in the log (with its traceback when it is not one of fayd's own, explained errors),
each retry after that one line ("still failing (N times): reason") at the back-off times,
and ``fayd status`` shows it as ``failing`` with its reason until it has run for a while.

A component started with a :class:`fayd.beat.Pulse` proves it is alive by beating; one
that runs but has not beaten for STALL_AFTER of its periods is ``stalled`` (a loop stuck on
an await that never ends), and :func:`feed_watchdog` stops feeding systemd's watchdog while
an essential one is, so systemd restarts the hung daemon."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fayd.beat import Pulse
from fayd.errors import FaydError

log = logging.getLogger(__name__)

STARTING, RUNNING, STALLED, FAILING, FINISHED, STOPPED = (
    "starting",
    "running",
    "stalled",
    "failing",
    "finished",
    "stopped",
)
#: Periods without a beat before a running component is called stalled (one period is
#: the component's promise; the second is slack for a loaded machine).
STALL_AFTER = 2.0


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
        self._pulses: dict[str, Pulse] = {}
        #: Called with (component, error text) whenever a component fails.
        self.on_failure: Callable[[str, str], None] | None = None

    def start(
        self, name: str, factory: Callable[[], Awaitable[None]], pulse: Pulse | None = None
    ) -> None:
        """Run ``factory()`` as a component; restart it whenever it fails. ``pulse``: the
        one the component beats, when it does."""
        self.states[name] = ComponentState(name)
        if pulse is not None:
            self._pulses[name] = pulse
        self._tasks[name] = asyncio.create_task(self._guard(name, factory), name=name)

    async def _guard(self, name: str, factory: Callable[[], Awaitable[None]]) -> None:
        state = self.states[name]
        backoff = self.min_backoff
        pulse = self._pulses.get(name)
        while True:
            state.running, state.state = True, RUNNING
            if pulse is not None:
                pulse.beat()  # a (re)started component has not had time to beat
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

    def stalled(self, essential_only: bool = False) -> dict[str, float]:
        """Running components whose beats have stopped: name → seconds since the last."""
        now = asyncio.get_running_loop().time()
        found = {}
        for name, pulse in self._pulses.items():
            age = now - pulse.last
            if (
                self.states[name].running
                and age > STALL_AFTER * pulse.every_s
                and (pulse.essential or not essential_only)
            ):
                found[name] = round(age, 1)
        return found

    def status(self) -> list[dict[str, object]]:
        stalled = self.stalled()
        now = asyncio.get_running_loop().time()
        found = []
        for name, state in self.states.items():
            row: dict[str, object] = vars(state).copy()
            pulse = self._pulses.get(name)
            if pulse is not None:
                row["beat_age_s"] = round(now - pulse.last, 1)
                row["beat_every_s"] = pulse.every_s
            if name in stalled:
                row["state"] = STALLED
            found.append(row)
        return found


async def feed_watchdog(supervisor: Supervisor, ping: Callable[[], bool], interval: float) -> None:
    """systemd's watchdog, pinged every ``interval`` seconds from the event loop (a blocked
    loop stops the pings) while every essential component beats (a hung one stops them
    too): systemd then restarts fayd."""
    withheld = False
    while True:
        stalled = supervisor.stalled(essential_only=True)
        if not stalled:
            ping()
            if withheld:
                log.warning("every essential component beats again: watchdog fed again")
            withheld = False
        elif not withheld:
            withheld = True
            which = ", ".join(f"{n} (no beat for {age:g} s)" for n, age in stalled.items())
            log.error("stalled: %s; the systemd watchdog is no longer fed", which)
        await asyncio.sleep(interval)
