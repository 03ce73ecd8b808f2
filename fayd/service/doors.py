"""The doors served beside the control API, on its port and behind its lock (docs/security.md):
the avatar WebSocket, and (as they land) the web page, the OpenAI endpoint and MCP over HTTP.
Each door is built from the daemon's parts; this module only gathers them."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.routing import BaseRoute

from fayd.config import Config
from fayd.doors import avatar
from fayd.service.api import Lock
from fayd.service.wiring import Parts


@dataclass
class Doors:
    routes: list[BaseRoute] = field(default_factory=list)
    lock: Lock = field(default_factory=Lock)


def open_doors(cfg: Config, parts: Parts) -> Doors:
    routes: list[BaseRoute] = [*avatar.AvatarDoor(parts.dialogue).routes()]
    lock = Lock(names=cfg.api.names, origins=cfg.api.origins, shared=avatar.SHARED)
    return Doors(routes, lock)
