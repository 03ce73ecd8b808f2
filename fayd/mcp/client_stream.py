"""A transport whose read stream reports its own end: how a supervisor learns at once that
a stdio server exited, even when no call is waiting on it (the SDK only fails the calls in
flight)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
from mcp.client._transport import ReadStream, Transport, TransportStreams


class _EndWatchingRead:
    """Passes every message through; calls ``on_end`` once the stream ends or is closed."""

    def __init__(self, inner: ReadStream[Any], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:  # the HTTP transport's per-message contextvars
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _EndWatchingRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _EndWatchingRead:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def watch_end(
    transport: Transport, on_end: Callable[[], None]
) -> AsyncIterator[TransportStreams]:
    async with transport as (read, write):
        yield _EndWatchingRead(read, on_end), write
