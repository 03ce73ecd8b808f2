"""The device registry: per-device settings, the registry listing, batched sensor-event
writes, and which events are already in the memory stream. Each function takes the
Database first so it runs inside Store.run/Store.call (one transaction, the writer thread)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from fayd.config_check import ASR_LANGUAGES
from fayd.errors import FaydError
from fayd.protocol import SensorEvent
from fayd.protocol.text import BadText, check_name
from fayd.store import checksum

TRUE = {"on", "true", "yes", "1"}
FALSE = {"off", "false", "no", "0"}


class BadSetting(FaydError):
    """A ``key=value`` that is not a device setting."""


@dataclass(frozen=True)
class DeviceSettings:
    """What the household set for one device; None = not set (the hello or config decides)."""

    user: str | None = None
    #: A device several people use (a kitchen speaker): the members who may be named on it.
    shared: tuple[str, ...] | None = None
    wake: bool | None = None
    wake_threshold: float | None = None
    volume: int | None = None
    barge_in: bool | None = None
    #: The language its speech is heard in ("en", "zh", "auto"); None: the household's
    #: speech.asr_language. fayd's alone: the device is never told.
    language: str | None = None
    #: The longest pause (ms) fayd waits through when its speaker's sentence is unfinished
    #: (semantic endpointing; docs/endpointing.md); None: speech.endpoint_longest_ms. A
    #: slow, pausing speaker's device can wait longer.
    pause_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Only the settings that are set."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


KEYS = tuple(f.name for f in dataclasses.fields(DeviceSettings))
#: The range of a device's ``pause_ms`` (as speech.endpoint_longest_ms's).
PAUSE_MS = (300, 5000)


def _bool(key: str, text: str) -> bool:
    if text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise BadSetting(f"{key} must be on or off, not {text!r}")


def parse_setting(pair: str) -> tuple[str, Any]:
    """``key=value`` → (key, typed value); an empty value unsets the key (None)."""
    key, sep, text = pair.partition("=")
    key, text = key.strip().replace("-", "_"), text.strip()
    if not sep or key not in KEYS:
        raise BadSetting(f"expected key=value with key one of {', '.join(KEYS)}: {pair!r}")
    if not text:
        return key, None
    if key in ("user", "shared"):
        try:
            names = tuple(check_name(key, n.strip()) for n in text.split(",") if n.strip())
        except BadText as exc:  # a control character, a lone surrogate (a non-UTF-8 argv byte)
            raise BadSetting(str(exc)) from exc
        if key == "user" and len(names) != 1:
            raise BadSetting(f"user is one household member, not {text!r}")
        return key, names[0] if key == "user" else tuple(dict.fromkeys(names)) or None
    if key in ("wake", "barge_in"):
        return key, _bool(key, text)
    if key == "language":
        if text.lower() not in ASR_LANGUAGES:
            raise BadSetting(
                f"language must be en, zh or auto (empty: the household's speech.asr_language),"
                f" not {text[:40]!r}"
            )
        return key, text.lower()
    try:
        number = float(text) if key == "wake_threshold" else int(text)
    except ValueError as exc:
        raise BadSetting(f"{key} must be a number: {text!r}") from exc
    if key == "wake_threshold" and not 0.0 <= number <= 1.0:
        raise BadSetting(f"wake_threshold must be between 0 and 1: {text}")
    if key == "volume" and not 0 <= number <= 100:
        raise BadSetting(f"volume must be 0-100: {text}")
    if key == "pause_ms" and not PAUSE_MS[0] <= number <= PAUSE_MS[1]:
        raise BadSetting(f"pause_ms must be {PAUSE_MS[0]}-{PAUSE_MS[1]} (milliseconds): {text}")
    return key, number


def _settings(row: dict[str, Any]) -> DeviceSettings:
    return DeviceSettings(
        user=row["user"],
        shared=tuple(json.loads(row["shared"])) if row["shared"] else None,
        wake=None if row["wake"] is None else bool(row["wake"]),
        wake_threshold=row["wake_threshold"],
        volume=row["volume"],
        barge_in=None if row["barge_in"] is None else bool(row["barge_in"]),
        language=row["language"],
        pause_ms=row["pause_ms"],
    )


def set_settings(db: sqlite_utils.Database, device: str, changes: dict[str, Any]) -> int:
    """Apply ``changes`` (None unsets) to a device, seen or not yet; returns the new rev."""
    unknown = set(changes) - set(KEYS)
    if unknown:
        raise BadSetting(f"unknown settings {sorted(unknown)}")
    rev = db.execute("SELECT coalesce(max(rev), 0) + 1 FROM device_settings").fetchone()[0]
    db.execute(
        "INSERT INTO device_settings (device, rev, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT (device) DO UPDATE SET rev = excluded.rev, updated_at = excluded.updated_at",
        [device, rev, time.time()],
    )
    for key, value in changes.items():  # key is one of KEYS (checked above)
        stored = int(value) if isinstance(value, bool) else value
        if isinstance(value, tuple):
            stored = json.dumps(list(value))
        db.execute(f"UPDATE device_settings SET {key} = ? WHERE device = ?", [stored, device])
    return int(rev)


def settings_since(db: sqlite_utils.Database, rev: int) -> tuple[int, dict[str, DeviceSettings]]:
    """Settings changed after ``rev``: (the latest rev, {device: settings})."""
    rows = db.execute(
        "SELECT device, user, shared, wake, wake_threshold, volume, barge_in, language, pause_ms,"
        " rev"
        " FROM device_settings WHERE rev > ? ORDER BY rev",
        [rev],
    ).fetchall()
    keys = ("device", *KEYS, "rev")
    changed = {}
    for values in rows:
        row = dict(zip(keys, values, strict=True))
        changed[row["device"]] = _settings(row)
        rev = max(rev, row["rev"])
    return rev, changed


def registry(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Every device seen, configured or added: presence, last seen, hello, settings, whether
    it has a key, event count."""
    rows = db.execute(
        "SELECT i.id, d.roles, d.fw, d.user, d.online, d.first_seen, d.last_seen,"
        " s.user, s.shared, s.wake, s.wake_threshold, s.volume, s.barge_in, s.language,"
        " s.pause_ms, (SELECT count(*) FROM device_events e WHERE e.device = i.id),"
        " EXISTS (SELECT 1 FROM device_keys k WHERE k.device = i.id)"
        " FROM (SELECT id FROM devices UNION SELECT device FROM device_settings"
        " UNION SELECT device FROM device_keys) i"
        " LEFT JOIN devices d ON d.id = i.id LEFT JOIN device_settings s ON s.device = i.id"
        " ORDER BY i.id"
    ).fetchall()
    out = []
    for r in rows:
        settings = _settings(dict(zip(KEYS, r[7:15], strict=True)))
        out.append(
            {
                "id": r[0],
                "roles": json.loads(r[1]) if r[1] else [],
                "fw": r[2],
                "online": bool(r[4]),
                "first_seen": r[5],
                "last_seen": r[6],
                "user": settings.user or r[3],  # the setting wins over the hello
                "hello_user": r[3],
                "settings": settings.to_dict(),
                "events": r[15],
                "key": bool(r[16]),
            }
        )
    return out


#: What one bad event can raise while it is bound (before SQLite runs the statement, so the
#: transaction is untouched) or run (SQLite undoes that statement alone): its data, not the
#: disk. A disk or lock error (sqlite3.OperationalError) still fails the batch, to be retried.
EVENT_DATA_ERRORS = (
    UnicodeEncodeError,
    OverflowError,
    TypeError,
    ValueError,
    sqlite3.InterfaceError,
    sqlite3.IntegrityError,
)


def record_events(
    db: sqlite_utils.Database, events: list[tuple[str, SensorEvent]]
) -> list[bool | str]:
    """Store a batch of sensor events in one transaction; per event, True when stored, False
    for a replay (this device, epoch and seq were stored before, or earlier in the same
    batch), or why it could not be stored: a bad event fails alone, the rest are written.
    Only the device itself can publish on its topics (its MQTT account; docs/security.md),
    so nobody else can claim its next numbers first."""
    now = time.time()
    stored: list[bool | str] = []
    for device, event in events:
        try:
            cursor = db.execute(
                "INSERT OR IGNORE INTO device_events"
                " (device, epoch, seq, sensor, ts, data, received_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    device,
                    event.epoch or "",
                    event.seq,
                    event.sensor,
                    event.ts,
                    json.dumps(event.data),
                    now,
                ],
            )
        except EVENT_DATA_ERRORS as exc:
            stored.append(f"{type(exc).__name__}: {exc}"[:200])
            continue
        stored.append(cursor.rowcount == 1)
    return stored


# --- device keys (fayd.auth.device_keys) -------------------------------------------------


def device_secret(db: sqlite_utils.Database, device: str) -> str | None:
    row = db.execute("SELECT secret FROM device_keys WHERE device = ?", [device]).fetchone()
    return row[0] if row else None


def device_secrets(db: sqlite_utils.Database) -> dict[str, str]:
    """Every device's secret: the broker's accounts are made from them."""
    return dict(db.execute("SELECT device, secret FROM device_keys ORDER BY device").fetchall())


def add_device_key(db: sqlite_utils.Database, device: str, secret: str) -> None:
    """Give a device its secret (a new one replaces the old: the old stops working)."""
    db.execute(
        "INSERT INTO device_keys (device, secret, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT (device) DO UPDATE SET secret = excluded.secret,"
        " created_at = excluded.created_at",
        [device, secret, time.time()],
    )
    checksum.sign(db, "device_keys", device)


def known_devices(db: sqlite_utils.Database) -> set[str]:
    """Devices that said hello, have settings or have a key."""
    rows = db.execute(
        "SELECT id FROM devices UNION SELECT device FROM device_settings"
        " UNION SELECT device FROM device_keys"
    ).fetchall()
    return {r[0] for r in rows}


def remove_device(db: sqlite_utils.Database, device: str) -> bool:
    """Forget a device: its key (it can no longer connect), settings and registry row. Its
    stored events and their memories stay: they are the household's history."""
    removed = 0
    for table, column in (
        ("device_keys", "device"),
        ("device_settings", "device"),
        ("devices", "id"),
    ):
        removed += db.execute(f"DELETE FROM {table} WHERE {column} = ?", [device]).rowcount
    return removed > 0


def events_to_remember(db: sqlite_utils.Database, limit: int) -> list[dict[str, Any]]:
    """The oldest events not yet in the memory stream, with their device's user, minus
    those a memory node already names (``device_event:<id>``: written, then fayd stopped before
    marking them)."""
    rows = db.execute(
        "SELECT e.id, e.device, e.seq, e.sensor, e.ts, e.data, e.received_at,"
        " coalesce(e.user, s.user, d.user)"
        " FROM device_events e LEFT JOIN device_settings s ON s.device = e.device"
        " LEFT JOIN devices d ON d.id = e.device"
        " WHERE e.remembered = 0 ORDER BY e.id LIMIT ?",
        [limit],
    ).fetchall()
    keys = ("id", "device", "seq", "sensor", "ts", "data", "received_at", "user")
    events = [dict(zip(keys, r, strict=True)) for r in rows]
    if not events:
        return []
    tags = [f"device_event:{e['id']}" for e in events]
    marks = ",".join("?" * len(tags))
    done = {t for (t,) in db.execute(f"SELECT tag FROM memory_tags WHERE tag IN ({marks})", tags)}
    if done:
        mark_remembered(db, [int(t.split(":")[1]) for t in done])
    return [e for e, t in zip(events, tags, strict=True) if t not in done]


def mark_remembered(db: sqlite_utils.Database, ids: list[int]) -> None:
    db.conn.executemany("UPDATE device_events SET remembered = 1 WHERE id = ?", [(i,) for i in ids])
