"""Foreign errors of a server's start or session, told as one line for ``fayd status``."""

from __future__ import annotations

import httpx2
from mcp.shared.exceptions import MCPError

from fayd.mcp.client_config import McpServerConfig


def _leaves(exc: BaseException) -> list[BaseException]:
    """The real errors inside anyio's task-group wrappers."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def describe_fault(exc: BaseException, config: McpServerConfig, http_status: int = 0) -> str:
    """Why ``config``'s server could not be used, in words a household can act on."""
    if http_status in (401, 403):
        hint = "a wrong or missing token" if config.token else "no token configured"
        return f"refused by the server: HTTP {http_status} ({hint})"
    leaf = _leaves(exc)[0]
    if isinstance(leaf, FileNotFoundError) and config.command:
        return f"cannot start it: no such command {config.command[0]!r}"
    if isinstance(leaf, PermissionError) and config.command:
        return f"cannot start it: {config.command[0]!r} is not executable"
    if isinstance(leaf, httpx2.ConnectError):
        return f"cannot reach {config.url}: {leaf}"
    if isinstance(leaf, httpx2.TimeoutException):
        return f"no answer from {config.url}"
    if http_status >= 400:
        return f"the server answered HTTP {http_status}"
    if isinstance(leaf, MCPError):
        return f"MCP error {leaf.code}: {leaf.message}"[:300]
    return f"{type(leaf).__name__}: {leaf}"[:300]
