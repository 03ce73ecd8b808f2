"""The care tables (migration m010_care) as functions of a ``sqlite_utils.Database``, run
through ``Store.run``/``Store.call``: each call is one transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlite_utils

from fayd.care.evaluate import Event
from fayd.care.rules import SENSORS, CareError, Known, Rule
from fayd.store import checksum

#: A device clock before 2020 is not trusted (as fayd.devices.sensors).
EARLIEST_TS = 1_577_836_800
ALERT_COLUMNS = (
    "id",
    "rule",
    "user",
    "kind",
    "severity",
    "text",
    "state",
    "opened_at",
    "step",
    "step_until",
    "count",
    "closed_at",
    "closed_by",
    "detail",
)


def _alert(row: tuple[Any, ...]) -> dict[str, Any]:
    alert = dict(zip(ALERT_COLUMNS, row, strict=True))
    alert["detail"] = json.loads(alert["detail"])
    return alert


# --- rules and caregivers ------------------------------------------------------------------


def rules(db: sqlite_utils.Database) -> list[Rule]:
    return [Rule.from_row(r) for r in db.query("SELECT * FROM care_rules ORDER BY id")]


def add_rule(db: sqlite_utils.Database, rule: Rule) -> None:
    db["care_rules"].insert(rule.to_row())
    checksum.sign(db, "care_rules", rule.name)


def remove_rule(db: sqlite_utils.Database, name: str) -> bool:
    """Forget a rule and its state; its alerts stay (the household's history)."""
    db.execute("DELETE FROM care_state WHERE key = ?", [f"rule:{name}"])
    return db.execute("DELETE FROM care_rules WHERE name = ?", [name]).rowcount > 0


def caregivers(db: sqlite_utils.Database) -> dict[str, list[str]]:
    rows = db.execute("SELECT name, urls FROM care_caregivers ORDER BY created_at").fetchall()
    return {name: json.loads(urls) for name, urls in rows}


def add_caregiver(
    db: sqlite_utils.Database, name: str, urls: list[str], now: float, people: Sequence[str] = ()
) -> None:
    """``people``: whom they look after (empty: the whole household; fayd.care.household)."""
    if db.execute("SELECT 1 FROM care_caregivers WHERE name = ?", [name]).fetchone():
        raise CareError(f"name: there is a caregiver {name!r} already")
    db.execute(
        "INSERT INTO care_caregivers (name, urls, created_at, people) VALUES (?, ?, ?, ?)",
        [name, json.dumps(urls), now, json.dumps(list(people))],
    )
    checksum.sign(db, "care_caregivers", name)


def caregivers_people(db: sqlite_utils.Database) -> dict[str, list[str]]:
    """Each caregiver's people (empty: the whole household)."""
    rows = db.execute("SELECT name, people FROM care_caregivers ORDER BY created_at").fetchall()
    return {name: json.loads(people or "[]") for name, people in rows}


def remove_caregiver(db: sqlite_utils.Database, name: str) -> bool:
    """Refused while a rule's ladder names them: that rule would tell nobody."""
    using = [r.name for r in rules(db) if any(who == name for who, _ in r.ladder)]
    if using:
        raise CareError(
            f"{name} is on the ladder of rule(s) {', '.join(using)}: remove those first"
        )
    return db.execute("DELETE FROM care_caregivers WHERE name = ?", [name]).rowcount > 0


def known(db: sqlite_utils.Database, default_user: str) -> Known:
    """Who and what a new rule may name: users with a device or a conversation (and the
    default user), devices seen or added, sensors fayd knows or has received."""
    users = {default_user}
    for sql in (
        "SELECT user FROM conversations",
        "SELECT user FROM devices",
        "SELECT user FROM device_settings",
    ):
        users.update(r[0] for r in db.execute(sql).fetchall() if r[0])
    devices = {
        r[0]
        for r in db.execute(
            "SELECT id FROM devices UNION SELECT device FROM device_settings"
            " UNION SELECT device FROM device_keys"
        ).fetchall()
    }
    sensors = {r[0] for r in db.execute("SELECT DISTINCT sensor FROM device_events").fetchall()}
    return Known(
        frozenset(users),
        frozenset(devices),
        frozenset(sensors - SENSORS),
        frozenset(caregivers(db)),
        tuple(rules(db)),
    )


# --- the engine's state --------------------------------------------------------------------


def state(db: sqlite_utils.Database) -> dict[str, Any]:
    return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM care_state")}


def set_state(db: sqlite_utils.Database, key: str, value: Any) -> None:
    db.execute(
        "INSERT INTO care_state (key, value) VALUES (?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, json.dumps(value)],
    )


def last_event_id(db: sqlite_utils.Database) -> int:
    return db.execute("SELECT coalesce(max(id), 0) FROM device_events").fetchone()[0]


def new_events(db: sqlite_utils.Database, after: int, limit: int) -> list[Event]:
    """Events stored after ``after``, oldest first, with their device's user."""
    rows = db.execute(
        "SELECT e.id, e.device, coalesce(e.user, s.user, d.user, ''), e.sensor, e.ts,"
        " e.received_at, e.data, e.epoch, e.seq FROM device_events e"
        " LEFT JOIN device_settings s ON s.device = e.device"
        " LEFT JOIN devices d ON d.id = e.device WHERE e.id > ? ORDER BY e.id LIMIT ?",
        [after, limit],
    ).fetchall()
    events = []
    for id_, device, user, sensor, ts, received, data, epoch, seq in rows:
        # The device's clock when plausible (a replay after an outage), else arrival.
        at = ts if isinstance(ts, float) and EARLIEST_TS <= ts <= received + 86400 else received
        body = json.loads(data) if data else {}
        body = body if isinstance(body, dict) else {}
        events.append(Event(id_, device, user, sensor, at, body, event_key(device, epoch, seq)))
    return events


def event_key(device: str, epoch: str | None, seq: int) -> str:
    """One sensor event's identity (fayd.care.evaluate.Event.key)."""
    return f"{device}/{epoch or ''}/{seq}"


def stored_event_id(db: sqlite_utils.Database, key: str) -> int | None:
    """The id of the stored event of ``key`` (event_key), if it is stored."""
    device, epoch, seq = key.rsplit("/", 2)
    row = db.execute(
        "SELECT id FROM device_events WHERE device = ? AND epoch = ? AND seq = ?",
        [device, epoch, int(seq)],
    ).fetchone()
    return row[0] if row else None


def last_seen(db: sqlite_utils.Database) -> dict[str, float]:
    return {
        d: s for d, s in db.execute("SELECT id, last_seen FROM devices").fetchall() if s is not None
    }


# --- alerts --------------------------------------------------------------------------------


def alerts(db: sqlite_utils.Database, states: tuple[str, ...], limit: int = 200) -> list[dict]:
    marks = ",".join("?" * len(states))
    rows = db.execute(
        f"SELECT {', '.join(ALERT_COLUMNS)} FROM care_alerts WHERE state IN ({marks})"
        " ORDER BY opened_at DESC LIMIT ?",
        [*states, limit],
    ).fetchall()
    return [_alert(r) for r in rows]


def alert(db: sqlite_utils.Database, alert_id: str) -> dict[str, Any] | None:
    row = db.execute(
        f"SELECT {', '.join(ALERT_COLUMNS)} FROM care_alerts WHERE id = ?", [alert_id]
    ).fetchone()
    return _alert(row) if row else None


def insert_alert(db: sqlite_utils.Database, alert: dict[str, Any]) -> None:
    db["care_alerts"].insert({**alert, "detail": json.dumps(alert["detail"], ensure_ascii=False)})


def update_alert(db: sqlite_utils.Database, alert_id: str, **changes: Any) -> None:
    if "detail" in changes:
        changes["detail"] = json.dumps(changes["detail"], ensure_ascii=False)
    sets = ", ".join(f"{k} = ?" for k in changes)
    db.execute(f"UPDATE care_alerts SET {sets} WHERE id = ?", [*changes.values(), alert_id])


def last_closed(db: sqlite_utils.Database, rule: str, key: str) -> float | None:
    """When this rule's last alert of ``key`` closed (its cooldown counts from then)."""
    for closed, detail in db.execute(
        "SELECT closed_at, detail FROM care_alerts WHERE rule = ? AND closed_at IS NOT NULL"
        " ORDER BY closed_at DESC LIMIT 20",
        [rule],
    ):
        if json.loads(detail).get("key", "") == key:
            return closed
    return None


# --- the outbox ----------------------------------------------------------------------------


def enqueue(db: sqlite_utils.Database, rows: list[dict[str, Any]]) -> int:
    """Notifications to send; one already queued (same alert, step, caregiver, URL) is not
    queued again, so a step replayed after a restart sends nothing twice."""
    added = 0
    for row in rows:
        added += db.execute(
            "INSERT OR IGNORE INTO care_outbox (alert, step, caregiver, url, title, body,"
            " created_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [row[k] for k in ("alert", "step", "caregiver", "url", "title", "body")]
            + [row["at"], row["at"]],
        ).rowcount
    return added


def due(db: sqlite_utils.Database, now: float, limit: int = 20) -> list[dict[str, Any]]:
    return list(
        db.query(
            "SELECT id, alert, step, caregiver, url, title, body, attempts FROM care_outbox"
            " WHERE sent_at IS NULL AND next_at <= ? ORDER BY next_at LIMIT ?",
            [now, limit],
        )
    )


def next_due(db: sqlite_utils.Database) -> float | None:
    return db.execute("SELECT min(next_at) FROM care_outbox WHERE sent_at IS NULL").fetchone()[0]


def sent(db: sqlite_utils.Database, row_id: int, now: float) -> None:
    db.execute(
        "UPDATE care_outbox SET sent_at = ?, attempts = attempts + 1, last_error = NULL"
        " WHERE id = ?",
        [now, row_id],
    )


def failed(db: sqlite_utils.Database, row_id: int, error: str, next_at: float) -> None:
    db.execute(
        "UPDATE care_outbox SET attempts = attempts + 1, last_error = ?, next_at = ? WHERE id = ?",
        [error[:300], next_at, row_id],
    )


def undelivered(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Notifications not sent yet after at least one try (``fayd status`` shows them)."""
    return list(
        db.query(
            "SELECT id, alert, caregiver, url, attempts, last_error, next_at FROM care_outbox"
            " WHERE sent_at IS NULL AND attempts > 0 ORDER BY created_at"
        )
    )


def outbox(db: sqlite_utils.Database, alert_id: str | None = None) -> list[dict[str, Any]]:
    where, args = ("WHERE alert = ?", [alert_id]) if alert_id else ("", [])
    return list(db.query(f"SELECT * FROM care_outbox {where} ORDER BY id", args))
