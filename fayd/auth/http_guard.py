"""One ASGI middleware in front of every HTTP route fayd serves. A request passes only if

1. its ``Host`` is one of the server's own names (a DNS-rebinding page reaches the server
   under the attacker's host name);
2. it carries no ``Origin`` (the CLI, curl) or the server's own (a page fayd serves later),
   and no ``Sec-Fetch-Site`` saying another site sent it (any cross-site browser request);
3. it has ``Authorization: Bearer <token>`` (fayd.auth.tokens), compared in constant time,
   or the cookie of a live web session (fayd.web) and, on any request but GET/HEAD, that
   session's CSRF token in ``X-CSRF-Token``; a WebSocket handshake may instead carry the
   token as ``?token=`` (a browser's WebSocket cannot send headers); a *public* path (the
   login page and its assets) needs none of these, but still checks 1, 2, 4 and 5;
4. a request with a body says ``Content-Type: application/json`` (a cross-site form or
   ``text/plain`` POST needs no CORS preflight; a JSON one does, and is refused above);
5. its body is within the route's limit (fayd.auth.body_limit): a ``Content-Length`` over
   it is refused unread, and any other body is counted while the guard reads it.

Checked in that order; the first failure answers 403, 401, 415 or 413 with a JSON error and
the route never runs. WebSocket handshakes get checks 1-3 (refused as HTTP 403). Origins
named in ``origins`` (an avatar frontend served elsewhere on the LAN, ``api.origins``) pass
check 2 whatever their Sec-Fetch-Site; they still need the token. A GET under a *shared*
prefix (capability URLs: an avatar's speech, whose unguessable path is the secret and which
a page's ``<audio>`` fetches from its own site, with no token) gets check 1 only."""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from typing import Any, Protocol
from urllib.parse import parse_qsl

from starlette.requests import cookie_parser

from fayd.auth.body_limit import BodyLimits, TooLarge, check_declared, has_body, read_within

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: Methods that change nothing: a session needs its CSRF token on every other (DELETE too).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Sec-Fetch-Site values a browser sends for a request the page's own origin did not make.
FOREIGN_FETCH = frozenset({b"cross-site", b"same-site"})
#: The web page's session cookie (fayd.web) and the header that carries its CSRF token.
SESSION_COOKIE = "fayd_session"
CSRF_HEADER = b"x-csrf-token"


class Sessions(Protocol):
    """The web page's logins, as the guard asks about them (fayd.web)."""

    def csrf_of(self, session: str) -> str | None:
        """The CSRF token of a live session, or None: no such session, or it expired."""


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """``Host`` values that name this server: its bound address (a wildcard bind answers on
    loopback), the loopback names, and ``extra`` names (e.g. the box's LAN name), each with
    the port."""
    names = set(LOOPBACK_NAMES)
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    names.update(extra)
    return frozenset(f"{name.lower()}:{port}" for name in names)


class HttpGuard:
    def __init__(
        self,
        app: Any,
        token: str,
        hosts: frozenset[str],
        bodies: BodyLimits | None = None,
        *,
        sessions: Sessions | None = None,
        public: Iterable[str] = (),
        origins: Iterable[str] = (),
        shared: Iterable[str] = (),
    ) -> None:
        if len(token) < 16:
            raise ValueError("an HTTP token must be at least 16 characters")
        self.app = app
        #: The largest body of each route family (a default one when not given).
        self.bodies = bodies or BodyLimits()
        self.token = token.encode()
        self.expected = b"Bearer " + self.token
        self.hosts = hosts
        self.origins = frozenset(f"http://{h}" for h in hosts)
        #: Other sites' pages that may open a door here (with the token): avatar frontends.
        self.foreign_origins = frozenset(o.lower().rstrip("/") for o in origins)
        self.sessions = sessions
        #: Paths (exact, or a prefix ending in "/"; "/" is exact) that need no token: the
        #: login page.
        self.public = tuple(public)
        #: Prefixes (ending in "/") of capability URLs: a GET needs only the right Host.
        self.shared = tuple(p for p in shared if p.endswith("/"))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            refusal = self.refusal(scope)
            if refusal is not None:
                await self._refuse(scope, send, *refusal)
                return
        if scope["type"] == "http":
            try:
                receive = await self._bounded(scope, receive)
            except TooLarge as exc:
                await self._refuse(scope, send, 413, str(exc))
                return
        await self.app(scope, receive, send)

    async def _bounded(self, scope: dict[str, Any], receive: Any) -> Any:
        """``receive`` once the body is known to be within its route's limit, or TooLarge."""
        headers = dict(scope.get("headers") or ())
        limit = self.bodies.of(scope.get("path", ""))
        check_declared(headers, limit)
        if not has_body(headers):
            return receive
        return await read_within(receive, limit)

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        """(status, reason) when the request must not pass, else None."""
        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers") or ():
            headers.setdefault(name.lower(), value)  # the first of a repeated header
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            return 403, f"Host {host!r} is not this server (allowed: {sorted(self.hosts)})"
        if self._is_shared(scope):
            return None
        origin = headers.get(b"origin")
        origin_name = origin.decode("latin-1").lower() if origin is not None else None
        invited = origin_name in self.foreign_origins
        if origin_name is not None and not invited and origin_name not in self.origins:
            return 403, "cross-site requests are refused (Origin is not this server)"
        if not invited and headers.get(b"sec-fetch-site", b"").lower() in FOREIGN_FETCH:
            return 403, "cross-site requests are refused (Sec-Fetch-Site)"
        with_body = scope["type"] == "http" and scope.get("method") in BODY_METHODS
        if not self._is_public(scope.get("path", "")):
            unsafe = scope["type"] == "http" and scope.get("method") not in SAFE_METHODS
            refused = self._unsigned(scope, headers, unsafe)
            if refused is not None:
                return refused
        if with_body:
            media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
            if media != b"application/json":
                return 415, "the body must be JSON with Content-Type: application/json"
        return None

    def _is_public(self, path: str) -> bool:
        # "/" alone is the root page, never a prefix: it would open every path.
        return any(
            path == p or (p != "/" and p.endswith("/") and path.startswith(p)) for p in self.public
        )

    def _is_shared(self, scope: dict[str, Any]) -> bool:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            return False
        return any(scope.get("path", "").startswith(p) for p in self.shared)

    def _unsigned(
        self, scope: dict[str, Any], headers: dict[bytes, bytes], unsafe: bool
    ) -> tuple[int, str] | None:
        """None when the request carries the token (header, or a WebSocket's ``?token=``)
        or a live session (with its CSRF token on a request that may change something),
        else why not."""
        if hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
            return None
        if scope["type"] == "websocket":
            query = scope.get("query_string", b"").decode("latin-1")
            given = dict(parse_qsl(query)).get("token", "").encode("utf-8", "replace")
            if hmac.compare_digest(given, self.token):
                return None
        cookie = headers.get(b"cookie")
        if self.sessions is not None and cookie is not None:
            session = cookie_parser(cookie.decode("latin-1")).get(SESSION_COOKIE, "")
            csrf = self.sessions.csrf_of(session) if session else None
            if csrf is not None:
                if not unsafe or hmac.compare_digest(headers.get(CSRF_HEADER, b""), csrf.encode()):
                    return None
                return 403, "the session's CSRF token is missing or wrong (X-CSRF-Token)"
        return 401, "missing or wrong token: send Authorization: Bearer <token>"

    @staticmethod
    async def _refuse(scope: dict[str, Any], send: Any, status: int, reason: str) -> None:
        if scope["type"] == "websocket":  # closing before accept answers HTTP 403
            await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
            return
        body = json.dumps({"error": reason}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
