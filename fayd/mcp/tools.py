"""Fay's seven memory tools on an MCP server: same names, arguments and result shapes.

Each result is one JSON text block, as Fay's own server returns it. Memory calls block
(SQLite, the embedder, the LLM), so they run on worker threads.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from fayd.memory import BadInput, Memory
from fayd.memory.provenance import AGENT
from fayd.memory.quarantine import guarded_remember
from fayd.memory.tags import KIND_ENUM, schema
from fayd.protocol.text import BadText, check_name, check_strings

NodeType = Literal["all", "observation", "conversation", "reflection"]
TOOL_NAMES = (
    "memory_remember",
    "memory_search",
    "memory_get_recent",
    "memory_get_active_rules",
    "memory_get_reflections",
    "memory_get_user_profile",
    "memory_get_schema",
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _check(**args: Any) -> None:
    """Every string argument is text, ``username`` (when given) a user name: BadText naming
    the argument otherwise. The SDK's JSON parser refuses a lone surrogate (``"\\udfff"``)
    today; checked here too, because nothing behind the tools could write one."""
    for name, value in args.items():
        check_strings(name, value)
    if args.get("username"):
        check_name("username", args["username"])


def _checked(**args: Any) -> None:
    """:func:`_check` as the tool error a client is shown (``is_error``, the message)."""
    try:
        _check(**args)
    except BadText as exc:
        raise ToolError(str(exc)) from exc


def add_memory_tools(server: MCPServer, memory: Memory) -> None:
    async def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    @server.tool(
        structured_output=False,
        description=(
            "Write a memory. kind is one of " + ", ".join(KIND_ENUM) + " (an unknown kind is "
            "kept as kind:observation + kind:unknown:<kind>); a rule should be persistent. "
            "Call memory_get_schema for the tag conventions."
        ),
    )
    async def memory_remember(
        content: str,
        kind: str = "observation",
        source: str = "",
        persistent: bool = False,
        extra_tags: list[str] | None = None,
        username: str = "",
    ) -> str:
        try:
            _check(
                content=content,
                kind=kind,
                source=source,
                extra_tags=extra_tags,
                username=username,
            )
            # An MCP client is another agent: its writes are agent_derived, and one that
            # reads like an instruction to the model waits in the quarantine for review.
            node = await call(
                guarded_remember,
                memory,
                content,
                username or None,
                AGENT,
                kind,
                source or "mcp",
                persistent,
                extra_tags,
            )
        except (BadInput, BadText) as exc:
            return _json({"ok": False, "error": str(exc)})
        if not node.get("ok", True):
            error = f"quarantined #{node['quarantined']} for review: {node['reason']}"
            return _json({"ok": False, "error": error})
        return _json(
            {
                "ok": True,
                "node_id": node["node_id"],
                "tags": node["tags"],
                "importance": node["importance"],
            }
        )

    @server.tool(
        structured_output=False,
        description="Semantic search with optional tag filters (all = AND, any = OR).",
    )
    async def memory_search(
        query: str,
        n: int = 10,
        filter_tags_all: list[str] | None = None,
        filter_tags_any: list[str] | None = None,
        node_type: NodeType = "all",
        username: str = "",
    ) -> str:
        _checked(
            query=query,
            filter_tags_all=filter_tags_all,
            filter_tags_any=filter_tags_any,
            username=username,
        )
        hits = await call(
            memory.search,
            query,
            username=username or None,
            n=n,
            node_type=node_type,
            filter_tags_all=filter_tags_all,
            filter_tags_any=filter_tags_any,
            stateless=True,
        )
        # Fay's retrieve hands its top n back in chronological order, without scores.
        hits.sort(key=lambda h: (h["created"], h["node_id"]))
        return _json([{k: v for k, v in h.items() if k != "score"} for h in hits])

    @server.tool(structured_output=False, description="The latest memories, newest first.")
    async def memory_get_recent(
        n: int = 20,
        filter_tags_all: list[str] | None = None,
        node_type: NodeType = "all",
        username: str = "",
    ) -> str:
        _checked(filter_tags_all=filter_tags_all, username=username)
        nodes = await call(memory.get_recent, username or None, n, filter_tags_all, node_type)
        return _json(nodes)

    @server.tool(
        structured_output=False,
        description="All kind:rule + persistent:true memories, most important first.",
    )
    async def memory_get_active_rules(n: int = 50, username: str = "") -> str:
        _checked(username=username)
        return _json(await call(memory.get_active_rules, username or None, n))

    @server.tool(
        structured_output=False,
        description="Reflections (and kind:insight memories), newest first.",
    )
    async def memory_get_reflections(n: int = 10, username: str = "") -> str:
        _checked(username=username)
        return _json(await call(memory.get_reflections, username or None, n))

    @server.tool(
        structured_output=False, description="The user's portrait (<=1000 chars) and extra info."
    )
    async def memory_get_user_profile(username: str = "") -> str:
        _checked(username=username)
        return _json(await call(memory.get_user_profile, username or None))

    @server.tool(
        structured_output=False,
        description="The kind enum and tag namespaces to use when writing memories.",
    )
    async def memory_get_schema() -> str:
        return _json(schema())
