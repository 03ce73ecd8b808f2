"""The agent's Readings port (fayd.agent.ports) served on the store: a person's newest
stored reading of a kind, from the care events their devices sent (``device_events``, whose
device belongs to them now), by the device's clock when it is plausible — the same
placement as ``fayd today`` and the digest (fayd.store.day_records)."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from fayd.agent.ports import Reading
from fayd.care.evaluate import reading
from fayd.store import Store
from fayd.store.day_records import PLAUSIBLE_CLOCK

#: The fields a reading of each sensor is said with (others are kept as they come).
FIELDS = {"bp": ("sys", "dia", "pulse")}
_AT = f"(CASE WHEN e.ts > {PLAUSIBLE_CLOCK} THEN e.ts ELSE e.received_at END)"
#: Rows looked at per question: a reading with no value (a cuff's error) is skipped.
_SCAN = 20


def _latest(
    db: sqlite_utils.Database, user: str, sensors: tuple[str, ...], after: float, before: float
) -> Reading | None:
    marks = ", ".join("?" for _ in sensors)
    rows = db.execute(
        f"SELECT e.sensor, {_AT}, e.data FROM device_events e"
        " LEFT JOIN device_settings s ON s.device = e.device"
        " LEFT JOIN devices d ON d.id = e.device"
        f" WHERE coalesce(s.user, d.user) = ? AND e.sensor IN ({marks})"
        f" AND {_AT} >= ? AND {_AT} < ? ORDER BY {_AT} DESC, e.id DESC LIMIT {_SCAN}",
        [user, *sensors, after, before],
    ).fetchall()
    for sensor, at, data in rows:
        body: Any = json.loads(data) if data else {}
        if not isinstance(body, dict):
            continue
        fields = FIELDS.get(sensor, ("value",))
        values = {f: v for f in fields if (v := reading(body, f)) is not None}
        if sensor == "bp" and not {"sys", "dia"} <= set(values):
            continue  # half a blood pressure is not said
        if values:
            return Reading(sensor, float(at), values)
    return None


class StoredReadings:
    """``Readings`` on the household's store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def latest(
        self, user: str, sensors: tuple[str, ...], after: float = 0.0, before: float | None = None
    ) -> Reading | None:
        if not sensors:
            return None
        end = before if before is not None else float("inf")
        return await self.store.run(_latest, user, sensors, after, end)
