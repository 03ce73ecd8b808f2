"""Preferences said aloud (quiet hours …) and devices put to sleep ("sleep for an hour").
Each function takes the Database first so it runs inside Store.run/Store.call."""

from __future__ import annotations

import json
import time
from typing import Any

import sqlite_utils


def set_preference(db: sqlite_utils.Database, username: str, key: str, value: Any) -> None:
    db.execute(
        "INSERT INTO preferences (username, key, value, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (username, key) DO UPDATE SET value = excluded.value,"
        " updated_at = excluded.updated_at",
        [username, key, json.dumps(value), time.time()],
    )


def preference(db: sqlite_utils.Database, username: str, key: str) -> Any:
    row = db.execute(
        "SELECT value FROM preferences WHERE username = ? AND key = ?", [username, key]
    ).fetchone()
    return json.loads(row[0]) if row else None


def set_device_sleep(db: sqlite_utils.Database, device: str, until: float) -> None:
    db.execute(
        "INSERT INTO device_sleep (device, until) VALUES (?, ?)"
        " ON CONFLICT (device) DO UPDATE SET until = excluded.until",
        [device, until],
    )


def device_sleep(db: sqlite_utils.Database) -> dict[str, float]:
    """Devices asleep now: device → until."""
    rows = db.execute("SELECT device, until FROM device_sleep WHERE until > ?", [time.time()])
    return dict(rows.fetchall())
