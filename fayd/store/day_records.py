"""What happened between two times, for ``fayd today``: devices' sensor events and the
conversation turns (whose meta names the skill that answered and the alert it raised),
oldest first. Reads only: the CLI runs them on a read-only connection, daemon or not."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

#: A device clock before 2020 is not a clock (a board without time counts from 1970 or
#: 2000): such an event is placed when fayd received it.
PLAUSIBLE_CLOCK = 1577836800.0
_EVENT_AT = f"(CASE WHEN e.ts > {PLAUSIBLE_CLOCK} THEN e.ts ELSE e.received_at END)"
#: Whose an event is: the person it names (what they said of how they feel, on any device),
#: else its device's: the one set with ``fayd devices set``, else its hello's.
_DEVICE_USER = "coalesce(e.user, s.user, d.user)"


def events_between(
    db: sqlite_utils.Database, start: float, end: float, user: str | None = None
) -> list[dict[str, Any]]:
    """Sensor events in [start, end), by the device's clock when it has one; with ``user``,
    only those of that user's devices (whose user is now)."""
    sql = (
        f"SELECT e.id, {_EVENT_AT}, e.device, e.sensor, e.data, {_DEVICE_USER}"
        " FROM device_events e LEFT JOIN device_settings s ON s.device = e.device"
        f" LEFT JOIN devices d ON d.id = e.device WHERE {_EVENT_AT} >= ? AND {_EVENT_AT} < ?"
    )
    args: list[Any] = [start, end]
    if user is not None:
        sql += f" AND {_DEVICE_USER} = ?"
        args.append(user)
    rows = db.execute(sql + f" ORDER BY {_EVENT_AT}, e.id", args).fetchall()
    keys = ("id", "at", "device", "sensor", "data", "user")
    events = [dict(zip(keys, r, strict=True)) for r in rows]
    for event in events:
        event["data"] = json.loads(event["data"]) if event["data"] else {}
    return events


def turns_between(
    db: sqlite_utils.Database, start: float, end: float, user: str | None = None
) -> list[dict[str, Any]]:
    """Turns stored in [start, end): the question, the reply (``records.record_turn``
    writes the two rows one after the other) and the turn's meta."""
    sql = (
        "SELECT q.id, q.created_at, c.user, c.device, q.text, a.text, q.meta"
        " FROM messages q JOIN conversations c ON c.id = q.conversation_id"
        " LEFT JOIN messages a ON a.id = q.id + 1 AND a.conversation_id = q.conversation_id"
        " AND a.role = 'assistant'"
        " WHERE q.role = 'user' AND q.created_at >= ? AND q.created_at < ?"
    )
    args: list[Any] = [start, end]
    if user is not None:
        sql += " AND c.user = ?"
        args.append(user)
    rows = db.execute(sql + " ORDER BY q.created_at, q.id", args).fetchall()
    keys = ("id", "at", "user", "device", "question", "answer", "meta")
    turns = [dict(zip(keys, r, strict=True)) for r in rows]
    for turn in turns:
        turn["meta"] = json.loads(turn["meta"]) if turn["meta"] else {}
    return turns


def known_users(db: sqlite_utils.Database) -> list[str]:
    """Everyone fayd has a turn or a device for."""
    rows = db.execute(
        "SELECT user FROM conversations UNION SELECT user FROM devices"
        " UNION SELECT user FROM device_settings"
    ).fetchall()
    return sorted(r[0] for r in rows if r[0])
