"""The supervisor: each component is a long-lived task; a failed one is restarted with
back-off and reported; stop() cancels all and waits for them."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass
class ComponentState:
    name: str
    running: bool = False
    restarts: int = 0
    last_error: str = ""
    last_error_at: float = 0.0


class Supervisor:
    def __init__(self, min_backoff: float = 1.0, max_backoff: float = 30.0) -> None:
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
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
            state.running = True
            started = time.monotonic()
            try:
                await factory()
                log.info("component %s finished", name)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                state.last_error = f"{type(exc).__name__}: {exc}"
                state.last_error_at = time.time()
                state.restarts += 1
                if self.on_failure:
                    self.on_failure(name, state.last_error)
                # A component that ran for a while before failing starts over gently.
                if time.monotonic() - started > 60:
                    backoff = self.min_backoff
                log.error(
                    "component %s failed: %s; restart in %.0f s",
                    name,
                    exc,
                    backoff,
                    exc_info=not isinstance(exc, OSError),
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff)
            finally:
                state.running = False

    async def stop(self, grace_s: float = 10.0) -> None:
        """Cancel every component (in reverse start order) and wait for them."""
        for task in reversed(list(self._tasks.values())):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks.values(), timeout=grace_s)
        self._tasks.clear()

    def status(self) -> list[dict[str, object]]:
        return [vars(state).copy() for state in self.states.values()]
