"""What a committed alert change does outside the database: the frame to the household
(MQTT, retained while open), the spoken check-in, and the memory of it (``domain:homecare``,
``kind:event``). Each port may be missing; the engine goes on without that part."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from fayd.care import ladder
from fayd.care.ports import Announcer, Asker, Publisher, Unasked
from fayd.memory import Memory, NewNode, normalize_tags
from fayd.protocol import Alert

log = logging.getLogger(__name__)

IMPORTANCE = {"critical": 9.0, "warning": 7.0, "info": 4.0}
#: Alerts the person knows of (they pressed, fell, called for help): they are told when a
#: caregiver has taken it, as is anyone who was asked "are you all right?".
RAISED_BY_THE_PERSON = {"panic", "fall", "emergency"}
#: Said to the person when their pendant's alert goes straight to the caregivers (a call for
#: help said aloud is answered by the emergency skill itself).
REASSURE = {
    "fall": "It looks as if you've had a fall. I'm letting your family know now. "
    "Try not to get up too quickly.",
    "panic": "You pressed your alarm button. I'm letting your family know now.",
}


def frame(alert: dict[str, Any]) -> Alert:
    """A care alert as the ``alert`` frame of docs/protocol.md."""
    detail = alert["detail"]
    shown = {k: detail[k] for k in ("key", "sensor", "answer") if detail.get(k)}
    return Alert(
        id=alert["id"],
        kind=alert["kind"],
        severity=alert["severity"],
        text=alert["text"][:4000],
        at=alert["opened_at"],
        user=alert["user"],
        device=detail.get("device"),
        state=alert["state"],
        detail={
            **shown,
            "rule": alert["rule"],
            "count": alert["count"],
            "rung": alert["step"],
            **({"closed_by": alert["closed_by"]} if alert.get("closed_by") else {}),
        },
    )


def on_the_wire(alert: Alert) -> Alert:
    """What devices and MQTT carry of a person's alert: who and what kind, not the reading or
    the words said (a caregiver's notification and ``fayd care alerts list`` have those)."""
    if alert.user is None:  # the household's own (the disk): nothing personal in it
        return alert
    headline = ladder.headline(alert.kind, alert.detail.get("sensor"), alert.user)
    return dataclasses.replace(alert, text=headline)


class Effects:
    def __init__(
        self,
        default_user: str,
        publisher: Publisher | None = None,
        memory: Memory | None = None,
        announcer: Announcer | None = None,
        asker: Asker | None = None,
    ) -> None:
        self.default_user = default_user
        self.publisher = publisher
        self.memory = memory
        self.announcer = announcer
        self.asker = asker
        #: The engine's answer handler (set by the engine's builder).
        self.on_answer: Callable[[str, str | None], Awaitable[None]] | None = None
        #: The engine's handler of a check-in that could not be asked (alert id, why).
        self.on_unasked: Callable[[str, str], Awaitable[None]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def can_speak(self) -> bool:
        return self.asker is not None or self.announcer is not None

    def publish(self, alert: dict[str, Any]) -> None:
        if self.publisher is not None:
            self.publisher.publish(frame(alert))

    def changed(self, what: str, alert: dict[str, Any]) -> None:
        """``what``: opened, updated, escalated, joined, acknowledged, resolved; or kept
        (an alert raised from memory while the disk refused it, now written: it was
        announced then, and is remembered now)."""
        self.publish(alert)
        if what == "kept":
            self._background(self._remember("opened", alert))
        if what in ("opened", "acknowledged", "resolved"):
            self._background(self._remember(what, alert))
        if what == "opened" and alert["step"] == ladder.CHECKIN:
            self._background(self._check_in(alert))
        elif what == "opened" and (line := REASSURE.get(alert["detail"].get("sensor"))):
            if self.announcer is not None:  # straight to the caregivers: the person hears so
                # True only while the alert is open: not said late, after it was taken.
                self._background(self._say(alert, line, f"care:{alert['id']}:open"))

    def taken(self, alert: dict[str, Any], who: str) -> None:
        """A caregiver (``who``, as said to the person) acknowledged ``alert``: the person
        hears it, if they know of the alert and fayd can speak to them."""
        sensor = alert["detail"].get("sensor")
        asked = alert["detail"].get("answer") not in (None, "skipped")
        if self.announcer is None or not (sensor in RAISED_BY_THE_PERSON or asked):
            return
        line = f"{who} has seen your alert."
        self._background(self._say(alert, line))

    async def _say(self, alert: dict[str, Any], line: str, about: str | None = None) -> None:
        assert self.announcer is not None
        try:
            await self.announcer.announce(
                alert["user"], line, urgent=True, kind="care", about=about
            )
        except Exception as exc:
            log.error("care alert %s: could not tell %s: %s", alert["id"], alert["user"], exc)

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        """Stop check-ins and memory writes under way (the engine's task is stopping)."""
        for task in self._tasks:
            task.cancel()

    async def settle(self) -> None:
        """Wait for check-ins and memory writes under way (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _check_in(self, alert: dict[str, Any]) -> None:
        question = alert["detail"].get("question") or "Are you all right?"
        user = alert["user"]
        try:
            if self.asker is not None:
                answer = await self.asker.ask(user, question, timeout_s=ladder.CHECKIN_S)
                log.info("care alert %s: asked %s, heard %r", alert["id"], user, answer)
                if self.on_answer is not None:
                    await self.on_answer(alert["id"], answer)
            elif self.announcer is not None:  # no way to answer: silence escalates in time
                about = f"care:{alert['id']}:asking"  # never said once the check-in is over
                said = await self.announcer.announce(
                    user, question, urgent=True, kind="care", about=about
                )
                if not said:
                    raise Unasked("offline")
        except Unasked as exc:  # nothing was asked: the caregivers are told so, at once
            log.warning("care alert %s: could not ask %s (%s)", alert["id"], user, exc.why)
            if self.on_unasked is not None:
                await self.on_unasked(alert["id"], exc.why)
        except Exception as exc:  # speech failed: the caregivers are told it could not ask
            log.error("care alert %s: the check-in failed: %s", alert["id"], exc)
            if self.on_unasked is not None:
                await self.on_unasked(alert["id"], "failed")

    async def _remember(self, what: str, alert: dict[str, Any]) -> None:
        if self.memory is None:
            return
        at = alert["opened_at"] if what == "opened" else (alert.get("closed_at") or 0.0)
        moment = datetime.fromtimestamp(at)
        content = {
            "opened": f"Care alert for {alert['user']}: {alert['text']} ({alert['severity']})",
            "acknowledged": f"Care alert for {alert['user']} ({alert['text']}): "
            f"{alert['closed_by']}",
            "resolved": f"Care alert for {alert['user']} ({alert['text']}) ended: "
            f"{alert['closed_by']}",
        }[what]
        tags = normalize_tags(
            "event",
            "care",
            extra_tags=[
                "domain:homecare",
                f"date:{moment:%Y-%m-%d}",
                f"care_alert:{alert['id']}",
                f"care_rule:{alert['rule']}",
            ],
        )
        node = NewNode(
            content=content,
            username=alert["user"] or self.default_user,
            tags=tags,
            importance=IMPORTANCE.get(alert["severity"], 5.0),
            datetime=moment.strftime("%Y/%m/%d %H:%M:%S"),
        )
        try:
            await asyncio.to_thread(self.memory.add, [node])
        except Exception as exc:
            log.error("care alert %s not remembered: %s", alert["id"], exc)
