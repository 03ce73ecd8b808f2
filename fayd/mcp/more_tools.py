"""An MCP server with tools whose JSON schema is given, not read from a Python signature:
the skills' schemas come from their registry (fayd.agent.skills) and must reach the client
as they are. Fay's memory tools stay the SDK's own (fayd.mcp.tools), so ``fayd mcp`` and
the daemon serve them from the same code.

Arguments are checked against the schema before a tool runs; a result is one JSON text
block, as Fay's tools answer; a refused call is an error result that says why.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import jsonschema
from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as McpTool

log = logging.getLogger(__name__)


class Refused(Exception):
    """A call that cannot be done as asked: the message is shown to the client."""


@dataclass(frozen=True)
class SchemaTool:
    name: str
    description: str
    schema: dict[str, Any]
    #: The checked arguments → the result (any JSON value).
    run: Callable[[dict[str, Any]], Awaitable[Any]]


def _text(value: Any, error: bool = False) -> CallToolResult:
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


class ServerWithSchemas(MCPServer):
    """MCPServer plus :class:`SchemaTool` s (listed after the server's own tools)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema_tools: dict[str, SchemaTool] = {}

    def add_schema_tools(self, tools: list[SchemaTool]) -> None:
        for tool in tools:
            jsonschema.Draft202012Validator.check_schema(tool.schema)
            if tool.name in self.schema_tools:
                raise ValueError(f"two MCP tools called {tool.name!r}")
            self.schema_tools[tool.name] = tool

    async def list_tools(self) -> list[McpTool]:
        own = await super().list_tools()
        taken = {t.name for t in own}
        more = [
            McpTool(name=t.name, description=t.description, input_schema=t.schema)
            for t in self.schema_tools.values()
            if t.name not in taken
        ]
        return [*own, *more]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self.schema_tools.get(name)
        if tool is None:
            return await super().call_tool(name, arguments, context)
        try:
            jsonschema.validate(arguments, tool.schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path)
            return _text({"ok": False, "error": f"{name}: {where + ': ' if where else ''}"
                          f"{exc.message}"}, error=True)  # fmt: skip
        try:
            return _text(await tool.run(arguments))
        except Refused as exc:
            return _text({"ok": False, "error": str(exc)}, error=True)
