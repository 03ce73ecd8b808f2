"""Semantic facts (jiyi): subject–predicate–object triples with a validity window.

A fact is never deleted. A new fact that conflicts with a valid one (same subject and
predicate, another object) closes it: the old fact's ``valid_to`` becomes the new one's
``valid_from`` and ``closed_by`` names the new one, so ``as_of(t)`` answers for any past
time. A fact may close only one of the same trust tier or a lower one; an agent's fact that
contradicts a person's goes to the quarantine instead. Subjects and predicates match
case-insensitively. Scope ``household`` facts are visible to every user.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import sqlite_utils

from fayd.memory import quarantine
from fayd.memory.errors import BadInput
from fayd.memory.port import MemoryPort
from fayd.memory.provenance import AGENT, check_trust, outranks, screen

MAX_PART = 500
COLUMNS = (
    "id, username, scope, subject, predicate, object, valid_from, valid_to, trust, source,"
    " created_at, closed_by"
)


@dataclass
class Fact:
    id: int
    username: str
    scope: str
    subject: str
    predicate: str
    object: str
    valid_from: float
    valid_to: float | None
    trust: str
    source: str
    created_at: float
    closed_by: int | None

    def text(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _clean(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{name} must be a non-empty string")
    if len(value) > MAX_PART or "\n" in value.strip():
        raise BadInput(f"{name} must be one line of at most {MAX_PART} characters")
    return " ".join(value.split())


def validate(payload: dict[str, Any]) -> dict[str, Any]:
    """A fact write as plain JSON-able values (also what the quarantine stores)."""
    scope = payload.get("scope", "user")
    if scope not in ("user", "household"):
        raise BadInput(f"scope must be user or household: {scope!r}")
    valid_from = payload.get("valid_from")
    if valid_from is not None and (
        isinstance(valid_from, bool) or not isinstance(valid_from, int | float)
    ):
        raise BadInput(f"valid_from must be a UTC timestamp: {valid_from!r}")
    return {
        "username": _clean("username", payload.get("username")),
        "scope": scope,
        "subject": _clean("subject", payload.get("subject")),
        "predicate": _clean("predicate", payload.get("predicate")),
        "object": _clean("object", payload.get("object")),
        "valid_from": None if valid_from is None else float(valid_from),
        "trust": check_trust(payload.get("trust", AGENT)),
        "source": str(payload.get("source") or ""),
    }


def _row(row: tuple[Any, ...]) -> Fact:
    return Fact(*row)


def _versions(db: sqlite_utils.Database, f: dict[str, Any]) -> list[Fact]:
    """Every version (valid or closed) of this subject–predicate in this scope."""
    rows = db.execute(
        f"SELECT {COLUMNS} FROM memory_facts WHERE username = ? AND scope = ?"
        " AND subject = ? COLLATE NOCASE AND predicate = ? COLLATE NOCASE ORDER BY valid_from",
        [f["username"], f["scope"], f["subject"], f["predicate"]],
    )
    return [_row(r) for r in rows]


def _covering(versions: list[Fact], at: float) -> list[Fact]:
    return [v for v in versions if v.valid_from <= at and (v.valid_to is None or v.valid_to > at)]


def _start(f: dict[str, Any], now: float) -> float:
    return now if f["valid_from"] is None else f["valid_from"]


def blocked_by(db: sqlite_utils.Database, f: dict[str, Any], now: float) -> Fact | None:
    """A more trusted fact, valid when this one starts, that this write would contradict."""
    for old in _covering(_versions(db, f), _start(f, now)):
        if old.object.casefold() != f["object"].casefold() and not outranks(f["trust"], old.trust):
            return old
    return None


def write(db: sqlite_utils.Database, f: dict[str, Any], now: float) -> tuple[Fact, list[int]]:
    """Insert a validated fact; returns it and the ids of the facts it closed.

    The facts valid at its start that say otherwise are closed there; it holds until the
    next version begins (a backdated fact is history, closed at once) or, without one, for
    now. Re-asserting the fact that holds at that time returns it unchanged.
    """
    start = _start(f, now)
    versions = _versions(db, f)
    covering = _covering(versions, start)
    for old in covering:
        if old.object.casefold() == f["object"].casefold():
            return old, []
    later = [v.valid_from for v in versions if v.valid_from > start]
    end = min(later) if later else None
    cursor = db.execute(
        "INSERT INTO memory_facts (username, scope, subject, predicate, object, valid_from,"
        " valid_to, trust, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            *(f[k] for k in ("username", "scope", "subject", "predicate", "object")),
            start,
            end,
            f["trust"],
            f["source"],
            now,
        ],
    )
    new_id = int(cursor.lastrowid)
    db.conn.executemany(
        "UPDATE memory_facts SET valid_to = ?, closed_by = ? WHERE id = ?",
        [(start, new_id, old.id) for old in covering],
    )
    fact = _row(db.execute(f"SELECT {COLUMNS} FROM memory_facts WHERE id = ?", [new_id]).fetchone())
    return fact, [old.id for old in covering]


def write_held(
    db: sqlite_utils.Database, f: dict[str, Any], now: float
) -> tuple[dict[str, Any], int]:
    """Replay a quarantined fact (``quarantine.approve``): its result and the fact's id."""
    fact, closed = write(db, f, now)
    return {"fact": fact.to_dict(), "closed": closed}, fact.id


def as_of(
    db: sqlite_utils.Database,
    username: str,
    at: float,
    subject: str | None = None,
    predicate: str | None = None,
    limit: int = 1000,
) -> list[Fact]:
    """Facts valid at time ``at`` for the user (and the household), newest first."""
    sql = [
        f"SELECT {COLUMNS} FROM memory_facts WHERE (username = ? OR scope = 'household')",
        "AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)",
    ]
    args: list[Any] = [username, at, at]
    if subject:
        sql.append("AND subject = ? COLLATE NOCASE")
        args.append(subject.strip())
    if predicate:
        sql.append("AND predicate = ? COLLATE NOCASE")
        args.append(predicate.strip())
    sql.append("ORDER BY valid_from DESC, id DESC LIMIT ?")
    args.append(limit)
    return [_row(r) for r in db.execute(" ".join(sql), args)]


def history(db: sqlite_utils.Database, username: str, subject: str, predicate: str) -> list[Fact]:
    """Every version of one subject–predicate, oldest first (closed ones included)."""
    rows = db.execute(
        f"SELECT {COLUMNS} FROM memory_facts WHERE (username = ? OR scope = 'household')"
        " AND subject = ? COLLATE NOCASE AND predicate = ? COLLATE NOCASE"
        " ORDER BY valid_from, id",
        [username, subject.strip(), predicate.strip()],
    )
    return [_row(r) for r in rows]


class Facts:
    """Guarded fact writes and reads over a Memory's store."""

    def __init__(self, memory: MemoryPort) -> None:
        self.memory = memory

    def assert_fact(
        self,
        subject: str,
        predicate: str,
        obj: str,
        username: str | None = None,
        trust: str = AGENT,
        source: str = "",
        valid_from: float | None = None,
        scope: str = "user",
        now: float | None = None,
    ) -> dict[str, Any]:
        """``{"ok": True, "fact", "closed"}``, or ``{"ok": False, "quarantined", "reason"}``
        when the source is untrusted, the text reads like an instruction, or it contradicts
        a more trusted valid fact."""
        payload = validate(
            {
                "username": self.memory.resolve_user(username),
                "subject": subject,
                "predicate": predicate,
                "object": obj,
                "trust": trust,
                "source": source,
                "valid_from": valid_from,
                "scope": scope,
            }
        )
        now = time.time() if now is None else now
        reason = screen(f"{payload['subject']} {payload['predicate']} {payload['object']}", trust)

        def run(db: sqlite_utils.Database) -> dict[str, Any]:
            why = reason
            if why is None and (old := blocked_by(db, payload, now)) is not None:
                why = f"contradicts {old.trust} fact #{old.id} ({old.text()})"
            if why is not None:
                qid = quarantine.put(db, "fact", payload, why, now)
                return {"ok": False, "quarantined": qid, "reason": why}
            fact, closed = write(db, payload, now)
            return {"ok": True, "fact": fact.to_dict(), "closed": closed}

        return self.memory.store.call(run)

    def as_of(
        self,
        at: float | None = None,
        username: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
    ) -> list[Fact]:
        at = time.time() if at is None else at
        return self.memory.store.call(
            as_of, self.memory.resolve_user(username), at, subject, predicate
        )

    def history(self, subject: str, predicate: str, username: str | None = None) -> list[Fact]:
        return self.memory.store.call(
            history, self.memory.resolve_user(username), subject, predicate
        )
