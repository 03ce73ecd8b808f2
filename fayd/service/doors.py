"""The doors served beside the control API, on its port and behind its lock (docs/security.md):
the household page, the avatar WebSocket, the OpenAI endpoint and MCP over HTTP. Each door
is built from the daemon's parts; this module only gathers them."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.routing import BaseRoute

from fayd.config import Config
from fayd.doors import avatar, openai_api
from fayd.service.api import Lock
from fayd.service.web_door import DaemonHousehold, feed_live
from fayd.service.wiring import Parts
from fayd.store import Store
from fayd.web import WebPage


@dataclass
class Doors:
    routes: list[BaseRoute] = field(default_factory=list)
    lock: Lock = field(default_factory=Lock)


def open_doors(
    cfg: Config,
    parts: Parts,
    store: Store,
    web: WebPage,
    started_at: float,
    more: list[BaseRoute],
) -> Doors:
    """``more``: doors the daemon built itself (MCP over HTTP, whose tools need it whole)."""
    dialogue = parts.dialogue
    feed_live(web.live, parts.registry)
    household = DaemonHousehold(store, parts, cfg.agent.default_user)
    routes: list[BaseRoute] = [
        *web.routes(household),
        *avatar.AvatarDoor(dialogue).routes(),
        # A turn on the administrator's conversation, as `fayd say` (the token's holder).
        *openai_api.routes(lambda t, u, said: dialogue.say(t, u, None, said), started_at),
        *more,
    ]
    lock = Lock(
        names=cfg.api.names,
        origins=cfg.api.origins,
        public=web.public,
        sessions=web.sessions,
        shared=avatar.SHARED,
    )
    return Doors(routes, lock)
