"""Memory nodes in SQLite. Each function takes the Database first so it runs inside
``Store.call``/``Store.run`` (one transaction on the single writer thread)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from datetime import datetime as dt
from typing import Any

import numpy as np
import sqlite_utils

from fayd.memory import dates
from fayd.memory.errors import BadInput
from fayd.memory.index import Row
from fayd.memory.tags import NODE_TYPES, clean_tag
from fayd.protocol.text import BadText, check_name, check_text
from fayd.store import lexical

FAY_TIME = "%Y/%m/%d %H:%M:%S"
MAX_CONTENT = 20_000
#: Longer than a user name anywhere else (64): names imported from Fay's folders kept.
MAX_USERNAME = 255
NODE_COLUMNS = (
    "id, node_type, content, importance, datetime, step, retrieved_step, pointer_id,"
    " created_at, last_retrieved_at, username, scope"
)


@dataclass
class NewNode:
    """A node to write, validated on construction (bad input fails before any write)."""

    content: str
    username: str
    node_type: str = "observation"
    tags: list[str] = field(default_factory=list)
    importance: float | None = None  # None: scored by the LLM
    datetime: str = ""  # Fay's format or ISO 8601; empty = now
    pointer_id: list[int] | None = None
    scope: str = "user"  # household: seen by every user (written once, by one of them)
    created_at: float = 0.0  # filled from datetime
    # Import from Fay: its id, its pointer ids (mapped to ours in the same batch) and steps.
    fay_node_id: int | None = None
    fay_pointer_id: list[int] | None = None
    step: int | None = None
    retrieved_step: int | None = None
    # Fay ids of this file that are already stored as another node (a household node that
    # an earlier stream or the database holds) → our id, so pointers to them still map.
    fay_known: dict[int, int] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, str) or not self.content.strip():
            raise BadInput("content must be a non-empty string")
        if len(self.content) > MAX_CONTENT:
            raise BadInput(f"content is longer than {MAX_CONTENT} characters")
        if not isinstance(self.username, str) or not self.username.strip():
            raise BadInput("username must be a non-empty string")
        _check_writable(self.content, self.username)
        if self.node_type not in NODE_TYPES:
            names = ", ".join(NODE_TYPES)
            raise BadInput(f"node_type must be one of {names}: {self.node_type!r}")
        if self.scope not in ("user", "household"):
            raise BadInput(f"scope must be user or household: {self.scope!r}")
        if not isinstance(self.tags, list):
            raise BadInput("tags must be a list of strings")
        self.tags = sorted({clean_tag(t) for t in self.tags})
        if self.importance is not None:
            if isinstance(self.importance, bool) or not isinstance(self.importance, int | float):
                raise BadInput(f"importance must be a number: {self.importance!r}")
            self.importance = float(self.importance)
            if not math.isfinite(self.importance):  # NaN is stored as NULL; Infinity not JSON
                raise BadInput(f"importance must be a finite number: {self.importance!r}")
        if self.pointer_id is not None and not (
            isinstance(self.pointer_id, list)
            and all(isinstance(p, int) and not isinstance(p, bool) for p in self.pointer_id)
        ):
            raise BadInput(f"pointer_id must be null or a list of node ids: {self.pointer_id!r}")
        keep_empty = self.fay_node_id is not None and self.datetime == ""  # old Fay files
        self.created_at, self.datetime = parse_time(self.datetime)
        if keep_empty:
            self.datetime = ""


def _check_writable(content: str, username: str) -> None:
    """Text SQLite can store and a user name a folder can be named after: a lone surrogate
    (not UTF-8) failed at the write as a bug, a NUL in a name broke ``export-fay``."""
    try:
        check_text("content", content, MAX_CONTENT)
        check_name("username", username, max_len=MAX_USERNAME)
    except BadText as exc:
        raise BadInput(str(exc)) from exc


def parse_time(value: Any) -> tuple[float, str]:
    """Fay's ``YYYY/MM/DD HH:MM:SS`` (local time) or ISO 8601 → (UTC epoch, Fay's string)."""
    if value in (None, ""):
        now = time.time()
        return now, dt.fromtimestamp(now).strftime(FAY_TIME)
    if not isinstance(value, str):
        raise BadInput(f"datetime must be a string: {value!r}")
    try:
        parsed = dt.strptime(value.strip(), FAY_TIME)
    except ValueError:
        try:
            parsed = dt.fromisoformat(value.strip())
        except ValueError as exc:
            raise BadInput(
                f"datetime must be 'YYYY/MM/DD HH:MM:SS' or ISO 8601: {value!r}"
            ) from exc
    stamp = parsed.timestamp()  # naive → local time, like Fay's strings
    return stamp, dt.fromtimestamp(stamp).strftime(FAY_TIME)


def insert_nodes(
    db: sqlite_utils.Database,
    nodes: list[NewNode],
    importances: list[float],
    vectors: np.ndarray | None,
    model: str,
) -> list[Row]:
    """Append nodes (steps continue each user's counter); returns their index rows."""
    steps: dict[str, int] = {}  # last step given per user
    bases: dict[str, int] = {}  # where an imported file's steps start
    fay_ids: dict[tuple[str, int], int] = {}
    rows: list[Row] = []
    for i, node in enumerate(nodes):
        if node.username not in steps:
            found = db.execute(
                "SELECT COALESCE(MAX(step), -1) FROM memory_nodes WHERE username = ?",
                [node.username],
            ).fetchone()[0]
            steps[node.username] = int(found)
            bases[node.username] = int(found) + 1
        if node.step is None:
            step = retrieved = steps[node.username] + 1
        else:
            step = bases[node.username] + node.step
            last = node.step if node.retrieved_step is None else node.retrieved_step
            retrieved = bases[node.username] + last
        steps[node.username] = max(steps[node.username], step, retrieved)
        cursor = db.execute(
            "INSERT INTO memory_nodes (username, scope, node_type, content, importance,"
            " datetime, created_at, last_retrieved_at, step, retrieved_step, pointer_id,"
            " fay_node_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                node.username,
                node.scope,
                node.node_type,
                node.content,
                importances[i],
                node.datetime,
                node.created_at,
                node.created_at,
                step,
                retrieved,
                None if node.pointer_id is None else json.dumps(node.pointer_id),
                node.fay_node_id,
            ],
        )
        node_id = int(cursor.lastrowid)
        if node.fay_node_id is not None:
            fay_ids[(node.username, node.fay_node_id)] = node_id
        db.conn.executemany(
            "INSERT INTO memory_tags (node_id, tag) VALUES (?, ?)",
            [(node_id, t) for t in node.tags],
        )
        vector = None
        if vectors is not None:
            vector = vectors[i]
            db.execute(
                "INSERT INTO memory_embeddings (node_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                [node_id, model, vector.shape[0], vector.astype("<f4").tobytes()],
            )
        rows.append(
            Row(
                node_id,
                node.node_type,
                importances[i],
                node.created_at,
                step,
                node.tags,
                vector,
                node.created_at,
            )
        )
    # The lexical index, in the same transaction as the nodes.
    lexical.add(
        db,
        [
            (r.id, lexical.owner(n.username, n.scope), lexical_text(n))
            for n, r in zip(nodes, rows, strict=True)
        ],
    )
    _map_fay_pointers(db, nodes, rows, fay_ids)
    return rows


def lexical_text(node: NewNode) -> str:
    """What BM25 reads: the content, and the days its ``when:`` tags name in words."""
    days = [dates.words(t) for t in node.tags if t.startswith(dates.NAMESPACE)]
    return " ".join([node.content, *days])


def rewrite_contents(
    db: sqlite_utils.Database, changes: list[tuple[int, str]], vectors: np.ndarray, model: str
) -> None:
    """Give existing nodes a new content, with its vector and its lexical row (a fold that
    took more events: ``fayd.memory.folds``)."""
    for (node_id, content), vector in zip(changes, vectors, strict=True):
        db.execute("UPDATE memory_nodes SET content = ? WHERE id = ?", [content, node_id])
        db.execute(
            "INSERT OR REPLACE INTO memory_embeddings (node_id, model, dim, vector)"
            " VALUES (?, ?, ?, ?)",
            [node_id, model, vector.shape[0], vector.astype("<f4").tobytes()],
        )
        db.execute(
            f"UPDATE {lexical.TABLE} SET text = ? WHERE rowid = ?",
            [lexical.index_text(content), node_id],
        )


def _map_fay_pointers(
    db: sqlite_utils.Database,
    nodes: list[NewNode],
    rows: list[Row],
    fay_ids: dict[tuple[str, int], int],
) -> None:
    """Imported reflections point at Fay ids: rewrite them to ours. Ids that are not in
    the file (Fay's ids collide and dangle after deletions) are dropped."""
    for node, row in zip(nodes, rows, strict=True):
        if node.fay_pointer_id is None:
            continue
        known = node.fay_known or {}
        ours = []
        for p in node.fay_pointer_id:
            if (node.username, p) in fay_ids:
                ours.append(fay_ids[(node.username, p)])
            elif p in known:
                ours.append(known[p])
        node.pointer_id = ours
        db.execute(
            "UPDATE memory_nodes SET pointer_id = ? WHERE id = ?", [json.dumps(ours), row.id]
        )


#: The household nodes written by someone else than ``?`` (index ``memory_nodes_household``).
OTHERS_HOUSEHOLD = "SELECT id FROM memory_nodes WHERE scope = 'household' AND username != ?"


def load_rows(db: sqlite_utils.Database, username: str, model: str, dim: int) -> list[Row]:
    """Every node a user wrote (either scope) as index rows (vectors of another model or size
    left out)."""
    return _load_rows(db, "n.username = ?", username, model, dim)


def load_household_rows(
    db: sqlite_utils.Database, username: str, model: str, dim: int
) -> list[Row]:
    """The household nodes that others wrote, as index rows: what a user sees besides
    :func:`load_rows`. Their ``step`` is on their writer's counter."""
    return _load_rows(db, f"n.id IN ({OTHERS_HOUSEHOLD})", username, model, dim)


def load_rows_after(db: sqlite_utils.Database, after: int, model: str, dim: int) -> list[Row]:
    """Every node past id ``after`` (any writer, either scope) as index rows: what another
    process wrote while this one runs (fayd.memory.seen)."""
    return _load_rows(db, "n.id > ?", after, model, dim)


def _load_rows(
    db: sqlite_utils.Database, where: str, param: str | int, model: str, dim: int
) -> list[Row]:
    tags: dict[int, list[str]] = {}
    for node_id, tag in db.execute(
        "SELECT t.node_id, t.tag FROM memory_tags t JOIN memory_nodes n ON n.id = t.node_id"
        f" WHERE {where}",
        [param],
    ):
        tags.setdefault(node_id, []).append(tag)
    rows = []
    for node_id, node_type, imp, last, step, emodel, edim, blob, created in db.execute(
        "SELECT n.id, n.node_type, n.importance, n.last_retrieved_at, n.step, e.model, e.dim,"
        " e.vector, n.created_at FROM memory_nodes n"
        " LEFT JOIN memory_embeddings e ON e.node_id = n.id"
        f" WHERE {where} ORDER BY n.id",
        [param],
    ):
        vector = None
        if blob is not None and emodel == model and edim == dim:
            vector = np.frombuffer(blob, "<f4")
        node_tags = tags.get(node_id, [])
        rows.append(Row(node_id, node_type, imp, last, step, node_tags, vector, created))
    return rows


def fetch_nodes(db: sqlite_utils.Database, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Full nodes by id (with tags), keyed by id."""
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(ids), 5000):  # under SQLite's limit of bound variables
        chunk = ids[start : start + 5000]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE id IN ({marks})"
        for row in db.execute(sql, chunk):
            out[row[0]] = _node(row)
        sql = f"SELECT node_id, tag FROM memory_tags WHERE node_id IN ({marks}) ORDER BY tag"
        for node_id, tag in db.execute(sql, chunk):
            out[node_id]["tags"].append(tag)
    return out


def _node(row: tuple[Any, ...]) -> dict[str, Any]:
    keys = NODE_COLUMNS.replace(" ", "").split(",")
    node = dict(zip(keys, row, strict=True))
    node["pointer_id"] = json.loads(node["pointer_id"]) if node["pointer_id"] else None
    node["tags"] = []
    return node


def select_ids(
    db: sqlite_utils.Database,
    username: str,
    n: int,
    node_type: str = "all",
    tags_all: list[str] | None = None,
    order: str = "n.id DESC",
    where: str = "",
    household: bool = False,
    tags_any: list[str] | None = None,
) -> list[int]:
    """Ids of a user's nodes matching a type, *all* of ``tags_all`` and one of ``tags_any``
    (if any), in ``order``; with ``household``, the household nodes that others wrote too."""
    if household:  # an OR of two indexed terms: SQLite reads both indexes, scans nothing
        mine_or_shared = f"(n.username = ? OR n.id IN ({OTHERS_HOUSEHOLD}))"
        sql = [f"SELECT n.id FROM memory_nodes n WHERE {mine_or_shared}"]
        args: list[Any] = [username, username]
    else:
        sql = ["SELECT n.id FROM memory_nodes n WHERE n.username = ?"]
        args = [username]
    if node_type != "all":
        sql.append("AND n.node_type = ?")
        args.append(node_type)
    for tag in tags_all or ():
        sql.append("AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.node_id = n.id AND t.tag = ?)")
        args.append(tag)
    if tags_any:
        marks = ",".join("?" * len(tags_any))
        sql.append(
            "AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.node_id = n.id"
            f" AND t.tag IN ({marks}))"
        )
        args.extend(tags_any)
    if where:
        sql.append(f"AND ({where})")
    sql.append(f"ORDER BY {order} LIMIT ?")
    args.append(n)
    return [r[0] for r in db.execute(" ".join(sql), args)]


def touch(db: sqlite_utils.Database, ids: list[int], now: float, step: int, username: str) -> None:
    """Mark nodes retrieved now by ``username`` at its time ``step``. Fay's step counts one
    writer's nodes: a household node that another user wrote keeps its ``retrieved_step``."""
    db.conn.executemany(
        "UPDATE memory_nodes SET last_retrieved_at = ?,"
        " retrieved_step = CASE WHEN username = ? THEN ? ELSE retrieved_step END WHERE id = ?",
        [(now, username, step, i) for i in ids],
    )


def get_profile(db: sqlite_utils.Database, username: str) -> dict[str, str]:
    row = db.execute(
        "SELECT portrait, extra_info FROM memory_profiles WHERE username = ?", [username]
    ).fetchone()
    portrait, extra = row if row else ("", "")
    return {"username": username, "portrait": portrait, "extra_info": extra}


def set_profile(
    db: sqlite_utils.Database, username: str, portrait: str | None, extra_info: str | None
) -> None:
    old = get_profile(db, username)
    db.execute(
        "INSERT OR REPLACE INTO memory_profiles (username, portrait, extra_info, updated_at)"
        " VALUES (?, ?, ?, ?)",
        [
            username,
            old["portrait"] if portrait is None else portrait,
            old["extra_info"] if extra_info is None else extra_info,
            time.time(),
        ],
    )


def stats(db: sqlite_utils.Database, model: str, dim: int | None = None) -> dict[str, Any]:
    users = {}
    for username, count, types in db.execute(
        "SELECT username, COUNT(*), json_group_array(node_type) FROM memory_nodes"
        " GROUP BY username ORDER BY username"
    ):
        by_type: dict[str, int] = {}
        for t in json.loads(types):
            by_type[t] = by_type.get(t, 0) + 1
        users[username] = {"nodes": count, "by_type": by_type}
    other = db.execute(
        "SELECT COUNT(*) FROM memory_nodes n LEFT JOIN memory_embeddings e ON e.node_id = n.id"
        " WHERE e.model IS NULL OR e.model != ? OR e.dim != COALESCE(?, e.dim)",
        [model, dim],
    ).fetchone()[0]
    total = sum(u["nodes"] for u in users.values())
    tags = db.execute("SELECT COUNT(DISTINCT tag) FROM memory_tags").fetchone()[0]
    household = db.execute(
        "SELECT COUNT(*) FROM memory_nodes WHERE scope = 'household'"
    ).fetchone()[0]
    return {
        "nodes": total,
        "users": users,
        "household_nodes": household,
        "distinct_tags": tags,
        "embedding_model": model,
        "nodes_without_current_embedding": other,
    }


def household_keys(db: sqlite_utils.Database) -> dict[tuple[str, str, str], int]:
    """(node type, content, datetime) → id of every household node: one household node is
    stored once, however many exported streams carry a copy of it."""
    rows = db.execute(
        "SELECT id, node_type, content, datetime FROM memory_nodes WHERE scope = 'household'"
        " ORDER BY id DESC"  # the oldest wins a tie
    )
    return {(t, c, d): i for i, t, c, d in rows}


def users(db: sqlite_utils.Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT username FROM memory_nodes ORDER BY 1")]


def export_rows(db: sqlite_utils.Database, username: str) -> list[dict[str, Any]]:
    """The nodes a user sees (its own, then the household nodes others wrote, each part by
    step), with Fay's ids and steps and the stored vector."""
    ids = [
        r[0]
        for r in db.execute(
            "SELECT id FROM memory_nodes WHERE username = ? ORDER BY step, id", [username]
        )
    ]
    ids += [
        r[0]
        for r in db.execute(
            f"SELECT id FROM memory_nodes WHERE id IN ({OTHERS_HOUSEHOLD}) ORDER BY step, id",
            [username],
        )
    ]
    found = fetch_nodes(db, ids)
    extra = {
        r[0]: r[1:]
        for r in db.execute(
            "SELECT n.id, n.fay_node_id, e.vector FROM memory_nodes n"
            " LEFT JOIN memory_embeddings e ON e.node_id = n.id"
            f" WHERE n.username = ? OR n.id IN ({OTHERS_HOUSEHOLD})",
            [username, username],
        )
    }
    out = []
    for i in ids:
        node = found[i]
        node["fay_node_id"], blob = extra[i]
        node["vector"] = np.frombuffer(blob, "<f4").tolist() if blob else []
        out.append(node)
    return out
