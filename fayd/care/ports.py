"""What the care engine needs from the rest of fayd, as small Protocols that
``fayd.service.wiring`` plugs real objects into (each may be missing: the engine says so in
the log and goes on without that step)."""

from __future__ import annotations

from datetime import date
from typing import Any, Protocol

from fayd.protocol import Alert


class Announcer(Protocol):
    """Speech that fayd starts itself (the reminders' proactive speech)."""

    async def announce(
        self,
        user: str,
        text: str,
        *,
        urgent: bool = False,
        kind: str = "reminder",
        about: str | None = None,
    ) -> bool:
        """``about``: what must still be true when it is said ("care:<alert id>:open"), or
        the words are dropped (fayd.agent.announce.Speaker.truths)."""
        ...


class Unasked(Exception):
    """The check-in could not be said: no speaker of the person is online (``why`` is
    "offline"), or none was free to say it in time ("busy"). Nothing was asked."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Asker(Protocol):
    """Ask ``user`` a yes/no question aloud and return what they answered, as text, or None
    when nothing was heard within ``timeout_s`` (silence). Raises :class:`Unasked` when the
    question could not be said at all."""

    async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None: ...


class Publisher(Protocol):
    """An alert's state to the household: devices and MQTT (retained while open)."""

    def publish(self, alert: Alert) -> None: ...


class Deliver(Protocol):
    """One notification to one Apprise URL; raises DeliveryError when it did not go."""

    async def send(self, url: str, title: str, body: str) -> None: ...


class Digests(Protocol):
    """The daily digest (fayd.care.daily.DailyDigest), as ``fayd care digest`` asks it."""

    async def text(self, user: str, day: date) -> str: ...

    async def send(self, user: str, day: date, scheduled: bool = False) -> dict[str, Any]: ...


class Owners(Protocol):
    """Whose a device is (the device registry): an ``ack`` from a device counts only as
    its owner's, and only from a device that is one person's own."""

    def personal_owner(self, device: str) -> str | None:
        """The owner of ``device`` when it is one person's own; None when it is shared,
        nobody's, or unknown."""
        ...

    def user_of(self, device: str) -> str | None:
        """The person ``device`` speaks for (its owner, else its hello's), held in memory."""
        ...
