"""Live updates for the web page, as Server-Sent Events: an alert raised, acknowledged or
resolved, and a device coming online or going offline. Written by hand (a few lines of the
``text/event-stream`` format) rather than another dependency. Each open page has a bounded
queue; one that stops reading is dropped, never allowed to hold the daemon's memory."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: A comment line this often keeps proxies and phones from closing a quiet stream, and
#: lets a stream notice that its session ended.
KEEPALIVE_S = 15.0
QUEUE = 100
MAX_LISTENERS = 32


@dataclass(eq=False)
class Listener:
    session: str
    queue: asyncio.Queue[tuple[str, str] | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE)
    )


class Live:
    def __init__(self) -> None:
        self.listeners: set[Listener] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def publish(self, event: str, data: dict[str, Any]) -> None:
        """Tell every open page (from the loop's thread or any other)."""
        loop = self._loop
        if loop is None or not self.listeners:
            return
        line = json.dumps(data, ensure_ascii=False)
        if loop.is_running() and _on_thread_of(loop):
            self._put(event, line)
        else:
            loop.call_soon_threadsafe(self._put, event, line)

    def _put(self, event: str, line: str) -> None:
        for listener in list(self.listeners):
            try:
                listener.queue.put_nowait((event, line))
            except asyncio.QueueFull:  # a page that stopped reading: it reconnects
                self._drop(listener)

    def _drop(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        with contextlib.suppress(asyncio.QueueFull):
            listener.queue.put_nowait(None)

    def end_session(self, session: str) -> None:
        """A logout or a new password: that session's streams close."""
        for listener in [x for x in self.listeners if x.session == session]:
            self._drop(listener)

    async def stream(self, session: str, valid: Callable[[], bool]) -> AsyncIterator[bytes]:
        """The event stream of one page, until it goes or its session ends (``valid``
        is asked at each keepalive: a new password is noticed there)."""
        self._loop = asyncio.get_running_loop()
        if len(self.listeners) >= MAX_LISTENERS:
            self._drop(next(iter(self.listeners)))
        listener = Listener(session)
        self.listeners.add(listener)
        try:
            # The page reloads what it shows whenever a stream (re)opens: nothing is missed.
            yield b"event: hello\ndata: {}\n\n"
            while True:
                try:
                    async with asyncio.timeout(KEEPALIVE_S):
                        item = await listener.queue.get()
                except TimeoutError:
                    if not valid():
                        return
                    yield b": keepalive\n\n"
                    continue
                if item is None:
                    return
                event, line = item
                yield f"event: {event}\ndata: {line}\n\n".encode()
        finally:
            self.listeners.discard(listener)


def _on_thread_of(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
