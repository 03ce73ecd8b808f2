"""fayd's MCP client: the household's own MCP servers as tools for the agent.

Each configured server (:class:`~fayd.mcp.client_config.McpServerConfig`) is kept alive by
its own supervisor task (:class:`~fayd.mcp.client_link.ServerLink`); its allowed tools are
offered as ``<server>__<tool>``. The double underscore, not a dot: a LAN model's tool
calling (OpenAI-style) accepts only ``[A-Za-z0-9_-]{1,64}`` as a function name.

    async with McpTools(parse_servers(cfg["mcp"]["servers"])) as tools:
        tools.describe()                  # [{"name", "description", "schema", "trusted"}]
        await tools.call("time__get_current_time", {"timezone": "Europe/London"})
        tools.status()                    # for `fayd status`

``call`` never raises for a server's fault: the answer is a ToolResult with ``error`` set.
Only the tools of servers that are up are described, so the model is not offered a tool
that cannot answer; a call to a down server's tool says it is down.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import anyio
import jsonschema
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INVALID_PARAMS

from fayd.mcp.client_config import McpServerConfig
from fayd.mcp.client_link import ServerLink
from fayd.mcp.client_port import (
    BAD_ARGUMENTS,
    NOT_ALLOWED,
    SERVER_DOWN,
    TIMED_OUT,
    TOOL_FAILED,
    UNKNOWN_TOOL,
    ExternalTools,
    ToolResult,
)
from fayd.mcp.client_result import arguments_problem, content_text

SEPARATOR = "__"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def exposed_name(server: str, tool: str) -> str | None:
    """``server__tool``, or None when the tool's own name cannot be offered to a model."""
    name = f"{server}{SEPARATOR}{tool}"
    return name if _NAME.match(name) else None


__all__ = ["ExternalTools", "McpTools", "ToolResult", "exposed_name"]


class McpTools:
    """Every configured server's allowed tools, behind one ``describe``/``call``/``status``
    (the :class:`~fayd.mcp.client_port.ExternalTools` port)."""

    def __init__(self, servers: Sequence[McpServerConfig]) -> None:
        self._links = {config.name: ServerLink(config) for config in servers}
        self._runner: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None

    async def start(self) -> None:
        """Start every server's supervisor; returns at once (servers come up on their own)."""
        if self._runner is not None:
            raise RuntimeError("McpTools already started")
        running = asyncio.Event()
        self._runner = asyncio.create_task(self._run(running), name="mcp-client")
        await running.wait()

    async def _run(self, running: asyncio.Event) -> None:
        async with anyio.create_task_group() as group:
            self._scope = group.cancel_scope
            for name, link in self._links.items():
                group.start_soon(link.run, name=f"mcp-server-{name}")
            running.set()

    async def wait_started(self, timeout_s: float) -> None:
        """Until every server is up or has failed once (for start-up and tests)."""
        with anyio.move_on_after(timeout_s):
            for link in self._links.values():
                await link.first_try_done.wait()

    async def stop(self) -> None:
        """Stop every server (stdio children included) and every task; idempotent."""
        if self._scope is not None:
            self._scope.cancel()  # anyio's cancel: the SDK's shielded shutdowns run through
        if self._runner is not None:
            await self._runner

    async def __aenter__(self) -> McpTools:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- the port ---------------------------------------------------------------------------

    def describe(self) -> list[dict[str, Any]]:
        described = []
        for server, link in self._links.items():
            if link.state != "up":
                continue
            for tool in link.tools.values():
                name = exposed_name(server, tool.name)
                if name is None:
                    continue
                described.append(
                    {
                        "name": name,
                        "description": tool.description or tool.title or tool.name,
                        "schema": tool.input_schema,
                        "trusted": link.config.trusted,
                    }
                )
        return described

    def status(self) -> list[dict[str, Any]]:
        return [link.status() for link in self._links.values()]

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        server, _, tool = name.partition(SEPARATOR)
        link = self._links.get(server)
        if link is None or not tool:
            return ToolResult(name, error=UNKNOWN_TOOL, detail=f"no MCP tool named {name!r}")
        trusted = link.config.trusted
        if tool not in link.tools:
            if tool in link.offered:
                why = f"{tool!r} is not on server {server!r}'s allow-list"
                return ToolResult(name, error=NOT_ALLOWED, detail=why, trusted=trusted)
            why = f"server {server!r} has no allowed tool {tool!r}"
            return ToolResult(name, error=UNKNOWN_TOOL, detail=why, trusted=trusted)
        problem = arguments_problem(args) or _schema_problem(link.tools[tool].input_schema, args)
        if problem:
            return ToolResult(name, error=BAD_ARGUMENTS, detail=problem, trusted=trusted)
        return await _call(link, tool, name, args)


def _schema_problem(schema: dict[str, Any], args: dict[str, Any]) -> str:
    """The first way ``args`` breaks the tool's own input schema, or "" (a schema the
    validator cannot read is left to the server to judge)."""
    try:
        error = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(schema)(schema).iter_errors(args)
        )
    except jsonschema.exceptions.SchemaError:
        return ""
    if error is None:
        return ""
    where = "/".join(str(p) for p in error.absolute_path) or "arguments"
    return f"{where}: {error.message}"[:300]


async def _call(link: ServerLink, tool: str, name: str, args: dict[str, Any]) -> ToolResult:
    cfg = link.config
    if link.state == "starting":  # the daemon just started: wait for it, within the budget
        with anyio.move_on_after(cfg.timeout_s):
            await link.first_try_done.wait()
    client = link.client
    if client is None:
        detail = f"server {cfg.name!r} is down: {link.reason or 'restarting'}"
        return ToolResult(name, error=SERVER_DOWN, detail=detail, trusted=cfg.trusted)
    try:
        with anyio.fail_after(cfg.timeout_s):
            result = await client.call_tool(tool, args)
    except TimeoutError:
        detail = f"no answer from {cfg.name!r} within {cfg.timeout_s:g} s"
        link.suspect(f"{tool}: {detail}")
        return ToolResult(name, error=TIMED_OUT, detail=detail, trusted=cfg.trusted)
    except MCPError as exc:
        if exc.code == CONNECTION_CLOSED:
            link.fault(f"the connection was lost during {tool}")
            detail = f"server {cfg.name!r} went away during the call: {link.last_error}"
            return ToolResult(name, error=SERVER_DOWN, detail=detail, trusted=cfg.trusted)
        code = BAD_ARGUMENTS if exc.code == INVALID_PARAMS else TOOL_FAILED
        return ToolResult(name, error=code, detail=exc.message[:300], trusted=cfg.trusted)
    except Exception as exc:  # an answer the SDK could not take as a tool result
        link.last_error = f"{tool}: a result that is not valid MCP: {exc}"[:300]
        return ToolResult(name, error=TOOL_FAILED, detail=link.last_error, trusted=cfg.trusted)
    failed = bool(result.is_error)
    text, truncated = content_text(result, cfg.max_result_chars)
    del result  # a 10 MB answer is dropped here; only the cut text lives on
    return ToolResult(
        name,
        text=text,
        error=TOOL_FAILED if failed else None,
        detail=text[:300] if failed else "",
        truncated=truncated,
        trusted=cfg.trusted,
    )
