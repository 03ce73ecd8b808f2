"""The household page's routes, served on the control API's port behind its guard
(fayd.auth.http_guard): the page and its assets, login and logout, the session's CSRF token,
live updates, and the few read/act routes the control API lacks (docs/web.md)."""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from fayd.auth.http_guard import SESSION_COOKIE
from fayd.protocol.text import json_object
from fayd.web.live import Live
from fayd.web.port import Household
from fayd.web.sessions import WebSessions

#: Paths the guard lets through without a token or session: the page checks the session
#: itself (and sends a stranger to the login page), the login page, and the assets.
PUBLIC = ("/", "/login", "/static/")
STATIC = resources.files("fayd.web") / "static"
#: No framing (clickjacking), no inline script, nothing from another site, no caching.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    return json_object(await request.body())  # ValueError saying why


def routes(sessions: WebSessions, live: Live, household: Household) -> list[BaseRoute]:
    return [*LoginRoutes(sessions, live).routes(), *HouseholdRoutes(household).routes()]


class LoginRoutes:
    """The page itself, its login and logout, the session's CSRF token, live updates."""

    def __init__(self, sessions: WebSessions, live: Live) -> None:
        self.sessions = sessions
        self.live = live

    def session_of(self, request: Request) -> str | None:
        sid = request.cookies.get(SESSION_COOKIE, "")
        return sid if sid and self.sessions.csrf_of(sid) is not None else None

    def page(self, name: str, **marks: str) -> Response:
        text = (STATIC / name).read_text(encoding="utf-8")
        for mark, value in marks.items():
            text = text.replace(f"{{{{{mark}}}}}", value)
        return Response(text, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    async def index(self, request: Request) -> Response:
        if self.session_of(request) is None:
            return RedirectResponse("/login", status_code=303, headers=PAGE_HEADERS)
        return self.page("index.html")

    async def login_page(self, request: Request) -> Response:
        if self.session_of(request) is not None:
            return RedirectResponse("/", status_code=303, headers=PAGE_HEADERS)
        return self.page("login.html", password="yes" if self.sessions.password_set() else "no")

    async def login(self, request: Request) -> Response:
        client = request.client.host if request.client else "?"
        wait = self.sessions.wait_s(client)
        if wait > 0:
            return JSONResponse(
                {"error": f"too many wrong passwords: try again in {wait:.0f} s", "retry_s": wait},
                status_code=429,
                headers={"Retry-After": str(int(wait) + 1)},
            )
        try:
            password = (await _body(request)).get("password")
        except ValueError as exc:
            return _error(str(exc), 400)
        if not isinstance(password, str) or not password:
            return _error("'password' must be the household password", 400)
        if not self.sessions.password_set():
            return _error("no password is set: run  fayd web password  on the box", 409)
        sid = await self.sessions.login(client, password)
        if sid is None:
            return _error("wrong password", 401)
        done = JSONResponse({"ok": True})
        # HttpOnly: no script reads it; Strict: no other site's page sends it. Not Secure:
        # the page is plain HTTP on the household's network (docs/web.md).
        done.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", path="/")
        return done

    async def logout(self, request: Request) -> Response:
        sid = request.cookies.get(SESSION_COOKIE, "")
        self.sessions.end(sid)
        done = JSONResponse({"ok": True})
        done.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return done

    async def session(self, request: Request) -> Response:
        sid = request.cookies.get(SESSION_COOKIE, "")
        csrf = self.sessions.csrf_of(sid) if sid else None
        if csrf is None:  # the token's holder has no web session
            return _error("no web session: log in on the page", 400)
        return JSONResponse({"csrf": csrf}, headers={"Cache-Control": "no-store"})

    async def events(self, request: Request) -> Response:
        sid = self.session_of(request)
        if sid is None:
            return _error("live updates are for a logged-in page", 400)
        stream = self.live.stream(sid, lambda: self.sessions.csrf_of(sid) is not None)
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index, methods=["GET"]),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/api/web/session", self.session, methods=["GET"]),
            Route("/api/web/events", self.events, methods=["GET"]),
            Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
        ]


class HouseholdRoutes:
    """The few read and act routes the control API lacks, through the Household port."""

    def __init__(self, household: Household) -> None:
        self.household = household

    async def people(self, request: Request) -> Response:
        return JSONResponse({"people": await self.household.people()})

    async def conversations(self, request: Request) -> Response:
        try:
            limit = int(request.query_params.get("limit", "40"))
        except ValueError:
            return _error("limit must be a number", 400)
        if not 1 <= limit <= 500:
            return _error("limit must be 1-500", 400)
        return JSONResponse({"messages": await self.household.conversations(limit)})

    async def memory(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        user = request.query_params.get("user") or None
        if not query or len(query) > 500:
            return _error("q: what to search for, 1-500 characters", 400)
        try:
            return JSONResponse({"nodes": await self.household.memory_search(query, user, 10)})
        except ValueError as exc:
            return _error(str(exc), 400)
        except LookupError as exc:
            return _error(str(exc), 503)

    async def quarantine(self, request: Request) -> Response:
        try:
            return JSONResponse({"items": await self.household.quarantine()})
        except LookupError as exc:
            return _error(str(exc), 503)

    async def decide(self, request: Request) -> Response:
        try:
            item = int(request.path_params["item"])
            decision = (await _body(request)).get("decision")
        except ValueError as exc:
            return _error(str(exc) or "the item must be a number", 400)
        if decision not in ("approve", "reject"):
            return _error("'decision' must be approve or reject", 400)
        try:
            return JSONResponse(await self.household.decide(item, decision == "approve"))
        except ValueError as exc:
            return _error(str(exc), 400)
        except LookupError as exc:
            return _error(str(exc), 503)

    async def device_settings(self, request: Request) -> Response:
        try:
            body = await _body(request)
        except ValueError as exc:
            return _error(str(exc), 400)
        given = body.get("settings")
        if not isinstance(given, dict) or not given:
            return _error('\'settings\' must be an object such as {"volume": "40"}', 400)
        pairs = [f"{k}={'' if v is None else v}" for k, v in given.items()]
        if any(isinstance(v, dict | list) for v in given.values()):
            return _error("each setting is a string, a number, true/false or null", 400)
        try:
            return JSONResponse(
                await self.household.set_device(request.path_params["device"], pairs, 3.0)
            )
        except ValueError as exc:
            return _error(str(exc), 400)
        except LookupError as exc:
            return _error(str(exc), 404)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/web/people", self.people, methods=["GET"]),
            Route("/api/web/conversations", self.conversations, methods=["GET"]),
            Route("/api/web/memory", self.memory, methods=["GET"]),
            Route("/api/web/quarantine", self.quarantine, methods=["GET"]),
            Route("/api/web/quarantine/{item}", self.decide, methods=["POST"]),
            Route("/api/web/devices/{device}/settings", self.device_settings, methods=["POST"]),
        ]
