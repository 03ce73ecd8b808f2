"""The size of a request's body, bounded before any route reads it (fayd.auth.HttpGuard).

A route reads its body whole (Starlette's ``request.json()``), so a body of 200 MB, token
or not, was 200 MB and more of the daemon's memory. The guard refuses a ``Content-Length``
over the route's limit without reading a byte, and reads any other body itself, counting,
up to the limit: over it, the request is refused there; within it, the route gets the body
as it came. Either refusal is a 413 with a JSON error (docs/security.md, "Quotas")."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

KIB = 1024
MIB = 1024 * KIB

Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class BodyLimits:
    """The largest body, in bytes, of a route family: the first pattern (a regular
    expression matched against the whole path) that matches, else ``default``."""

    default: int = 64 * KIB
    routes: tuple[tuple[str, int], ...] = ()

    def of(self, path: str) -> int:
        for pattern, limit in self.routes:
            if re.fullmatch(pattern, path):
                return limit
        return self.default


class TooLarge(Exception):
    """The body is over the route's limit; ``declared`` when its Content-Length said so."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        self.limit = limit
        self.declared = declared
        size = f"of {declared} bytes " if declared is not None else ""
        super().__init__(f"the body {size}is over this route's limit of {limit} bytes")


def declared_length(headers: dict[bytes, bytes]) -> int | None:
    """The request's Content-Length, or None when it has none (a chunked body). The HTTP
    server has already refused a malformed one."""
    raw = headers.get(b"content-length")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def has_body(headers: dict[bytes, bytes]) -> bool:
    return b"transfer-encoding" in headers or (declared_length(headers) or 0) > 0


def check_declared(headers: dict[bytes, bytes], limit: int) -> None:
    """TooLarge when the Content-Length is over ``limit``: refused before reading."""
    length = declared_length(headers)
    if length is not None and length > limit:
        raise TooLarge(limit, length)


async def read_within(receive: Receive, limit: int) -> Receive:
    """Reads the whole body, counting as it comes; returns a ``receive`` that gives it to
    the route in one message and then passes on (the server's later ``http.disconnect``).
    TooLarge once it is over ``limit``: the rest is never read (the server discards it)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the route hears so
            return _replay(b"", receive, message)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLarge(limit)
        parts.append(chunk)
        if not message.get("more_body", False):
            return _replay(b"".join(parts), receive)


def _replay(body: bytes, receive: Receive, last: dict[str, Any] | None = None) -> Receive:
    given = False

    async def replayed() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            if last is not None:
                return last
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
