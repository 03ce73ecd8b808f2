"""Reads and writes of the spine's tables. Each takes the Database as its first argument
so it runs inside Store.run/Store.call on the single writer thread."""

from __future__ import annotations

import json
import time
from typing import Any

import sqlite_utils

from fayd.protocol import Hello

#: A conversation continues while its last message is younger than this.
CONVERSATION_GAP_S = 30 * 60


def upsert_device(db: sqlite_utils.Database, hello: Hello) -> None:
    now = time.time()
    existing = db.execute("SELECT first_seen FROM devices WHERE id = ?", [hello.device]).fetchone()
    db["devices"].upsert(
        {
            "id": hello.device,
            "roles": json.dumps(list(hello.roles)),
            "fw": hello.fw,
            "caps": json.dumps(hello.caps),
            "audio_in": json.dumps(hello.audio_in.to_dict()) if hello.audio_in else None,
            "audio_out": json.dumps(hello.audio_out.to_dict()) if hello.audio_out else None,
            "user": hello.user,
            "online": 1,
            "first_seen": existing[0] if existing else now,
            "last_seen": now,
        },
        pk="id",
    )


def set_presence(db: sqlite_utils.Database, device: str, online: bool) -> None:
    db.execute(
        "UPDATE devices SET online = ?, last_seen = ? WHERE id = ?",
        [int(online), time.time(), device],
    )


def touch_device(db: sqlite_utils.Database, device: str) -> None:
    db.execute("UPDATE devices SET last_seen = ? WHERE id = ?", [time.time(), device])


def list_devices(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    rows = list(db["devices"].rows_where(order_by="id"))
    for row in rows:
        for key in ("roles", "caps", "audio_in", "audio_out"):
            row[key] = json.loads(row[key]) if row[key] else None
        row["online"] = bool(row["online"])
    return rows


def conversation_for(db: sqlite_utils.Database, user: str, device: str) -> int:
    """The ongoing conversation of this user on this device, or a new one."""
    now = time.time()
    row = db.execute(
        "SELECT id FROM conversations WHERE user = ? AND device = ? AND last_at > ?"
        " ORDER BY last_at DESC LIMIT 1",
        [user, device, now - CONVERSATION_GAP_S],
    ).fetchone()
    if row:
        return int(row[0])
    table = db["conversations"].insert(
        {"user": user, "device": device, "started_at": now, "last_at": now}
    )
    return int(table.last_pk)


def end_conversation(db: sqlite_utils.Database, user: str, device: str) -> None:
    """ "Let's start again": the next turn of this user on this device starts a new
    conversation (the old one, and every memory, stays)."""
    db.execute(
        "UPDATE conversations SET last_at = 0 WHERE user = ? AND device = ? AND last_at > ?",
        [user, device, time.time() - CONVERSATION_GAP_S],
    )


def history(db: sqlite_utils.Database, conversation_id: int, turns: int) -> list[dict[str, str]]:
    """At least the last ``turns`` exchanges (when there are that many) as chat messages,
    oldest first, trimmed in blocks: the window grows by one exchange a turn up to
    ``2 × turns - 1`` and then falls back to ``turns``. A window that slid by one every turn
    would change the prompt right after the persona each time and cost the model a full
    re-read; this one keeps the prompt's beginning (and llama.cpp's cache of it) stable.
    Exchanges marked ``rejected`` in their meta (a degenerate reply the guardrails replaced:
    fayd.agent.guard) are left out and not counted: the model must not copy them."""
    if turns <= 0:
        return []
    (messages,) = db.execute(
        f"SELECT count(*) FROM messages WHERE conversation_id = ? AND {_KEPT}", [conversation_id]
    ).fetchone()
    done = messages // 2
    keep = done if done < turns else turns + (done - turns) % turns
    rows = db.execute(
        f"SELECT role, text, json_extract(meta, '$.knowledge') FROM messages"
        f" WHERE conversation_id = ? AND {_KEPT} ORDER BY id DESC LIMIT ?",
        [conversation_id, keep * 2],
    ).fetchall()
    # What was looked up for a question and kept (a prestart call's include_history) stays
    # with the question, so later turns still have it.
    return [
        {"role": role, "content": f"{text}\n\n{known}" if known and role == "user" else text}
        for role, text, known in reversed(rows)
    ]


#: Messages whose exchange was not rejected (both rows of a turn carry the same meta).
_KEPT = "(meta IS NULL OR json_extract(meta, '$.rejected') IS NULL)"


def record_turn(
    db: sqlite_utils.Database,
    conversation_id: int,
    question: str,
    answer: str,
    meta: dict[str, Any],
) -> None:
    now = time.time()
    encoded = json.dumps(meta)
    db["messages"].insert_all(
        [
            {
                "conversation_id": conversation_id,
                "role": "user",
                "text": question,
                "created_at": now,
                "meta": encoded,
            },
            {
                "conversation_id": conversation_id,
                "role": "assistant",
                "text": answer,
                "created_at": now,
                "meta": encoded,
            },
        ]
    )
    db.execute("UPDATE conversations SET last_at = ? WHERE id = ?", [now, conversation_id])


def recent_turns(db: sqlite_utils.Database, limit: int = 20) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT m.id, c.user, c.device, m.role, m.text, m.created_at, m.meta"
        " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
        " ORDER BY m.id DESC LIMIT ?",
        [limit],
    ).fetchall()
    keys = ("id", "user", "device", "role", "text", "created_at", "meta")
    return [dict(zip(keys, row, strict=True)) for row in rows]
