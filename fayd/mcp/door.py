"""MCP in the daemon: streamable HTTP at ``/mcp`` on the control API's port, behind its lock
(the token as ``Authorization: Bearer``, the box's own Host, same-site Origin: fayd.auth).

The tools: Fay's seven memory tools (the same code as ``fayd mcp``), one tool per skill of
the registry, the care engine's alerts, rules and digest, and ``speak``. uvicorn runs
without a lifespan, so the SDK's session manager runs as a supervised component
(:meth:`McpDoor.run`); a restart makes a new one (the SDK runs each once only).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from fayd.agent.dialogue import Dialogue
from fayd.auth import allowed_hosts
from fayd.mcp.care_tools import Care, announce_with, care_tools, speak_tool
from fayd.mcp.more_tools import ServerWithSchemas
from fayd.mcp.server import INSTRUCTIONS
from fayd.mcp.skill_tools import skill_tools
from fayd.mcp.tools import add_memory_tools
from fayd.memory import Memory
from fayd.precedence import for_a_door

log = logging.getLogger(__name__)

PATH = "/mcp"
DAEMON_INSTRUCTIONS = (
    INSTRUCTIONS + " Besides memory: fayd's skills (reminders, timers, the clock, device "
    "actions), the care engine's alerts, rules and digest, and speak (a text said on a device)."
    " Each tool acts for the username given (default: the household's default user)."
)


class Listening(Protocol):
    """The API server the door is served by (fayd.service.api.ApiServer)."""

    host: str
    port: int
    started: asyncio.Event

    @property
    def lock(self) -> Any: ...


def security_of(api: Listening) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check, agreeing with the lock in front of it: the same Host
    names (fayd.auth.allowed_hosts) and Origins (those hosts, and the invited ones)."""
    hosts = allowed_hosts(api.host, api.port, api.lock.names)
    origins = {f"http://{h}" for h in hosts} | {o.lower().rstrip("/") for o in api.lock.origins}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(origins),
    )


class McpDoor:
    def __init__(self, server: ServerWithSchemas, api: Callable[[], Listening]) -> None:
        self.server = server
        self.api = api
        self._manager: StreamableHTTPSessionManager | None = None
        self.route = Route(PATH, endpoint=self)  # an ASGI app: every method reaches it

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        manager = self._manager
        if manager is None:  # the models still load, or the component restarts
            body = json.dumps({"error": "MCP is starting: try again in a few seconds"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"retry-after", b"2")],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        for_a_door()  # this request's task: its tools' work gives way to the devices'
        await manager.handle_request(scope, receive, send)

    async def run(self) -> None:
        for_a_door()  # the sessions the manager runs, and their tools' calls
        api = self.api()
        await api.started.wait()  # its port is known (0 = a free one) once it listens
        self.server.streamable_http_app(
            streamable_http_path=PATH, transport_security=security_of(api)
        )
        manager = self.server.session_manager
        async with manager.run():
            self._manager = manager
            try:
                await asyncio.Event().wait()  # until the daemon stops
            finally:
                self._manager = None


def build_door(
    memory: Memory | None,
    dialogue: Dialogue,
    devices: Callable[[], set[str]],
    care: Care,
    default_user: str,
    api: Callable[[], Listening],
) -> McpDoor:
    """The door, from the daemon's parts: ``devices()`` the ids that said hello, ``care`` the
    care engine's admin (Daemon.care), ``api()`` the server it is served by."""
    server = ServerWithSchemas(name="fayd", instructions=DAEMON_INSTRUCTIONS)
    if memory is not None:
        add_memory_tools(server, memory)
    understanding = dialogue.understanding
    if understanding is not None:
        server.add_schema_tools(
            skill_tools(understanding.skills, understanding.context, default_user, devices)
        )
    server.add_schema_tools(care_tools(care))
    speak = announce_with(dialogue.announce)
    server.add_schema_tools([speak_tool(speak, default_user, devices)])
    return McpDoor(server, api)
