"""The port through which the agent uses external tools, and what a call gives back.

Pure data and a Protocol, importing nothing of fayd or the MCP SDK: the agent (a lower
layer than fayd.mcp, see tests/test_layers.py) may not import fayd.mcp, so this file is
meant to move to the agent's side as it is; :class:`fayd.mcp.client.McpTools` satisfies
the Protocol structurally and ``fayd.service`` hands it over.

A server's fault is never raised into the turn: it comes back as a :class:`ToolResult`
with ``error`` set to one of :data:`ERRORS`, which the loop can show the model ("the time
server is down") or log, and always continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

#: ``ToolResult.error`` values.
UNKNOWN_TOOL = "unknown_tool"  # no configured server offers it
NOT_ALLOWED = "not_allowed"  # the server offers it, its allow-list does not
BAD_ARGUMENTS = "bad_arguments"  # not a JSON object, against the tool's schema, or refused
TIMED_OUT = "timed_out"  # no answer within the server's timeout_s
SERVER_DOWN = "server_down"  # not running / not reachable / died during the call
TOOL_FAILED = "tool_failed"  # the tool ran and reported an error (MCP isError)
ERRORS = (UNKNOWN_TOOL, NOT_ALLOWED, BAD_ARGUMENTS, TIMED_OUT, SERVER_DOWN, TOOL_FAILED)


@dataclass(frozen=True)
class ToolResult:
    """One call's outcome. ``text`` is what the model may read (the result, or for
    ``tool_failed`` the server's own message); ``detail`` says what went wrong, for logs."""

    name: str
    text: str = ""
    error: str | None = None
    detail: str = ""
    #: The text was longer than the server's max_result_chars and was cut (it says so).
    truncated: bool = False
    #: From a server the household marked trusted; otherwise memory writes are quarantined.
    trusted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


class ExternalTools(Protocol):
    """Tools from outside fayd (the household's MCP servers).

    ``describe()``: ``[{"name", "description", "schema", "trusted"}]`` of the tools usable
    now; ``call()`` never raises for a server's fault; ``status()``: one dict per server
    for ``fayd status``.
    """

    def describe(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult: ...

    def status(self) -> list[dict[str, Any]]: ...
