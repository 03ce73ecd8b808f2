"""The alerts as they exist today (docs/protocol.md, *alert*): ``alert`` frames that fayd
announces retained on ``<prefix>/alerts/<id>``. :class:`AnnouncedAlerts` keeps the open
ones by reading that topic — fayd's own announcements come back through it, and after a
restart the broker's retained copies say which are still open — and acknowledges one by
announcing it again with ``state: "acknowledged"`` — or, for an alert the care engine keeps
(``keeper``), by acknowledging it there: its ladder stops and it announces the end.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable

from fayd.errors import ProtocolError
from fayd.protocol import Alert, decode

log = logging.getLogger(__name__)

OPEN = "open"
ACKNOWLEDGED = "acknowledged"


def alert_id_of(topic: str, prefix: str) -> str | None:
    """The id of ``<prefix>/alerts/<id>``, or None for another topic."""
    head = f"{prefix}/alerts/"
    rest = topic[len(head) :] if topic.startswith(head) else ""
    return rest if rest and "/" not in rest else None


def read_alert(topic: str, payload: bytes, prefix: str) -> tuple[str, Alert | None] | None:
    """(its id, the alert) of a message on an alert topic; the alert is None when the
    payload is empty (resolved: its retained copy cleared). None when the message is not an
    alert fayd can read (another topic, a bad frame: logged)."""
    alert_id = alert_id_of(topic, prefix)
    if alert_id is None:
        return None
    if not payload:
        return alert_id, None
    try:
        alert = decode("alert", payload)
    except ProtocolError as exc:
        log.warning("alert on %s not understood: %s", topic, exc)
        return None
    if alert.id != alert_id:
        log.warning("alert on %s names another id (%r): ignored", topic, alert.id)
        return None
    return alert_id, alert


class AnnouncedAlerts:
    """Open alerts, from their topic; ``announce`` publishes an alert (retained)."""

    def __init__(
        self,
        prefix: str,
        announce: Callable[[Alert], None],
        clock: Callable[[], float] = time.time,
        keeper: Callable[[str, str], Awaitable[bool]] | None = None,
    ) -> None:
        self.prefix = prefix
        self.announce = announce
        self.clock = clock
        #: Who keeps the alerts (the care engine): it acknowledges, stops the ladder and
        #: announces; False when it does not know the alert (then it is announced here).
        self.keeper = keeper
        self.open: dict[str, Alert] = {}

    async def observe(self, topic: str, payload: bytes, retained: bool) -> None:
        """A message on ``<prefix>/alerts/#`` (fayd.transport.mqtt.Listener)."""
        found = read_alert(topic, payload, self.prefix)
        if found is None:
            return
        alert_id, alert = found
        if alert is not None and alert.state == OPEN:
            self.open[alert_id] = alert
        else:
            self.open.pop(alert_id, None)

    async def acknowledge(self, alert_id: str, by: str) -> bool:
        alert = self.open.pop(alert_id, None)
        if alert is None:
            return False
        if self.keeper is not None and await self.keeper(alert_id, by):
            log.info("alert %s (%s) acknowledged by %s", alert_id, alert.kind, by)
            return True
        detail = {**alert.detail, "acknowledged_by": by, "acknowledged_at": self.clock()}
        self.announce(dataclasses.replace(alert, state=ACKNOWLEDGED, detail=detail))
        log.info("alert %s (%s) acknowledged by %s", alert_id, alert.kind, by)
        return True
