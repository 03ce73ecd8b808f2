"""Chaos, the disk's share: a damaged page in a database, salvaged at start (issue 28).

    .venv/bin/python benchmarks/chaos_damage.py [--memories 400]

A household's database is built through fayd's own writers (device keys, reminders, care
rules, caregivers, memories with their vectors, sensor events), backed up, then written to
again (what a rollback to the backup would lose). Two copies of it are damaged, each one
page overwritten with random bytes: a leaf of ``memory_embeddings`` (rebuildable), and the
page of ``reminders`` (a table that matters: every reminder on it is unreadable). Each is
opened by the real start path (fayd.store.recovery.open_checked) and what it holds is
compared with what was written.

A row counts as truly unreadable when the damaged file cannot give it back as written (read
alone by its rowid) and the backup does not hold it; ``rows_lost_on_damage`` counts the
rows missing after the start beyond those (must be 0). Vectors are left out of the counts:
the re-embed pass the daemon runs at every start makes a node's missing vector again
(``vectors_to_remake``). Prints one JSON object; ``measure()`` returns it (for chaos.py).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils

from fayd.care import records as care_records
from fayd.care.rules import Rule
from fayd.memory.nodes import NewNode, insert_nodes
from fayd.protocol import SensorEvent
from fayd.reminders import records as reminder_records
from fayd.store import Store, devices_records
from fayd.store.backup import make_backup
from fayd.store.recovery import open_checked
from fayd.store.salvage import Salvage

PAGE = 4096
DIM = 384
#: Tables made again rather than kept (not counted as rows).
DERIVED = ("memory_embeddings", "memory_fts", "_migrations", "sqlite_sequence")


# --- a household ---------------------------------------------------------------------------


def write_household(store: Store, part: int, memories: int, rng: random.Random) -> None:
    """Part ``part`` of a household (0: before the backup, 1: after it), through fayd's own
    writers."""
    now = time.time()

    def keys(db: sqlite_utils.Database) -> None:
        for i in range(4 if part == 0 else 2):
            devices_records.add_device_key(db, f"dev-{part}-{i}", f"{rng.getrandbits(256):064x}")

    def care(db: sqlite_utils.Database) -> None:
        for i in range(3 if part == 0 else 1):
            care_records.add_caregiver(db, f"carer-{part}-{i}", [f"json://127.0.0.1:9/{i}"], now)
        for i in range(4 if part == 0 else 1):
            care_records.add_rule(
                db,
                Rule(
                    name=f"rule-{part}-{i}",
                    user="mum",
                    kind="event",
                    spec={"sensor": "panic"},
                    severity="critical",
                    ladder=((f"carer-{part}-0", 300.0),),
                    created_at=now,
                ),
            )

    def reminders(db: sqlite_utils.Database) -> None:
        for i in range(6 if part == 0 else 3):
            reminder_records.add(
                db,
                {
                    "user": "mum",
                    "text": f"take the blue pill number {part}-{i} with water",
                    "kind": "medication",
                    "tz": "UTC",
                    "rule": json.dumps({"every": "day", "at": "08:00"}),
                    "first_at": now + 3600 * i,
                    "due_at": now + 3600 * i,
                },
            )

    def memory(db: sqlite_utils.Database) -> None:
        nodes = [
            NewNode(
                content=f"mum said memory {part}-{i}: {' '.join(rng.choices(WORDS, k=12))}",
                username="mum",
                importance=5.0,
            )
            for i in range(memories)
        ]
        vectors = np.random.default_rng(part).standard_normal((memories, DIM)).astype("f4")
        insert_nodes(db, nodes, [5.0] * memories, vectors, "bench-model")

    def events(db: sqlite_utils.Database) -> None:
        batch = [
            ("dev-0-0", SensorEvent(sensor="motion", data={"n": i}, seq=part * 10_000 + i, ts=now))
            for i in range(memories)
        ]
        devices_records.record_events(db, batch)

    for write in (keys, care, reminders, memory, events):
        store.call(write)


WORDS = "kettle garden daughter doctor walk tea rain bus pills knee letter church".split()


def build(path: Path, backups: Path, memories: int = 400, seed: int = 28) -> None:
    """A household database at ``path`` with a backup in ``backups`` taken halfway."""
    rng = random.Random(seed)
    store = Store(path)
    write_household(store, 0, memories, rng)
    store.close()
    make_backup(path, backups, 7)
    store = Store(path)
    write_household(store, 1, memories // 4, rng)
    store.close()


# --- damage --------------------------------------------------------------------------------


def pages_of(path: Path, table: str, leaf: bool = True) -> list[int]:
    """The page numbers of ``table``'s b-tree (leaves only by default), from ``dbstat``."""
    conn = sqlite3.connect(path)
    try:
        kinds = ("leaf",) if leaf else ("leaf", "internal", "overflow")
        marks = ",".join("?" * len(kinds))
        rows = conn.execute(
            f"SELECT pageno FROM dbstat WHERE name = ? AND pagetype IN ({marks}) ORDER BY pageno",
            [table, *kinds],
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def damage_page(path: Path, page: int, seed: int = 0) -> None:
    """Overwrite page ``page`` (1-based) with random bytes."""
    with path.open("r+b") as f:
        f.seek(PAGE * (page - 1))
        f.write(random.Random(seed).randbytes(PAGE))


# --- counting ------------------------------------------------------------------------------


def snapshot(path: Path) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """Every row of every counted table: {table: {rowid: row without its checksum}}."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            n
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not n.startswith(DERIVED)
        ]
        return {t: _rows(conn, t) for t in tables}
    finally:
        conn.close()


def _rows(conn: sqlite3.Connection, table: str) -> dict[Any, tuple[Any, ...]]:
    cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")') if r[1] != "checksum"]
    key = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")') if r[5]] or ["rowid"]
    sql = f'SELECT {", ".join(key)}, {", ".join(cols)} FROM "{table}"'
    return {tuple(r[: len(key)]): tuple(r[len(key) :]) for r in conn.execute(sql)}


def unreadable(damaged: Path, expected: dict[str, dict[Any, tuple[Any, ...]]]) -> set[tuple]:
    """(table, key) of the rows the damaged file cannot give back as written (each read
    alone, by its key)."""
    conn = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
    bad = set()
    try:
        for table, rows in expected.items():
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            cols = [r[1] for r in info if r[1] != "checksum"]
            key = [r[1] for r in info if r[5]] or ["rowid"]
            where = " AND ".join(f"{k} IS ?" for k in key)
            for k, row in rows.items():
                try:
                    got = conn.execute(
                        f'SELECT {", ".join(cols)} FROM "{table}" WHERE {where}', list(k)
                    ).fetchone()
                except sqlite3.DatabaseError:
                    got = None
                if got != row:
                    bad.add((table, k))
    finally:
        conn.close()
    return bad


def run_case(work: Path, source: Path, backups: Path, table: str, seed: int) -> dict[str, Any]:
    """Damage a page of ``table`` in a copy of ``source``, start on it, count."""
    work.mkdir()
    db = work / "fayd.db"
    shutil.copyfile(source, db)
    expected = snapshot(db)
    in_backup = snapshot(next(backups.glob("fayd-*.db")))
    leaves = pages_of(db, table)
    page = leaves[len(leaves) // 2]
    damage_page(db, page, seed)
    truly = {
        (t, k) for t, k in unreadable(db, expected) if k not in in_backup.get(t, {})
    }  # neither readable nor in the backup: the salvage cannot have it
    vectors_before = _count(db, "memory_embeddings")
    started = time.monotonic()
    store, notices = open_checked(db, backups)
    seconds = time.monotonic() - started
    store.close()
    final = snapshot(db)
    missing = {(t, k) for t, rows in expected.items() for k in rows if k not in final.get(t, {})}
    changed = sum(
        1
        for t, rows in expected.items()
        for k, row in rows.items()
        if k in final.get(t, {}) and final[t][k] != row and (t, k) not in truly
    )
    nodes = _count(db, "memory_nodes")
    return {
        "table": table,
        "page": page,
        "rows_written": sum(len(r) for r in expected.values()),
        "truly_unreadable": len(truly),
        "rows_missing": len(missing),
        "rows_lost_on_damage": len(missing - truly),
        "rows_changed": changed,
        "vectors_to_remake": nodes - _count(db, "memory_embeddings") if vectors_before else 0,
        "seconds": round(seconds, 3),
        **_salvage_counts(notices.salvage),
        "notices": list(notices),
        "summary": notices.summary,
    }


def _salvage_counts(result: Salvage | None) -> dict[str, int]:
    tables = result.tables.values() if result else []
    return {
        "salvaged": sum(t.salvaged for t in tables),
        "from_backup": sum(t.from_backup for t in tables),
        "unreadable_ids": sum(len(t.unreadable) for t in tables),
        "lost_ids": sum(len(t.lost or ()) for t in tables),
    }


def _count(path: Path, table: str) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    except sqlite3.DatabaseError:
        return -1
    finally:
        conn.close()


def measure(memories: int = 400) -> dict[str, Any]:
    """Build, back up, write more, damage (a rebuildable table, then one that matters),
    start; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="fayd-damage-") as tmp:
        root = Path(tmp)
        source, backups = root / "built" / "fayd.db", root / "built" / "backups"
        source.parent.mkdir()
        build(source, backups, memories)
        cases = [
            run_case(root / "vectors", source, backups, "memory_embeddings", 1),
            run_case(root / "reminders", source, backups, "reminders", 2),
        ]
    return {
        "rows_lost_on_damage": sum(c["rows_lost_on_damage"] for c in cases),
        "truly_unreadable": sum(c["truly_unreadable"] for c in cases),
        "rows_changed": sum(c["rows_changed"] for c in cases),
        "seconds_max": max(c["seconds"] for c in cases),
        "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=400)
    args = parser.parse_args()
    print(json.dumps(measure(args.memories), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
