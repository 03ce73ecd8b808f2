"""What waits to be said (``announcements``: a fire is kept until a device has said it,
across restarts) and medication check-ins (asked, asked again, answered, or left
unconfirmed: a care event). Functions take the Database first (``Store.run``)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from fayd.reminders import say


@dataclass(frozen=True)
class Settings:
    """How check-ins go: asked again after ``ask_again_s``; after ``tries`` questions without
    a yes or no, an ``unconfirmed_medication`` care event."""

    ask_again_s: float = 600.0
    tries: int = 2


DEFAULTS = Settings()


def rows_of(cursor: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def keep(
    db: sqlite_utils.Database,
    user: str,
    text: str,
    kind: str,
    urgent: bool,
    lang: str,
    due_at: float,
    reminder: int | None = None,
    checkin: int | None = None,
    about: str | None = None,
) -> dict[str, Any]:
    """``about``: what must still be true when it is said (fayd.agent.announce)."""
    now = time.time()
    cursor = db.execute(
        "INSERT INTO announcements (username, text, kind, urgent, lang, due_at, created_at,"
        " reminder_id, checkin_id, about) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [user, text, kind, int(urgent), lang, due_at, now, reminder, checkin, about],
    )
    return {
        "id": int(cursor.lastrowid),
        "user": user,
        "text": text,
        "kind": kind,
        "urgent": urgent,
        "lang": lang,
        "due_at": due_at,
        "reminder_id": reminder,
        "checkin_id": checkin,
        "about": about,
    }


def announce(db: sqlite_utils.Database, item: dict[str, Any]) -> dict[str, Any]:
    """Something to say to a user as soon as a device can (kept across restarts)."""
    return keep(
        db,
        item["user"],
        item["text"],
        item.get("kind", "reminder"),
        bool(item.get("urgent")),
        item.get("lang", "en"),
        float(item["due_at"]),
        item.get("reminder_id"),
        item.get("checkin_id"),
        item.get("about"),
    )


def waiting(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    rows = rows_of(
        db.execute(
            "SELECT id, username AS user, text, kind, urgent, lang, due_at, reminder_id,"
            " checkin_id, about FROM announcements WHERE state = 'waiting' ORDER BY due_at, id"
        )
    )
    for row in rows:
        row["urgent"] = bool(row["urgent"])
    return rows


def spoken(db: sqlite_utils.Database, announcement: int, devices: list[str], at: float) -> None:
    db.execute(
        "UPDATE announcements SET state = 'spoken', spoken_at = ?, devices = ? WHERE id = ?",
        [at, json.dumps(devices), announcement],
    )


def spoken_on(db: sqlite_utils.Database, user: str) -> list[str]:
    """The devices ``user`` last spoke or typed on, the latest first (fayd's own
    conversation of the command line is no device)."""
    rows = db.execute(
        "SELECT device FROM conversations WHERE user = ? AND device != 'cli'"
        " GROUP BY device ORDER BY max(last_at) DESC LIMIT 5",
        [user],
    ).fetchall()
    return [r[0] for r in rows]


# --- check-ins -------------------------------------------------------------------------


def take_checkins(
    db: sqlite_utils.Database, now: float, checks: Settings = DEFAULTS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Check-ins whose time came: asked again (an announcement), or, after ``checks.tries``
    questions, given up on: an ``unconfirmed_medication`` care event in ``device_events``
    (device "fayd", epoch "care"), like a sensor's. Returns (announcements, events)."""
    rows = rows_of(
        db.execute(
            "SELECT id, username, reminder_id, text, lang, asked_at, tries FROM checkins"
            " WHERE state = 'open' AND next_at <= ? ORDER BY next_at",
            [now],
        )
    )
    asked, events = [], []
    for row in rows:
        if row["tries"] < checks.tries:
            db.execute(
                "UPDATE checkins SET tries = tries + 1, next_at = ? WHERE id = ?",
                [now + checks.ask_again_s, row["id"]],
            )
            text = say.ask_again(row["text"], row["lang"])
            asked.append(
                keep(
                    db,
                    row["username"],
                    text,
                    "checkin",
                    False,
                    row["lang"],
                    now,
                    row["reminder_id"],
                    row["id"],
                )
            )
            continue
        db.execute("UPDATE checkins SET state = 'unconfirmed' WHERE id = ?", [row["id"]])
        data = {
            "user": row["username"],
            "what": row["text"],
            "reminder": row["reminder_id"],
            "asked_at": row["asked_at"],
            "tries": row["tries"],
        }
        db.execute(
            "INSERT OR IGNORE INTO device_events (device, epoch, seq, sensor, ts, data,"
            " received_at) VALUES ('fayd', 'care', ?, 'unconfirmed_medication', ?, ?, ?)",
            [row["id"], now, json.dumps(data), time.time()],
        )
        events.append(data)
    return asked, events


def answer_checkin(db: sqlite_utils.Database, checkin: int, answer: str, at: float) -> bool:
    """``answer``: "yes" or "no" (closes it); "later" puts the question off."""
    if answer == "later":
        return False
    cursor = db.execute(
        "UPDATE checkins SET state = ?, answered_at = ? WHERE id = ? AND state = 'open'",
        [answer, at, checkin],
    )
    return cursor.rowcount == 1


def put_off(db: sqlite_utils.Database, checkin: int, until: float) -> None:
    db.execute(
        "UPDATE checkins SET next_at = ?, tries = 0 WHERE id = ? AND state = 'open'",
        [until, checkin],
    )


def checkins_since(db: sqlite_utils.Database, user: str, since: float) -> list[dict[str, Any]]:
    return rows_of(
        db.execute(
            "SELECT id, text, asked_at, state, answered_at FROM checkins"
            " WHERE username = ? AND asked_at >= ? ORDER BY asked_at",
            [user, since],
        )
    )
