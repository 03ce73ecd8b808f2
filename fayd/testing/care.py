"""Real parts for the care tests: a store with household devices, sensor events written by
the same function the daemon uses, a clock the test moves, an HTTP server Apprise's json://
posts to, and a real SMTP server (aiosmtpd) for mailto://."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from datetime import UTC, datetime
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from fayd.care import AppriseDeliver, CareEngine, Effects
from fayd.protocol import Alert, SensorEvent
from fayd.store import Store
from fayd.store import devices_records as reg
from fayd.testing.harness import free_port

#: Monday 1 June 2026, 00:00 UTC: the tests' day one (the household's zone is UTC).
DAY_ONE = datetime(2026, 6, 1, tzinfo=UTC).timestamp()


def at(day: int, hhmm: str) -> float:
    hours, minutes = (int(x) for x in hhmm.split(":"))
    return DAY_ONE + (day - 1) * 86400 + hours * 3600 + minutes * 60


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Household:
    """A store with devices that belong to people, and events sent by them."""

    def __init__(self, folder: Path) -> None:
        self.store = Store(folder / "fayd.db")
        self.seq: dict[str, int] = {}

    def device(self, device: str, user: str, last_seen: float = DAY_ONE) -> None:
        def add(db: Any) -> None:
            db["devices"].insert(
                {
                    "id": device,
                    "roles": '["sensor"]',
                    "fw": "test",
                    "caps": "{}",
                    "audio_in": None,
                    "audio_out": None,
                    "user": user,
                    "online": 1,
                    "first_seen": last_seen,
                    "last_seen": last_seen,
                }
            )

        self.store.call(add)

    def event(self, device: str, sensor: str, when: float, **data: Any) -> None:
        self.events(device, sensor, [when], **data)

    def events(self, device: str, sensor: str, times: list[float], **data: Any) -> None:
        batch = []
        for when in times:
            self.seq[device] = self.seq.get(device, 0) + 1
            batch.append((device, SensorEvent(self.seq[device], sensor, when, dict(data))))
        self.store.call(reg.record_events, batch)

    def close(self) -> None:
        self.store.close()


class Posts:
    """An HTTP server on loopback that keeps what Apprise's json:// posts to it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.bodies: list[dict[str, Any]] = []
        self.refuse = False
        posts = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if posts.refuse:
                    self.send_response(503)
                else:
                    posts.bodies.append({"path": self.path, **body})
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, who: str) -> str:
        return f"json://127.0.0.1:{self.port}/{who}"

    @staticmethod
    def url_of(who: str) -> str:
        """A json:// URL on loopback (checked, not sent to)."""
        return f"json://127.0.0.1:9/{who}"

    def to(self, who: str) -> list[dict[str, Any]]:
        return [b for b in self.bodies if b["path"] == f"/{who}"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Mails:
    """A real SMTP server (aiosmtpd) on loopback; mailto:// delivers to it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.received: list[Any] = []
        mails = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                mails.received.append(message_from_bytes(envelope.content))
                return "250 OK"

        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def url(self, to: str) -> str:
        return (
            f"mailto://127.0.0.1:{self.port}?from=fayd@home.lan&to={to}"
            "&smtp=127.0.0.1&mode=insecure&user=&pass="
        )

    def close(self) -> None:
        self.controller.stop()


class Frames:
    """The Publisher port, keeping each alert frame (the daemon's sends them on MQTT)."""

    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def publish(self, alert: Alert) -> None:
        self.sent.append(alert)


class ScriptedAnswers:
    """The Asker port for the engine's own tests: the person's answers, in order (None is
    silence). The real speech path is the reminders' proactive speech, wired by the lead."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None:
        self.asked.append((user, question))
        await asyncio.sleep(0)
        return self.answers.pop(0) if self.answers else None


def engine(
    house: Household, clock: Clock, asker: Any = None, frames: Frames | None = None
) -> CareEngine:
    effects = Effects("mum", frames, None, None, asker)
    return CareEngine(house.store, AppriseDeliver(), effects, UTC, clock)


def wait_for(check: Any, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"not true within {within_s} s")
