"""Care before the disk: urgent events judged as they arrive, and raised from memory when the
disk refuses them.

The care engine judges what is stored, and a full or failing disk would hold a panic press
until it could be written. So each sensor event is also shown, on arrival, to the urgent
rules (critical event and threshold rules, as the last pass read them): one they would fire
on joins the engine's next pass as a report, committed with it. When that pass cannot be
written, :class:`Early` raises the alert from memory at once: published to the household's
devices, the person reassured aloud, and the first caregiver of its ladder sent the same
notification the ladder would send. The report stays queued; when the disk takes writes
again the pass commits the same alert (same id) with that rung's notifications marked as
sent, so nobody is told twice. Later rungs wait for the disk (the reserve, fayd.store.reserve,
makes that short). The household's own notices (a full disk) go to every caregiver the same
way.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import Any

from fayd.care.alerts import AlertBook
from fayd.care.evaluate import Event, Fire, on_event
from fayd.care.notify import DeliveryError
from fayd.care.ports import Deliver
from fayd.care.rules import Rule
from fayd.logwords import words

log = logging.getLogger(__name__)

#: Keys of events judged on arrival, remembered so a resend is not judged again.
KEPT_KEYS = 2000


def urgent(rule: Rule) -> bool:
    """A rule whose alert may not wait for the disk."""
    return rule.severity == "critical" and rule.kind in ("event", "threshold")


@dataclass
class Memo:
    """What the last pass read: enough to judge and tell without the disk."""

    rules: list[Rule] = field(default_factory=list)
    states: dict[str, Any] = field(default_factory=dict)
    caregivers: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Told:
    """An alert raised from memory, not yet written: who was sent what."""

    alert: dict[str, Any]
    caregiver: str
    urls: list[str]


class Early:
    def __init__(self, book: AlertBook, deliver: Deliver, zone: tzinfo) -> None:
        self.book, self.deliver, self.zone = book, deliver, zone
        self.memo = Memo()
        #: Events judged on arrival (device/epoch/seq), oldest first.
        self.judged: OrderedDict[str, None] = OrderedDict()
        #: Alerts raised from memory and not yet written, by id.
        self.told: dict[str, Told] = {}

    def judge(self, event: Event) -> Event | None:
        """``event`` as a report for the next pass when an urgent rule fires on it (with
        an alert id of its own, kept when it is raised from memory), else None."""
        if event.key in self.judged:
            return None
        if not any(self._fires(rule, event) for rule in self.memo.rules if urgent(rule)):
            return None
        self.judged[event.key] = None
        while len(self.judged) > KEPT_KEYS:
            self.judged.popitem(last=False)
        return event

    def _fires(self, rule: Rule, event: Event) -> list[Fire]:
        state = copy.deepcopy(self.memo.states.get(rule.name) or {})
        decisions = on_event(rule, state, event, self.zone)
        return [d for d in decisions if isinstance(d, Fire)]

    async def raise_from_memory(
        self, reports: list[Event], now: float, changed: Callable[[str, dict[str, Any]], None]
    ) -> list[Event]:
        """The pass could not be written: raise each report's urgent alerts now. Returns
        the reports to queue again, each naming the alert id it was raised under."""
        out = []
        for report in reports:
            alert_id = report.data.get("alert_id")
            if alert_id in self.told:
                out.append(report)
                continue
            fired = [
                (rule, fire)
                for rule in self.memo.rules
                if urgent(rule) or report.sensor == "emergency"
                for fire in self._fires(rule, report)
            ]
            if not fired:
                out.append(report)
                continue
            rule, fire = fired[0]  # one alert per report: the others wait for the disk
            alert = self.book.draft(rule, fire, now)
            report = replace(report, data={**report.data, "alert_id": alert["id"]})
            out.append(report)
            await self._tell(rule, {**alert, "step": 0, "step_until": None}, changed)
        return out

    async def _tell(
        self,
        rule: Rule,
        alert: dict[str, Any],
        changed: Callable[[str, dict[str, Any]], None],
    ) -> None:
        log.error(
            "care alert %s raised from memory (the database refuses writes): %s",
            alert["id"],
            words(alert["text"]),
        )
        changed("opened", alert)
        if not rule.ladder:
            self.told[alert["id"]] = Told(alert, "", [])
            return
        who = rule.ladder[0][0]
        title, body = self.book.message(alert, 0)
        sent = await self.send(self.memo.caregivers.get(who, []), title, body)
        self.told[alert["id"]] = Told(alert, who, sent)

    async def tell_everyone(self, title: str, body: str) -> int:
        """A notice of the household's own (the disk): to every caregiver, from memory.
        The number of caregivers it reached."""
        reached = 0
        for urls in self.memo.caregivers.values():
            reached += bool(await self.send(urls, title, body))
        return reached

    async def send(self, urls: list[str], title: str, body: str) -> list[str]:
        """Send to each URL now; the ones that took it."""

        async def one(url: str) -> str | None:
            try:
                await self.deliver.send(url, title, body)
            except (DeliveryError, OSError) as exc:
                log.error("care: a notification sent from memory did not go: %s", exc)
                return None
            return url

        done = await asyncio.gather(*(one(u) for u in urls))
        return [u for u in done if u is not None]

    def written(self, alert_ids: set[str]) -> None:
        """These alerts are in the database now."""
        for alert_id in alert_ids:
            self.told.pop(alert_id, None)
