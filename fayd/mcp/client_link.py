"""One external MCP server kept alive: a long-lived task that starts (stdio) or reaches
(HTTP) it, lists its tools, health-checks it, and after any fault starts it again with an
exponential back-off. Calls come from other tasks and only borrow the live session.

Faults that end a session: the server's stream ends (it exited or crashed), it writes
something that is not MCP, a tool call finds the connection gone, or it does not answer a
health check (a tools/list) within ``timeout_s`` -- checked every ``health_every_s`` and at
once after a call timed out, so a server that froze is restarted while a tool that is
merely slow leaves the server alone.

The transport's shielded shutdown stops a stdio server (stdin closed, then SIGTERM and
SIGKILL to its process group; fayd.mcp.client_stdio): everything here is cancelled through
anyio, never with a native ``Task.cancel()``, which could cut that shutdown short and
orphan the child.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from fayd.mcp.client_config import McpServerConfig
from fayd.mcp.client_faults import describe_fault
from fayd.mcp.client_stdio import MessageTooLarge, capped_stdio_client
from fayd.mcp.client_stream import watch_end

log = logging.getLogger("fayd.mcp.client")

#: At most this many pages of tools/list: a server that pages forever cannot hang a start.
_MAX_PAGES = 20


class ServerLink:
    """The supervisor of one server. ``run()`` is its task; ``client`` is the live session
    (None while it is down), ``tools`` the allowed tools of its last listing."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.state = "starting"  # then "up" / "down"; "stopped" after stop()
        self.reason = ""
        self.last_error = ""
        self.restarts = 0
        self.since = time.time()
        self.client: Client | None = None
        self.tools: dict[str, types.Tool] = {}
        self.offered: frozenset[str] = frozenset()
        self.missing: tuple[str, ...] = ()
        self.first_try_done = asyncio.Event()
        self._wake = asyncio.Event()
        self._fault = ""
        self._http_status = 0

    # --- for the callers ------------------------------------------------------------------

    def fault(self, reason: str) -> None:
        """End the live session now (it will be restarted): the connection is unusable."""
        if not self._fault:  # the first reason is the cause; later ones are its echoes
            self._fault = self.last_error = reason
        self._wake.set()

    def suspect(self, why: str) -> None:
        """Health-check the server now (a call timed out: slow tool, or a frozen server?)."""
        self.last_error = why
        self._wake.set()

    def status(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "name": cfg.name,
            "transport": cfg.transport,
            "state": self.state,
            "reason": self.reason,
            "since": self.since,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "tools": sorted(self.tools),
            "missing": list(self.missing),
            "trusted": cfg.trusted,
        }

    # --- the supervisor task --------------------------------------------------------------

    async def run(self) -> None:
        delay = self.config.backoff_s
        try:
            while True:
                began = anyio.current_time()
                reason = await self._session()
                self._set_down(reason)
                if anyio.current_time() - began >= self.config.backoff_max_s:
                    delay = self.config.backoff_s  # it ran a good while: a fresh fault
                await anyio.sleep(delay)
                delay = min(delay * 2, self.config.backoff_max_s)
                self.restarts += 1
        finally:
            self.client = None
            self.state = "stopped"
            self.first_try_done.set()

    async def _session(self) -> str:
        """Run one connection until it fails; return why. Stopping cancels it instead."""
        cfg = self.config
        self._fault = ""
        self._wake.clear()
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + cfg.connect_timeout_s) as start:
                async with AsyncExitStack() as stack:
                    client = await self._connect(stack)
                    await self._list_tools(client)
                    start.deadline = math.inf  # started: from now on health checks judge it
                    self._set_up(client)
                    try:
                        return await self._watch(client)
                    finally:
                        self.client = None
            return f"no answer within {cfg.connect_timeout_s:g} s while starting"
        except Exception as exc:  # a server's every failure to start is its own, never ours
            return describe_fault(exc, cfg, self._http_status)

    async def _connect(self, stack: AsyncExitStack) -> Client:
        cfg = self.config
        if cfg.command:
            params = StdioServerParameters(
                command=cfg.command[0], args=list(cfg.command[1:]), env=cfg.env or None
            )
            transport = capped_stdio_client(params, cfg.max_message_mb * 2**20)
        else:
            http = await stack.enter_async_context(self._http_client())
            transport = streamable_http_client(cfg.url, http_client=http)
        client = Client(
            watch_end(transport, lambda: self.fault("the server closed the connection")),
            message_handler=self._on_message,
            cache=None,  # health checks must reach the server, not a cached listing
            client_info=types.Implementation(name="fayd", version="1"),
        )
        return await stack.enter_async_context(client)

    def _http_client(self) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {self.config.token}"} if self.config.token else {}

        async def remember_status(response: httpx2.Response) -> None:
            self._http_status = response.status_code

        self._http_status = 0
        return httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(self.config.connect_timeout_s, read=None),
            trust_env=False,  # a LAN server directly, never a proxy from the environment
            event_hooks={"response": [remember_status]},
        )

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, MessageTooLarge):
            self.fault(f"the server sent {message}")
        elif isinstance(message, Exception):  # a line that is not JSON-RPC, a broken stream
            self.fault(f"the server sent something that is not MCP: {_first_error(message)}")

    async def _list_tools(self, client: Client) -> None:
        cfg = self.config
        listed: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self.offered = frozenset(t.name for t in listed)
        self.tools = {t.name: t for t in listed if cfg.allows(t.name)}
        missing = tuple(a for a in cfg.allow if a != "*" and a not in self.offered)
        if missing != self.missing and missing:
            log.warning("MCP server %s has no tool %s (allow-list)", cfg.name, ", ".join(missing))
        self.missing = missing

    async def _watch(self, client: Client) -> str:
        cfg = self.config
        while True:
            with anyio.move_on_after(cfg.health_every_s):
                await self._wake.wait()
            self._wake.clear()
            if self._fault:
                return self._fault
            with anyio.move_on_after(cfg.timeout_s) as check:
                try:
                    await self._list_tools(client)
                except Exception as exc:  # the check's only job is to find this out
                    return describe_fault(exc, cfg, self._http_status)
            if check.cancelled_caught:
                return f"no answer to a health check within {cfg.timeout_s:g} s (frozen?)"
            if self._fault:
                return self._fault

    # --- state changes, logged once each --------------------------------------------------

    def _set_up(self, client: Client) -> None:
        self.client = client
        self.state, self.reason, self.since = "up", "", time.time()
        log.info("MCP server %s up: %d tools allowed", self.config.name, len(self.tools))
        self.first_try_done.set()

    def _set_down(self, reason: str) -> None:
        self.last_error = reason
        if self.state != "down":
            log.warning("MCP server %s down: %s", self.config.name, reason)
            self.state, self.since = "down", time.time()
        else:
            log.debug("MCP server %s still down: %s", self.config.name, reason)
        self.reason = reason
        self.first_try_done.set()


def _first_error(exc: Exception) -> str:
    """One line about a parse failure (pydantic's own message spans several)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        shown = first.get("input", "")
        if isinstance(shown, bytes):
            shown = shown.decode("utf-8", "replace")
        return f"{first.get('msg', '')}: {str(shown)[:80]!r}"
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
