"""The doors served beside the control API, on its port and behind its lock (docs/security.md):
the household page, the avatar WebSocket, the OpenAI endpoint and MCP over HTTP. Each door
is built from the daemon's parts; this module only gathers them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from starlette.routing import BaseRoute

from fayd.config import Config
from fayd.doors import avatar, openai_api
from fayd.mcp.door import Listening, McpDoor, build_door
from fayd.service.api import Control as ApiControl
from fayd.service.api import Lock
from fayd.service.web_door import DaemonHousehold, feed_live
from fayd.service.wiring import Parts
from fayd.store import Store
from fayd.web import WebPage


class Control(ApiControl, Protocol):
    """The daemon, with the API server its doors are served by."""

    @property
    def api(self) -> Listening: ...


@dataclass
class Doors:
    routes: list[BaseRoute]
    lock: Lock
    #: MCP over HTTP: its session manager is a component the daemon starts (no lifespan).
    mcp: McpDoor


def open_doors(
    cfg: Config,
    parts: Parts,
    store: Store,
    web: WebPage,
    started_at: float,
    control: Control,
) -> Doors:
    """``control``: the daemon, as the control API sees it (MCP's care tools, its server)."""
    dialogue = parts.dialogue
    mcp = build_door(
        parts.memory,
        dialogue,
        lambda: set(parts.registry.states),
        control.care,
        cfg.agent.default_user,
        lambda: control.api,
    )
    feed_live(web.live, parts.registry)
    household = DaemonHousehold(store, parts, cfg.agent.default_user)
    routes: list[BaseRoute] = [
        *web.routes(household),
        *avatar.AvatarDoor(dialogue).routes(),
        # A turn on the administrator's conversation, as `fayd say` (the token's holder).
        *openai_api.routes(lambda t, u, said: dialogue.say(t, u, None, said), started_at),
        mcp.route,
    ]
    lock = Lock(
        names=cfg.api.names,
        origins=cfg.api.origins,
        public=web.public,
        sessions=web.sessions,
        shared=avatar.SHARED,
    )
    return Doors(routes, lock, mcp)
