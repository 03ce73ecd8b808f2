"""What a person tells fayd of how they feel ("I feel a bit dizzy"), kept as a care event:
a ``device_events`` row of sensor ``wellbeing`` that names the person (``user``; any device,
shared or not), so the care engine's rules, the daily digest and ``fayd today`` see it as
they see a sensor's. And, when the person says yes, a notice to the family who look after
them, through the care engine's outbox (retried, shown in ``fayd status`` until it goes):
a notice, never an alarm. The agent's port: fayd.agent.ports.Wellbeing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import sqlite_utils

from fayd.care import records as rec
from fayd.care.household import load as load_household
from fayd.store import Store

#: The sensor of what a person said of how they feel (fayd.care.rules.SENSORS).
SENSOR = "wellbeing"
#: The epoch of fayd's own wellbeing events: no device's firmware writes it.
EPOCH = "said"


def _record(
    db: sqlite_utils.Database, user: str, device: str, data: dict[str, Any], at: float
) -> int:
    """One wellbeing event of ``user``; its id. The seq is the time in milliseconds (one
    person says one thing per turn), made unique against an earlier row at the same time."""
    seq = int(at * 1000)
    while db.execute(
        "SELECT 1 FROM device_events WHERE device = ? AND epoch = ? AND seq = ?",
        [device, EPOCH, seq],
    ).fetchone():
        seq += 1
    cursor = db.execute(
        "INSERT INTO device_events (device, epoch, seq, sensor, ts, data, received_at, user)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [device, EPOCH, seq, SENSOR, at, json.dumps(data, ensure_ascii=False), time.time(), user],
    )
    return int(cursor.lastrowid or 0)


def _family(db: sqlite_utils.Database, user: str) -> dict[str, list[str]]:
    """The caregivers who look after ``user`` (docs/security.md, *Who is who*), with their
    notification addresses."""
    watchers = load_household(db).watchers(user)
    return {name: urls for name, urls in rec.caregivers(db).items() if name in watchers}


def _queue(db: sqlite_utils.Database, user: str, title: str, body: str, now: float) -> list[str]:
    family = _family(db, user)
    rows = [
        {
            "alert": f"said-{user}-{int(now * 1000)}",
            "step": 0,
            "caregiver": who,
            "url": url,
            "title": title,
            "body": body,
            "at": now,
        }
        for who, urls in family.items()
        for url in urls
    ]
    rec.enqueue(db, rows)
    return sorted(family)


class SaidWellbeing:
    """fayd.agent.ports.Wellbeing on the store and the care engine's outbox."""

    def __init__(
        self,
        store: Store,
        stored: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        #: Told after an event is written (the care engine and the event memory look now)
        #: and after a notice is queued (the care engine sends it).
        self.store, self.stored, self.clock = store, stored, clock

    async def record(self, user: str, device: str, data: dict[str, Any], at: float) -> int:
        found = await self.store.run(_record, user, device, data, at)
        if self.stored is not None:
            self.stored()
        return found

    async def family(self, user: str) -> list[str]:
        return sorted(await self.store.run(_family, user))

    async def tell_family(self, user: str, title: str, body: str) -> list[str]:
        told = await self.store.run(_queue, user, title, body, self.clock())
        if told and self.stored is not None:
            self.stored()
        return told
