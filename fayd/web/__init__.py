"""The household page: a small management page served by the daemon on its API port, with
a household password, sessions with CSRF tokens, and live updates (docs/web.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from starlette.routing import BaseRoute

from fayd.web.live import Live
from fayd.web.port import Household
from fayd.web.routes import PUBLIC, routes
from fayd.web.sessions import WebSessions


@dataclass
class WebPage:
    """The page's parts, as the daemon wires them: its routes and public paths for the API
    server, its sessions for the lock, and ``live`` to tell open pages what changed."""

    sessions: WebSessions
    live: Live = field(default_factory=Live)
    public: tuple[str, ...] = PUBLIC

    @classmethod
    def of(cls, state_dir: Path) -> WebPage:
        page = cls(WebSessions(state_dir))
        page.sessions.on_end.append(page.live.end_session)
        return page

    def routes(self, household: Household) -> list[BaseRoute]:
        return routes(self.sessions, self.live, household)


__all__ = ["Household", "Live", "WebPage", "WebSessions"]
