"""The quarantine (jiyi): writes held for a person's review instead of live memory.

A held write keeps everything needed to replay it (JSON payload). ``approve`` replays it
as the same node or fact, tagged as reviewed; ``reject`` keeps the row as a record but
writes nothing. Neither can be undone, and a decided item cannot be decided again.

Facts and the extraction hold items here, so this module imports neither: the memory
gives ``approve`` its writers, one per kind of item (``Memory.held_writers``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import sqlite_utils

from fayd.memory.errors import BadInput
from fayd.memory.nodes import NewNode
from fayd.memory.port import HeldWriter, MemoryPort
from fayd.memory.provenance import AGENT, screen
from fayd.memory.tags import normalize_tags

COLUMNS = (
    "id, item, username, payload, trust, source, reason, created_at, status, decided_at, result_id"
)


def put(
    db: sqlite_utils.Database, item: str, payload: dict[str, Any], reason: str, now: float
) -> int:
    cursor = db.execute(
        "INSERT INTO memory_quarantine (item, username, payload, trust, source, reason,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            item,
            payload["username"],
            json.dumps(payload, ensure_ascii=False),
            payload["trust"],
            payload.get("source", ""),
            reason,
            now,
        ],
    )
    return int(cursor.lastrowid)


def guarded_remember(
    memory: MemoryPort,
    content: str,
    username: str | None = None,
    trust: str = AGENT,
    kind: str | None = "observation",
    source: str | None = None,
    persistent: bool = False,
    extra_tags: Sequence[str] | None = None,
    node_type: str = "observation",
    now: float | None = None,
) -> dict[str, Any]:
    """``Memory.remember`` behind the screen: the node (tagged ``trust:<tier>``) plus
    ``ok: True``, or ``{"ok": False, "quarantined": id, "reason"}``."""
    tags = normalize_tags(kind, source or "fay_self", persistent, list(extra_tags or []))
    tags = sorted({t for t in tags if not t.startswith("trust:")} | {f"trust:{trust}"})
    user = memory.resolve_user(username)
    node = NewNode(content=content, username=user, node_type=node_type, tags=tags)  # validated
    reason = screen(content, trust)
    if reason is not None:
        payload = {
            "username": user,
            "content": content,
            "node_type": node_type,
            "tags": tags,
            "trust": trust,
            "source": source or "",
        }
        stamp = time.time() if now is None else now
        qid = memory.store.call(put, "node", payload, reason, stamp)
        return {"ok": False, "quarantined": qid, "reason": reason}
    return {"ok": True, **memory.add([node])[0]}


def list_items(memory: MemoryPort, status: str | None = "pending", limit: int = 100) -> list[dict]:
    if status not in (None, "pending", "approved", "rejected"):
        raise BadInput(f"status must be pending, approved or rejected: {status!r}")

    def run(db: sqlite_utils.Database) -> list[dict[str, Any]]:
        where = "" if status is None else "WHERE status = ?"
        args: list[Any] = [] if status is None else [status]
        rows = db.execute(
            f"SELECT {COLUMNS} FROM memory_quarantine {where} ORDER BY id LIMIT ?",
            [*args, limit],
        )
        return [_item(r) for r in rows]

    return memory.store.call(run)


def _item(row: tuple[Any, ...]) -> dict[str, Any]:
    item = dict(zip(COLUMNS.replace(" ", "").split(","), row, strict=True))
    item["payload"] = json.loads(item["payload"])
    return item


def _pending(db: sqlite_utils.Database, qid: int) -> dict[str, Any]:
    row = db.execute(f"SELECT {COLUMNS} FROM memory_quarantine WHERE id = ?", [qid]).fetchone()
    if row is None:
        raise BadInput(f"no quarantined item #{qid}")
    item = _item(row)
    if item["status"] != "pending":
        raise BadInput(f"quarantined item #{qid} was already {item['status']}")
    return item


def _decide(
    db: sqlite_utils.Database, qid: int, status: str, now: float, result: int | None
) -> None:
    db.execute(
        "UPDATE memory_quarantine SET status = ?, decided_at = ?, result_id = ? WHERE id = ?",
        [status, now, result, qid],
    )


def held_kind(item: dict[str, Any]) -> str:
    """``fact``, ``document`` (an extracted MemoryFS entry, held as a node) or ``node``."""
    if item["item"] == "fact":
        return "fact"
    return "document" if "document" in item["payload"] else "node"


def approve(memory: MemoryPort, qid: int, now: float | None = None) -> dict[str, Any]:
    """Write the held node, fact or document entry to live memory; returns the item with
    ``result``."""
    now = time.time() if now is None else now
    item = memory.store.call(_pending, qid)
    payload = item["payload"]
    kind = held_kind(item)
    if kind != "node":
        write: HeldWriter = memory.held_writers[kind]

        def replay(db: sqlite_utils.Database) -> dict[str, Any]:
            _pending(db, qid)  # decided meanwhile? checked again inside the transaction
            written, result_id = write(db, payload, now)
            _decide(db, qid, "approved", now, result_id)
            return written

        result = memory.store.call(replay)
    else:
        # The node needs an embedding and an importance score (outside the lock), so it is
        # written first, then the item marked; the check above keeps double approval out.
        tags = sorted({*payload["tags"], "review:approved"})
        node = NewNode(
            content=payload["content"],
            username=payload["username"],
            node_type=payload["node_type"],
            tags=tags,
        )
        result = memory.add([node])[0]
        memory.store.call(_decide, qid, "approved", now, result["node_id"])
    return {**item, "status": "approved", "result": result}


def reject(memory: MemoryPort, qid: int, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now

    def run(db: sqlite_utils.Database) -> dict[str, Any]:
        item = _pending(db, qid)
        _decide(db, qid, "rejected", now, None)
        return {**item, "status": "rejected"}

    return memory.store.call(run)


__all__ = [
    "HeldWriter",
    "approve",
    "guarded_remember",
    "held_kind",
    "list_items",
    "put",
    "reject",
    "screen",
]
