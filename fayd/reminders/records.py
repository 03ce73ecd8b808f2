"""Reminders in SQLite (migration m010) and their firing; what waits to be said and the
check-ins are ``queue.py``'s. Each function takes the Database first, so it runs inside
``Store.run``/``Store.call`` (one transaction)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import sqlite_utils

from fayd.reminders import say
from fayd.reminders.queue import DEFAULTS, Settings, keep, rows_of
from fayd.reminders.rules import BadRule, Rule, next_occurrence, zone
from fayd.store import checksum

KINDS = ("reminder", "medication", "timer", "greeting")
_COLUMNS = (
    "id, username, text, kind, name, urgent, lang, tz, rule, first_at, due_at, next_at,"
    " state, error, source, device, created_at, fired_at"
)


def add(db: sqlite_utils.Database, fields: dict[str, Any]) -> int:
    """A checked reminder (fayd.reminders.book) as a new row; returns its id."""
    now = time.time()
    cursor = db.execute(
        "INSERT INTO reminders (username, text, kind, name, urgent, lang, tz, rule, first_at,"
        " due_at, next_at, state, source, device, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)",
        [
            fields["user"],
            fields["text"],
            fields["kind"],
            fields.get("name", ""),
            int(bool(fields.get("urgent"))),
            fields.get("lang", "en"),
            fields["tz"],
            fields["rule"],
            fields["first_at"],
            fields["due_at"],
            fields["due_at"],
            fields.get("source", ""),
            fields.get("device", ""),
            now,
        ],
    )
    checksum.sign(db, "reminders", cursor.lastrowid)
    return int(cursor.lastrowid)


def get(db: sqlite_utils.Database, reminder: int) -> dict[str, Any] | None:
    rows = rows_of(db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE id = ?", [reminder]))
    return rows[0] if rows else None


def of_user(
    db: sqlite_utils.Database, user: str | None, states: tuple[str, ...] = ("active",)
) -> list[dict[str, Any]]:
    """A user's reminders (every user's when None) in the given states, soonest first."""
    marks = ",".join("?" * len(states))
    where = f"state IN ({marks})" + (" AND username = ?" if user is not None else "")
    args = [*states, *([user] if user is not None else [])]
    return rows_of(
        db.execute(
            f"SELECT {_COLUMNS} FROM reminders WHERE {where} ORDER BY coalesce(next_at, 1e18), id",
            args,
        )
    )


def cancel(db: sqlite_utils.Database, reminder: int) -> bool:
    cursor = db.execute(
        "UPDATE reminders SET state = 'cancelled', next_at = NULL"
        " WHERE id = ? AND state = 'active'",
        [reminder],
    )
    return cursor.rowcount == 1


def snooze(db: sqlite_utils.Database, reminder: int, until: float) -> bool:
    """Fire again at ``until`` (the rule's later occurrences stay as they were); a one-off
    that already fired comes back for the snooze."""
    cursor = db.execute(
        "UPDATE reminders SET next_at = ?, state = 'active', due_at = coalesce(due_at, ?)"
        " WHERE id = ? AND state IN ('active', 'done')",
        [until, until, reminder],
    )
    return cursor.rowcount == 1


def last_fired(db: sqlite_utils.Database, user: str) -> dict[str, Any] | None:
    """The user's reminder that fired last (what "snooze" means without a name); a timer is
    no reminder to put off: it rings until answered."""
    rows = rows_of(
        db.execute(
            f"SELECT {_COLUMNS} FROM reminders WHERE username = ? AND fired_at IS NOT NULL"
            " AND kind != 'timer'"
            " AND state != 'cancelled' ORDER BY fired_at DESC LIMIT 1",
            [user],
        )
    )
    return rows[0] if rows else None


def broken(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT count(*) FROM reminders WHERE state = 'broken'").fetchone()[0])


def next_time(db: sqlite_utils.Database) -> float | None:
    """The soonest fire of a reminder or a check-in (None: nothing scheduled)."""
    row = db.execute(
        "SELECT min(t) FROM (SELECT min(next_at) AS t FROM reminders WHERE state = 'active'"
        " UNION ALL SELECT min(next_at) FROM checkins WHERE state = 'open')"
    ).fetchone()
    return row[0]


def take_due(
    db: sqlite_utils.Database, now: float, limit: int, checks: Settings = DEFAULTS
) -> tuple[list[dict[str, Any]], int]:
    """Fire what is due at ``now``, in one transaction: each due reminder moves on to its
    next occurrence (missed ones are one fire, not one per miss) and leaves an announcement
    (and a check-in, for medication); a row that cannot be read is marked broken. Returns the
    new announcements and how many rows broke."""
    rows = rows_of(
        db.execute(
            f"SELECT {_COLUMNS} FROM reminders WHERE state = 'active' AND next_at <= ?"
            " ORDER BY next_at, id LIMIT ?",
            [now, limit],
        )
    )
    made, broke = [], 0
    for row in rows:
        try:
            made.append(_fire(db, row, now, checks))
        except (BadRule, KeyError, TypeError, ValueError, OverflowError) as exc:
            broke += 1
            db.execute(
                "UPDATE reminders SET state = 'broken', error = ? WHERE id = ?",
                [f"{type(exc).__name__}: {exc}"[:300], row["id"]],
            )
    return made, broke


def _fire(
    db: sqlite_utils.Database, row: dict[str, Any], now: float, checks: Settings
) -> dict[str, Any]:
    tz = zone(row["tz"])
    rule = Rule.from_json(row["rule"])
    fire_at = float(row["next_at"])
    due_at = row["due_at"]
    if due_at is None or due_at <= now:  # the rule's occurrence fired (or was missed)
        first = datetime.fromtimestamp(float(row["first_at"]), UTC)
        fire_at = _latest(rule, first, fire_at, now, tz) if due_at is not None else fire_at
        later = next_occurrence(rule, first, datetime.fromtimestamp(now, UTC), tz)
        due_at = later.timestamp() if later else None
    state = "active" if due_at is not None else "done"
    db.execute(
        "UPDATE reminders SET due_at = ?, next_at = ?, state = ?, fired_at = ? WHERE id = ?",
        [due_at, due_at, state, now, row["id"]],
    )
    text = say.fired(row["text"], row["kind"], row["name"], row["lang"])
    checkin = None
    if row["kind"] == "medication":
        checkin = int(
            db.execute(
                "INSERT INTO checkins (username, reminder_id, text, lang, asked_at, next_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    row["username"],
                    row["id"],
                    row["text"],
                    row["lang"],
                    now,
                    now + checks.ask_again_s,
                ],
            ).lastrowid
        )
    return keep(db, row["username"], text, row["kind"], bool(row["urgent"]), row["lang"],
                     fire_at, row["id"], checkin)  # fmt: skip


def _latest(rule: Rule, first: datetime, missed: float, now: float, tz: Any) -> float:
    """Of the occurrences missed since ``missed`` (fayd was down), the last one: that is
    the one said, late, once ("due at 08:00, two hours ago", not three days ago)."""
    at = missed
    for _ in range(10_000):
        later = next_occurrence(rule, first, datetime.fromtimestamp(at, UTC), tz)
        if later is None or later.timestamp() > now:
            break
        at = later.timestamp()
    return at
