"""An MCP tool result made into text for the model, and arguments checked before sending."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types


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
