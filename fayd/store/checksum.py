"""A checksum on the rows that matter, so a flipped byte in one is found.

A device key, a reminder, a care rule or a caregiver that changed on the disk would be used
as if it were right: a wrong key that still authenticates nobody (the device is "Not
authorized" with no reason given), a reminder that says the wrong pill, a caregiver's
address that now points elsewhere. SQLite's own check sees only a page's structure, never
the values in it. So each such row carries ``checksum``: the first 16 hex digits of the
SHA-256 of its meaningful fields as SQLite gives them back (so Python's types never make a
row look changed). The writers call :func:`sign` after every insert or update of one;
``fayd.store.recovery`` checks them all at start (a few hundred rows: milliseconds).

A row whose checksum is NULL was written by something that does not sign (an older fayd,
a hand edit): it is signed at start, not taken as damaged. Fields a row changes as it lives
(a reminder's next fire, its state) are left out: only what was set when it was made counts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

COLUMN = "checksum"


@dataclass(frozen=True)
class Signed:
    """A table whose rows are checksummed: its key (how a row is named) and its fields."""

    table: str
    key: str
    fields: tuple[str, ...]
    #: What one row is called to the household ("device key", "reminder" …).
    noun: str


SIGNED = {
    s.table: s
    for s in (
        Signed("device_keys", "device", ("device", "secret"), "device key"),
        Signed(
            "reminders",
            "id",
            ("id", "username", "text", "kind", "name", "urgent", "lang", "tz", "rule", "first_at"),
            "reminder",
        ),
        Signed(
            "care_rules",
            "name",
            ("name", "user", "kind", "spec", "severity", "checkin", "ladder", "cooldown_s"),
            "care rule",
        ),
        Signed("care_caregivers", "name", ("name", "urls", "people"), "caregiver"),
    )
}


def of_values(values: Sequence[Any]) -> str:
    """The checksum of a row's fields (in :attr:`Signed.fields` order)."""
    # repr() of a float is exact, ensure_ascii keeps a lone surrogate encodable.
    text = json.dumps(list(values), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sign(db: sqlite_utils.Database, table: str, key: Any) -> None:
    """(Re)compute the checksum of the row of ``table`` whose key is ``key``: call it after
    every insert or update of a row of a :data:`SIGNED` table."""
    _sign_where(db.conn, SIGNED[table], f"{SIGNED[table].key} = ?", [key])


def sign_unsigned(db: sqlite_utils.Database) -> int:
    """Sign every row that has no checksum yet (the migration; rows written by something
    that does not sign); returns how many."""
    return sum(_sign_where(db.conn, s, f"{COLUMN} IS NULL", []) for s in SIGNED.values())


def _sign_where(conn: sqlite3.Connection, signed: Signed, where: str, args: list[Any]) -> int:
    rows = conn.execute(
        f"SELECT rowid, {', '.join(signed.fields)} FROM {signed.table} WHERE {where}", args
    ).fetchall()
    conn.executemany(
        f"UPDATE {signed.table} SET {COLUMN} = ? WHERE rowid = ?",
        [(of_values(row[1:]), row[0]) for row in rows],
    )
    return len(rows)


def holds(signed: Signed, row: dict[str, Any]) -> bool:
    """Whether ``row`` (its fields and ``checksum``) is as it was written. An unsigned row
    (NULL) is taken as sound: it is signed at start."""
    stored = row.get(COLUMN)
    return stored is None or stored == of_values([row[f] for f in signed.fields])


def mismatches(conn: sqlite3.Connection) -> list[tuple[Signed, Any]]:
    """The rows, in every signed table, whose checksum does not match (their keys as read)."""
    found = []
    for signed in SIGNED.values():
        if COLUMN not in {r[1] for r in conn.execute(f"PRAGMA table_info({signed.table})")}:
            continue  # a database from before the checksums (its migration signs them)
        cursor = conn.execute(f"SELECT {', '.join(signed.fields)}, {COLUMN} FROM {signed.table}")
        names = [d[0] for d in cursor.description]
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            if not holds(signed, row):
                found.append((signed, row[signed.key]))
    return found
