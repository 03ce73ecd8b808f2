"""fayd's MCP server: stdio for a client that starts it, streamable HTTP behind fayd's
HTTP guard (a bearer token, its own Host and Origin) for clients on the network (loopback
unless told otherwise)."""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from fayd.auth import HttpGuard, allowed_hosts
from fayd.auth.body_limit import MIB, BodyLimits
from fayd.mcp.tools import add_memory_tools
from fayd.memory import Memory

#: The largest request body (fayd.auth.body_limit): a memory is at most 20,000 characters
#: (fayd.memory.nodes.MAX_CONTENT), under 240 KB even as JSON escapes; a JSON-RPC message
#: with it fits in 1 MiB with room to spare.
MCP_BODIES = BodyLimits(default=1 * MIB)

INSTRUCTIONS = (
    "fayd's long-term memory of the people it looks after (Fay-compatible tools). Call "
    "memory_get_schema once to learn the kinds and tag namespaces before writing."
)


def build_server(memory: Memory) -> MCPServer:
    server = MCPServer(name="fayd", instructions=INSTRUCTIONS)
    add_memory_tools(server, memory)
    return server


async def serve_stdio(memory: Memory) -> None:
    await build_server(memory).run_stdio_async()


def http_app(memory: Memory, token: str, host: str = "127.0.0.1", port: int = 0) -> Any:
    """The streamable HTTP app at ``/mcp`` behind fayd's HTTP guard (the token, Host and
    Origin, JSON bodies), as every HTTP route of fayd's."""
    server = build_server(memory)
    # DNS-rebinding protection: only our own host names in Host/Origin headers.
    allowed = [f"{h}:{port}" if port else f"{h}:*" for h in {host, "127.0.0.1", "localhost"}]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=host in ("127.0.0.1", "localhost", "::1"),
        allowed_hosts=allowed,
        allowed_origins=[f"http://{a}" for a in allowed],
    )
    app = server.streamable_http_app(
        streamable_http_path="/mcp", transport_security=security, host=host
    )
    return HttpGuard(app, token, allowed_hosts(host, port), MCP_BODIES)


async def serve_http(memory: Memory, token: str, host: str = "127.0.0.1", port: int = 8765) -> None:
    import uvicorn

    config = uvicorn.Config(
        http_app(memory, token, host, port), host=host, port=port, log_level="warning"
    )
    await uvicorn.Server(config).serve()
