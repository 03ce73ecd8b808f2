"""Fay's memory folder in and out: nodes.json, embeddings.json, meta.json, user_profiles.db.

Layout: ``DIR/memory_stream/nodes.json`` for one user, or ``DIR/<username>/memory_stream/``
per user (Fay's isolated mode); portraits in ``DIR/user_profiles.db`` (table T_Member).
Imported vectors are not reused: embeddings.json does not say which model made them, and
vectors of two models must never be mixed, so every imported node is embedded again.

Fay has no household scope. A household node is exported in the stream of every user (each
sees it, and a reflection's pointers to it stay inside its stream) with the tag
:data:`HOUSEHOLD_TAG`; import maps that tag back to the scope and stores the copies once: a
household node whose (node type, content, datetime) is already stored, by an earlier stream
of the same import or before, is not written again, and pointers to it map to the stored one.
"""

from __future__ import annotations

import json
import math
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fayd.memory import nodes as db_nodes
from fayd.memory.errors import BadInput
from fayd.memory.importance import HIGH, LOW
from fayd.memory.nodes import NewNode
from fayd.memory.service import Memory
from fayd.protocol.text import CONTROL_RE, BadText, check_name, check_strings, shown

REQUIRED = ("node_id", "node_type", "content", "importance", "created", "last_retrieved")
#: A household node's tag in Fay's files (it is not stored: the scope column says it).
HOUSEHOLD_TAG = "scope:household"
BATCH = 256
#: SQLite's INTEGER: a signed 64-bit number.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Progress = Callable[[str], None]


def _streams(folder: Path, username: str | None) -> list[tuple[str | None, Path]]:
    """(username or None for the default, memory_stream folder) found under ``folder``."""
    if (folder / "memory_stream" / "nodes.json").is_file():
        return [(username, folder / "memory_stream")]
    found = [
        (sub.name, sub / "memory_stream")
        for sub in sorted(folder.iterdir())
        if (sub / "memory_stream" / "nodes.json").is_file()
    ]
    if not found:
        raise BadInput(f"no memory_stream/nodes.json under {folder} (nor in its subfolders)")
    return found


def read_nodes(path: Path, username: str) -> list[NewNode]:
    """Parse and validate a whole nodes.json before anything is written."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError as exc:  # not a ValueError: it failed as a bug
        raise BadInput(f"{path}: nested too deeply to be Fay's nodes") from exc
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON
        raise BadInput(f"{path}: not a readable JSON file: {exc}") from exc
    if not isinstance(data, list):
        raise BadInput(f"{path}: expected a JSON list of nodes, got {type(data).__name__}")
    out, seen = [], set()
    for i, raw in enumerate(data):
        where = f"{path}: node #{i}"
        if not isinstance(raw, dict):
            raise BadInput(f"{where}: not an object")
        try:  # "\\udfff" is valid JSON, but no database can store it: found before any write
            check_strings("", raw)
        except BadText as exc:
            raise BadInput(f"{where}: {exc}") from exc
        missing = [k for k in (*REQUIRED, "pointer_id") if k not in raw]
        if missing:
            raise BadInput(f"{where}: missing {', '.join(missing)}")
        for key in ("node_id", "created", "last_retrieved"):
            if not _is_int64(raw[key]):
                raise BadInput(f"{where}: {key} must be an integer (64-bit), got {raw[key]!r}")
        pointers = raw["pointer_id"]
        if pointers is not None and not (
            isinstance(pointers, list) and all(_is_int64(p) for p in pointers)
        ):
            raise BadInput(f"{where}: pointer_id must be null or a list of node ids")
        if raw["node_id"] in seen:  # Fay's ids can collide after deletions: keep the first
            raise BadInput(f"{where}: node_id {raw['node_id']} appears twice")
        seen.add(raw["node_id"])
        tags = raw.get("tags") or []
        household = isinstance(tags, list) and HOUSEHOLD_TAG in tags
        try:
            out.append(
                NewNode(
                    content=raw["content"],
                    username=username,
                    node_type=raw["node_type"],
                    tags=[t for t in tags if t != HOUSEHOLD_TAG] if household else list(tags),
                    scope="household" if household else "user",
                    importance=raw["importance"],
                    datetime=raw.get("datetime") or "",
                    fay_node_id=raw["node_id"],
                    fay_pointer_id=raw["pointer_id"],
                    step=raw["created"],
                    retrieved_step=raw["last_retrieved"],
                )
            )
        except ValueError as exc:
            raise BadInput(f"{where}: {exc}") from exc
    return out


def _is_int64(value: Any) -> bool:
    """An integer SQLite can store: a larger one (``2**70``) failed at the write as a bug."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX
    )


def read_profiles(folder: Path) -> dict[str, tuple[str, str]]:
    path = folder / "user_profiles.db"
    if not path.is_file():
        return {}
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT username, user_portrait, extra_info FROM T_Member")
            return {u: (p or "", e or "") for u, p, e in rows}
    except sqlite3.Error as exc:
        raise BadInput(f"{path}: not a Fay user_profiles.db: {exc}") from exc


def import_fay(
    memory: Memory, folder: str | Path, username: str | None = None, progress: Progress = print
) -> dict[str, Any]:
    """Import every stream under ``folder``; each user's nodes in one transaction. A household
    node already stored is not written again (``household_merged`` counts those copies)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"not a folder: {folder}")
    streams = [(u or memory.cfg.default_user, p) for u, p in _streams(folder, username)]
    for user, path in streams:
        _check_user(user, path)
    parsed = [(u, read_nodes(p / "nodes.json", u)) for u, p in streams]  # all, before writing
    profiles = read_profiles(folder)
    for user in profiles:
        _check_user(user, folder / "user_profiles.db")
    report: dict[str, Any] = {"users": {}, "dangling_pointers": 0}
    stored = memory.store.call(db_nodes.household_keys)
    merged = 0
    for user, new in parsed:
        known: dict[int, int] = {}  # this file's Fay id → our id, for the copies not written
        keep = []
        for n in new:
            if n.scope == "household" and _key(n) in stored:
                known[n.fay_node_id] = stored[_key(n)]  # type: ignore[index]
            else:
                keep.append(n)
        for n in keep:
            n.fay_known = known
        written = memory.add(keep, progress=progress)
        for n, w in zip(keep, written, strict=True):
            if n.scope == "household":
                stored.setdefault(_key(n), w["node_id"])
        report["users"][user] = len(written)
        merged += len(known)
        ids = {n.fay_node_id for n in new}
        report["dangling_pointers"] += sum(
            p not in ids for n in keep for p in (n.fay_pointer_id or [])
        )
    if merged:
        report["household_merged"] = merged
    for user, (portrait, extra) in profiles.items():
        memory.set_user_profile(user, portrait[:1000], extra)
    report["profiles"] = len(profiles)
    return report


def _check_user(user: str, where: Path) -> None:
    """A user name from a folder's name (bytes that are not UTF-8 arrive as lone surrogates)
    or a profile row: BadInput naming the file otherwise."""
    try:
        check_name("username", user)
    except BadText as exc:
        raise BadInput(f"{shown(str(where))}: {exc}") from exc


def _key(node: NewNode) -> tuple[str, str, str]:
    return (node.node_type, node.content, node.datetime)


def export_fay(
    memory: Memory, folder: str | Path, username: str | None = None, progress: Progress = print
) -> dict[str, Any]:
    """Write Fay's files; one user flat into ``folder``, else one subfolder per user. A user's
    stream holds the nodes it sees: its own and the household nodes (tagged
    :data:`HOUSEHOLD_TAG`)."""
    folder = Path(folder)
    names = [username] if username else memory.store.call(db_nodes.users)
    report: dict[str, int] = {}
    for user in names:
        rows = memory.store.call(db_nodes.export_rows, user)
        base = folder if username else folder / folder_name(user)
        nodes, embeddings = fay_nodes(rows)
        stream = base / "memory_stream"
        stream.mkdir(parents=True, exist_ok=True)
        _write_json(stream / "nodes.json", nodes)
        _write_json(stream / "embeddings.json", embeddings)
        _write_json(base / "meta.json", {"id": str(uuid.uuid4())})
        report[user] = len(nodes)
        progress(f"exported {len(nodes)} nodes of {shown(user)} to {shown(str(stream))}")
    profiles = [memory.get_user_profile(u) for u in names]
    # Named as their folders are, so that an import finds each profile's stream again.
    profiles = [{**p, "username": folder_name(p["username"])} for p in profiles]
    _write_profiles(folder / "user_profiles.db", profiles)
    return {"users": report}


def folder_name(user: str) -> str:
    """The folder of ``user``'s stream: the name itself, as Fay names it, unless it cannot
    name one folder (a ``/``, a NUL, ``..``: stored before names were checked at the
    edge); then percent-escaped (``a%00b``), so the export still writes every user."""
    if user.strip(".") and not CONTROL_RE.search(user) and "/" not in user:
        return user
    escaped = quote(user, safe="")
    return escaped if escaped.strip(".") else escaped.replace(".", "%2E")


def fay_nodes(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list]]:
    """Our rows → Fay's node list: the imported Fay id where it is still free, new ids after
    the largest otherwise; pointers follow the same map."""
    ids: dict[int, int] = {}
    taken = {r["fay_node_id"] for r in rows if r["fay_node_id"] is not None}
    next_id = max(taken, default=-1) + 1
    used: set[int] = set()
    for r in rows:
        if r["fay_node_id"] is not None and r["fay_node_id"] not in used:
            ids[r["id"]] = r["fay_node_id"]
        else:
            ids[r["id"]] = next_id
            next_id += 1
        used.add(ids[r["id"]])
    nodes, embeddings = [], {}
    for r in rows:
        imp = r["importance"]
        nodes.append(
            {
                "node_id": ids[r["id"]],
                "node_type": r["node_type"],
                "content": r["content"],
                "importance": _fay_importance(imp),
                "datetime": r["datetime"],
                "created": r["step"],
                "last_retrieved": r["retrieved_step"],
                "pointer_id": None
                if r["pointer_id"] is None
                else [ids[p] for p in r["pointer_id"] if p in ids],
                "tags": _fay_tags(r),
            }
        )
        embeddings[r["content"]] = r["vector"]
    return nodes, embeddings


def _fay_importance(value: float) -> float | int:
    """An integer when it is one (Fay's are); an infinite one, stored before importance was
    checked at the edge, as the scale's end (``Infinity`` is not JSON)."""
    if math.isinf(value):
        return HIGH if value > 0 else LOW
    return int(value) if float(value).is_integer() else value


def _fay_tags(row: dict[str, Any]) -> list[str]:
    """Sorted tags; a household node's say so, and only theirs (a stray stored tag of that
    name must not turn a private node into a household one on the way back)."""
    tags = set(row["tags"]) - {HOUSEHOLD_TAG}
    if row["scope"] == "household":
        tags.add(HOUSEHOLD_TAG)
    return sorted(tags)


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")  # complete file or none: a full disk leaves the old one
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def _write_profiles(path: Path, profiles: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS T_Member (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " username TEXT NOT NULL UNIQUE, extra_info TEXT DEFAULT '',"
            " user_portrait TEXT DEFAULT '')"
        )
        conn.executemany(
            "INSERT INTO T_Member (username, extra_info, user_portrait) VALUES (?, ?, ?)"
            " ON CONFLICT(username) DO UPDATE SET extra_info = excluded.extra_info,"
            " user_portrait = excluded.user_portrait",
            [(p["username"], p["extra_info"], p["portrait"]) for p in profiles],
        )
    conn.close()
