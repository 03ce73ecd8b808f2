"""MCP server: Fay's memory tools over stdio and streamable HTTP."""

from fayd.mcp.server import build_server, http_app, serve_http, serve_stdio
from fayd.mcp.tools import TOOL_NAMES

__all__ = ["TOOL_NAMES", "build_server", "http_app", "serve_http", "serve_stdio"]
