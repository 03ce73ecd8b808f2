"""Working memory (jiyi): short-lived key/value notes of one session, with an expiry.

What the agent is in the middle of ("waiting for: the pharmacy's answer", "topic: the
trip to Lyon") — too transient for the memory stream, too important to lose between turns.
Each write renews its entry's expiry; expired entries are invisible and purged on write.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sqlite_utils

from fayd.memory.errors import BadInput
from fayd.memory.port import MemoryPort

#: A note lives this long after its last write unless the writer says otherwise.
DEFAULT_TTL_S = 30 * 60.0
MAX_VALUE = 2000


def _check(session: str, key: str, ttl_s: float) -> None:
    for name, value in (("session", session), ("key", key)):
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise BadInput(f"{name} must be a non-empty string of at most 200 characters")
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float) or ttl_s <= 0:
        raise BadInput(f"ttl_s must be a positive number of seconds: {ttl_s!r}")


def put(
    db: sqlite_utils.Database,
    username: str,
    session: str,
    key: str,
    value: Any,
    ttl_s: float,
    now: float,
) -> None:
    _check(session, key, ttl_s)
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > MAX_VALUE:
        raise BadInput(f"a working-memory value is at most {MAX_VALUE} characters of JSON")
    db.execute("DELETE FROM memory_working WHERE expires_at <= ?", [now])
    db.execute(
        "INSERT OR REPLACE INTO memory_working (username, session, key, value, updated_at,"
        " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        [username, session, key, text, now, now + ttl_s],
    )


def get_all(
    db: sqlite_utils.Database, username: str, session: str, now: float
) -> list[dict[str, Any]]:
    """The session's live notes, most recently written first."""
    rows = db.execute(
        "SELECT key, value, updated_at, expires_at FROM memory_working"
        " WHERE username = ? AND session = ? AND expires_at > ? ORDER BY updated_at DESC, key",
        [username, session, now],
    )
    return [
        {"key": k, "value": json.loads(v), "updated_at": u, "expires_at": e} for k, v, u, e in rows
    ]


def delete(db: sqlite_utils.Database, username: str, session: str, key: str | None) -> int:
    """Forget one note, or the whole session's (``key=None``); returns how many."""
    sql = "DELETE FROM memory_working WHERE username = ? AND session = ?"
    args = [username, session]
    if key is not None:
        sql += " AND key = ?"
        args.append(key)
    return db.execute(sql, args).rowcount


class Working:
    """Working memory over a Memory's store (blocking: call from a worker thread)."""

    def __init__(self, memory: MemoryPort) -> None:
        self.memory = memory

    def set(
        self,
        session: str,
        key: str,
        value: Any,
        username: str | None = None,
        ttl_s: float = DEFAULT_TTL_S,
        now: float | None = None,
    ) -> None:
        now = time.time() if now is None else now
        user = self.memory.resolve_user(username)
        self.memory.store.call(put, user, str(session), key, value, ttl_s, now)

    def get(
        self, session: str, username: str | None = None, now: float | None = None
    ) -> list[dict[str, Any]]:
        now = time.time() if now is None else now
        return self.memory.store.call(
            get_all, self.memory.resolve_user(username), str(session), now
        )

    def clear(self, session: str, username: str | None = None, key: str | None = None) -> int:
        return self.memory.store.call(delete, self.memory.resolve_user(username), str(session), key)
