"""What a call to an external MCP tool gives the agent: text to read, or a named error.

A server's fault is never raised into the turn: it comes back as a :class:`ToolResult` with
``error`` set to one of :data:`ERRORS`, which the loop can show the model ("the time server
is down") or log, and always continue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

#: ``ToolResult.error`` values.
UNKNOWN_TOOL = "unknown_tool"  # no configured server offers it
NOT_ALLOWED = "not_allowed"  # the server offers it, its allow-list does not
BAD_ARGUMENTS = "bad_arguments"  # not a JSON object, or refused by the server as invalid
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


def content_text(result: types.CallToolResult, limit: int) -> tuple[str, bool]:
    """The result's text blocks joined, at most ``limit`` characters (a note says when it
    was cut); non-text blocks are named, not inlined, and structured content stands in
    when there is no text at all."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{block.type} omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return cut("\n".join(parts), limit)


def cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    note = f"\n[cut: the result had {len(text):,} characters; these are the first {limit:,}]"
    return text[:limit] + note, True


def arguments_problem(args: Any) -> str:
    """Why ``args`` cannot be sent as a tool's arguments, or "" when it can."""
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        return f"arguments must be a JSON object, got {type(args).__name__}"
    try:
        json.dumps(args, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"arguments are not JSON: {exc}"
    return ""
