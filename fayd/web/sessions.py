"""The web page's logins: random session ids in memory (a restart logs everyone out), each
with its CSRF token, ended by logout, by 12 idle hours, or by a new household password.
The guard (fayd.auth.http_guard) asks :meth:`WebSessions.csrf_of` on every request."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fayd.web.password import read_password, version_of

log = logging.getLogger(__name__)

IDLE_S = 12 * 3600
#: Beyond this, the oldest login goes (a household has a few phones, not hundreds).
MAX_SESSIONS = 64


@dataclass
class Session:
    csrf: str
    last_seen: float


@dataclass
class Throttle:
    """Wrong guesses slow the next ones: after ``free`` wrong guesses a client waits 5 s,
    then 10, 20 … up to ``cap`` s before it may guess again (a mistyping relative waits a
    little; a script gets a few hundred guesses a day). Kept per client and for all
    clients together (a larger ``free``), so many addresses do not multiply the guesses."""

    free: int
    cap: float = 300.0
    fails: dict[str, int] = field(default_factory=dict)
    until: dict[str, float] = field(default_factory=dict)

    def wait_s(self, key: str, now: float) -> float:
        return max(0.0, self.until.get(key, 0.0) - now)

    def failed(self, key: str, now: float) -> None:
        n = self.fails[key] = self.fails.get(key, 0) + 1
        if n > self.free:
            self.until[key] = now + min(self.cap, 5.0 * 2.0 ** (n - self.free - 1))
        if len(self.fails) > 4096:  # a flood of addresses: forget the oldest
            self.fails.pop(next(iter(self.fails)))

    def succeeded(self, key: str) -> None:
        self.fails.pop(key, None)
        self.until.pop(key, None)


class WebSessions:
    """The ``Sessions`` port of the guard, and login/logout for fayd.web's routes."""

    def __init__(self, state_dir: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.state_dir = state_dir
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self.per_client = Throttle(free=3)
        self.overall = Throttle(free=20)
        #: The password file's version the live sessions were opened under.
        self._version = version_of(state_dir)
        #: Told when a session ends (its live updates stop): the session id.
        self.on_end: list[Callable[[str], None]] = []

    def password_set(self) -> bool:
        return read_password(self.state_dir) is not None

    def _check_version(self) -> None:
        """A new password (or none) ends every session opened before it."""
        now = version_of(self.state_dir)
        if now != self._version:
            self._version = now
            if self.sessions:
                log.info("the web password changed: %d sessions ended", len(self.sessions))
            for sid in list(self.sessions):
                self.end(sid)

    def csrf_of(self, session: str) -> str | None:
        self._check_version()
        found = self.sessions.get(session)
        if found is None:
            return None
        now = self.clock()
        if now - found.last_seen > IDLE_S:
            self.end(session)
            return None
        found.last_seen = now
        return found.csrf

    def wait_s(self, client: str) -> float:
        """Seconds before ``client`` may guess again (0: now)."""
        now = self.clock()
        return max(self.per_client.wait_s(client, now), self.overall.wait_s("*", now))

    async def login(self, client: str, password: str) -> str | None:
        """A new session id when ``password`` is the household's, else None (counted)."""
        stored = await asyncio.to_thread(read_password, self.state_dir)
        right = stored is not None and await asyncio.to_thread(stored.matches, password)
        now = self.clock()
        if not right or stored is None:
            self.per_client.failed(client, now)
            self.overall.failed("*", now)
            log.warning("web login: a wrong password from %s", client)
            return None
        self.per_client.succeeded(client)
        self.overall.succeeded("*")
        self._check_version()
        if stored.version != self._version:  # written between the read and now
            return None
        while len(self.sessions) >= MAX_SESSIONS:
            self.end(min(self.sessions, key=lambda s: self.sessions[s].last_seen))
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = Session(secrets.token_urlsafe(32), now)
        log.info("web login from %s", client)
        return sid

    def end(self, session: str) -> None:
        if self.sessions.pop(session, None) is not None:
            for told in self.on_end:
                told(session)
