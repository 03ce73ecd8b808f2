"""One person's local day read from the store, as the digest's plain facts: their devices'
events and their own words (the same queries as ``fayd today``: fayd.store.day_records),
their care rules' limits, the alerts opened that day and how they ended."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

import sqlite_utils

from fayd.care import records as rec
from fayd.care.digest import AlertEnd, DayFacts, MedicationDay, Reading
from fayd.care.evaluate import reading
from fayd.care.rules import ACTIVITY
from fayd.store import Store, day_records

#: Readings the digest reports, with the fields it reads from each.
READINGS = {
    "bp": ("sys", "dia"),
    "heart_rate": ("value",),
    "spo2": ("value",),
    "temperature": ("value",),
    "room_temperature": ("value",),
}
#: Feeling unwell, as the person told fayd (fayd.service.wellbeing).
WELLBEING = "wellbeing"
#: Events that matter on their own when no alert speaks for them.
INCIDENTS = {"panic": "The panic button was pressed", "fall": "A fall was detected"}


def day_bounds(day: date, zone: tzinfo) -> tuple[float, float]:
    start = datetime.combine(day, time(), zone)
    end = datetime.combine(day + timedelta(days=1), time(), zone)
    return start.timestamp(), end.timestamp()


def _limits(rules: list[Any], user: str, sensor: str) -> list[tuple[str, dict[str, float]]]:
    """("above"/"below", {field: limit}) of the person's threshold rules on ``sensor``."""
    out = []
    for r in rules:
        if r.user == user and r.kind == "threshold" and r.spec.get("sensor") == sensor:
            for side in ("above", "below"):
                if r.spec.get(side):
                    out.append((side, r.spec[side]))
    return out


def judge(
    sensor: str, data: dict[str, Any], limits: list[tuple[str, dict[str, float]]]
) -> Reading | None:
    """A reading with the limits it broke ("above the 150/95 limit"), or None when the event
    holds no value the digest can read."""
    values = {f: v for f in READINGS[sensor] if (v := reading(data, f)) is not None}
    if not values:
        return None
    broke = []
    for side, fields in limits:
        over = [
            f
            for f, limit in fields.items()
            if (v := reading(data, f)) is not None and (v > limit if side == "above" else v < limit)
        ]
        if over:
            shown = "/".join(f"{limit:g}" for limit in fields.values())
            broke.append(f"{side} the {shown} limit")
    return Reading(0.0, sensor, values, tuple(broke), bool(limits))


def _read(db: sqlite_utils.Database, user: str, day: date, start: float, end: float) -> DayFacts:
    rules = rec.rules(db)
    events = day_records.events_between(db, start, end, user)
    facts = DayFacts(user, day)
    alerted_events: set[int] = set()
    alert_rows = db.execute(
        f"SELECT {', '.join(rec.ALERT_COLUMNS)} FROM care_alerts"
        " WHERE user = ? AND opened_at >= ? AND opened_at < ? ORDER BY opened_at",
        [user, start, end],
    ).fetchall()
    for row in alert_rows:
        a = dict(zip(rec.ALERT_COLUMNS, row, strict=True))
        detail = json.loads(a["detail"])
        if isinstance(detail.get("event"), int):
            alerted_events.add(detail["event"])
        told = sorted(
            {o["caregiver"] for o in rec.outbox(db, a["id"]) if o["step"] >= 0 and o["sent_at"]}
        )
        facts.alerts.append(
            AlertEnd(
                a["opened_at"],
                a["text"],
                a["severity"],
                a["state"],
                a["closed_at"],
                a["closed_by"],
                tuple(told),
                str(detail.get("emergency") or ""),
            )
        )
    for ev in events:
        sensor, data = ev["sensor"], ev["data"] if isinstance(ev["data"], dict) else {}
        if sensor in ACTIVITY:
            facts.activity.append((ev["at"], ev["device"]))
        elif sensor in READINGS:
            found = judge(sensor, data, _limits(rules, user, sensor))
            if found is not None:
                facts.readings.append(
                    Reading(ev["at"], found.sensor, found.values, found.broke, found.judged)
                )
        elif sensor == WELLBEING:  # what they told fayd of feeling unwell
            said = str(data.get("said") or data.get("words") or "")[:200]
            facts.symptoms.append((ev["at"], str(data.get("symptom") or "unwell"), said))
        elif sensor in INCIDENTS and ev["id"] not in alerted_events and "fault" not in data:
            facts.incidents.append((ev["at"], INCIDENTS[sensor]))
    facts.said = [t["question"] for t in day_records.turns_between(db, start, end, user)]
    return facts


async def gather(
    store: Store, user: str, day: date, zone: tzinfo, medication: MedicationDay | None = None
) -> DayFacts:
    """The facts of ``user``'s ``day`` (local midnight to midnight in ``zone``)."""
    start, end = day_bounds(day, zone)
    facts = await store.run(_read, user, day, start, end)
    if medication is not None:
        facts.medication = await medication.medication(user, day)
    return facts
