"""Schema migrations: registered functions, applied in order, recorded in a table.

Add a migration by appending a function to MIGRATIONS; never edit one that has shipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]


def m001_spine(db: sqlite_utils.Database) -> None:
    """Devices, their events, conversations and messages."""
    db["devices"].create(
        {
            "id": str,
            "roles": str,  # JSON list
            "fw": str,
            "caps": str,  # JSON object
            "audio_in": str,
            "audio_out": str,
            "user": str,
            "online": int,
            "first_seen": float,
            "last_seen": float,
        },
        pk="id",
    )
    db["device_events"].create(
        {
            "id": int,
            "device": str,
            "seq": int,
            "sensor": str,
            "ts": float,
            "data": str,  # JSON object
            "received_at": float,
        },
        pk="id",
    )
    # A replayed event (same device, same sequence number) is stored once.
    db["device_events"].create_index(["device", "seq"], unique=True)
    db["conversations"].create(
        {"id": int, "user": str, "device": str, "started_at": float, "last_at": float},
        pk="id",
    )
    db["conversations"].create_index(["user", "device", "last_at"])
    db["messages"].create(
        {
            "id": int,
            "conversation_id": int,
            "role": str,  # user | assistant
            "text": str,
            "created_at": float,
            "meta": str,  # JSON: timings, source (voice/text)
        },
        pk="id",
        foreign_keys=[("conversation_id", "conversations", "id")],
    )
    db["messages"].create_index(["conversation_id", "id"])


MIGRATIONS: list[Migration] = [m001_spine]


def apply_migrations(db: sqlite_utils.Database, migrations: list[Migration]) -> list[str]:
    """Apply those not yet recorded, each in its own transaction; returns their names."""
    if "_migrations" not in db.table_names():
        db["_migrations"].create({"version": int, "name": str, "applied_at": float}, pk="version")
    done = {row["version"] for row in db["_migrations"].rows}
    applied = []
    for version, migration in enumerate(migrations, start=1):
        if version in done:
            continue
        with db.atomic():
            migration(db)
            db["_migrations"].insert(
                {"version": version, "name": migration.__name__, "applied_at": time.time()}
            )
        applied.append(migration.__name__)
    return applied
