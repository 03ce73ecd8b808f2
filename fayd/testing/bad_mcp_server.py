"""A real MCP server (the SDK's ``MCPServer``) that misbehaves on request, for the MCP
client's tests: over stdio by default, or streamable HTTP behind fayd's own HTTP guard
(bearer token, Host and Origin checks) with ``--http PORT --token TOKEN``.

    python -m fayd.testing.bad_mcp_server                       # stdio
    python -m fayd.testing.bad_mcp_server --http 8931 --token t0ken-of-16-chars

Tools: ``echo`` and ``pid`` behave; ``hang`` never answers (the server stays responsive);
``freeze`` blocks the whole server (its event loop sleeps); ``huge`` returns ``chars``
characters; ``crash`` kills the process mid-call; ``garbage`` writes a line that is not
JSON-RPC to stdout; ``fail`` reports a tool error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

#: The protocol's own pipe, kept before the SDK diverts fd 1 to stderr (which it does so a
#: stray print cannot corrupt the wire): ``garbage`` corrupts it on purpose.
_WIRE = os.dup(1)


def build() -> MCPServer:
    server = MCPServer(name="bad")

    @server.tool(description="Say the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="This server's process id.")
    def pid() -> str:
        return str(os.getpid())

    @server.tool(description="Never answer (other calls still work).")
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    @server.tool(description="Block the whole server for an hour.")
    async def freeze() -> str:
        time.sleep(3600)  # noqa: ASYNC251 - blocks the event loop on purpose: nothing answers
        return ""

    @server.tool(description="Return `chars` characters of text.")
    def huge(chars: int = 10_000_000) -> str:
        return "x" * chars

    @server.tool(description="Kill this server in the middle of the call.")
    def crash() -> str:
        sys.stdout.flush()
        os._exit(3)

    @server.tool(description="Write a line that is not MCP to stdout, then answer.")
    def garbage() -> str:
        os.write(_WIRE, b"this is not json-rpc\n")
        return "sent"

    @server.tool(description="Fail with a tool error.")
    def fail() -> str:
        raise ToolError("it went wrong on purpose")

    return server


def serve_http(port: int, token: str) -> None:
    import uvicorn

    from fayd.auth import HttpGuard, allowed_hosts
    from fayd.auth.body_limit import MIB, BodyLimits

    app = build().streamable_http_app(streamable_http_path="/mcp")
    guarded = HttpGuard(app, token, allowed_hosts("127.0.0.1", port), BodyLimits(default=MIB))
    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on loopback")
    parser.add_argument("--token", default="", help="the bearer token HTTP requires")
    args = parser.parse_args()
    if args.http:
        serve_http(args.http, args.token)
    else:
        anyio.run(build().run_stdio_async)


if __name__ == "__main__":
    main()
