"""Salvage a damaged database: every readable row into a fresh file, the backup for the rest.

Starting again from the last backup threw away everything written since (device keys, so
a device was "Not authorized"; reminders; care rules), though most of the damaged file was
still readable. :func:`salvage` instead builds a new database of the damaged file's schema
version (the remaining migrations run when the store opens it) and copies into it:

1. every row it can read from the damaged file. A rowid table is read in rowid ranges; a
   range that raises (a damaged page under it) is halved until the rowids that cannot be
   read are found, and only those are skipped. A WITHOUT ROWID table is read until the
   first damage. A row of a checksummed table (fayd.store.checksum) that fails its
   checksum is left out as damaged.
2. from the newest good backup, only into a table that could not be read whole: its rows
   whose primary key the salvage lacks. (A table read whole keeps what it had: a row
   missing from it was deleted since the backup, and stays deleted.)
3. what is derived is made again, not copied: the full-text index (fayd.store.lexical) is
   refilled from the nodes, vectors left without a node are dropped (a node without a
   vector is embedded again by the re-embed pass the daemon runs at every start), the
   indexes are built as the rows go in, and AUTOINCREMENT counters never go back (an id is
   never given twice).

SQLite's ``.recover`` is not used: Debian's ``sqlite3`` 3.40 is built without the
``sqlite_dbpage`` table it needs ("SQL logic error"), and the rowid reader above gives back
the same rows whenever the table's interior pages are sound.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from fayd.store import checksum, lexical
from fayd.store.health import read_only, read_only_uri
from fayd.store.migrations import MIGRATIONS, apply_migrations

log = logging.getLogger(__name__)

MIN_ROWID, MAX_ROWID = -(2**63), 2**63 - 1
#: Rows per read from the damaged file (and per insert into the new one).
BATCH = 500
#: Failed reads per table before the rest of it is given up (a damaged top of a b-tree
#: makes every read fail: halving 2^63 rowids would never end).
FAILED_READS_MAX = 20_000
#: Tables not copied: made again (the full-text index and its shadow tables) or kept apart.
_NOT_COPIED = ("_migrations", "sqlite_sequence", "sqlite_stat1")


@dataclass
class TableSalvage:
    """What happened to one table."""

    table: str
    salvaged: int = 0
    from_backup: int = 0
    #: Rowids the damaged file could not give back (a gap there may never have held a row).
    unreadable: set[int] = field(default_factory=set)
    #: Some of the table could not be read (so the backup fills in what it lacks).
    incomplete: bool = False
    #: A read of it failed (damaged pages), as opposed to rows read but failing a check.
    read_failed: bool = False
    #: Part of it could not be read at all, so how many rows it lost cannot be told.
    gave_up: bool = False
    #: Rows read but refused: failing their checksum (key as read → the row as read).
    damaged: dict[Any, dict[str, Any]] = field(default_factory=dict)
    refused: int = 0
    #: Rows of a checksummed table taken from the backup (key → the row).
    restored: dict[Any, dict[str, Any]] = field(default_factory=dict)
    #: Ids known to be lost (unreadable and not in the backup), for a table whose rowid is
    #: its id; None when it cannot be told (a table keyed by a name).
    lost: set[int] | None = None

    @property
    def lost_names(self) -> list[Any]:
        """Keys of rows that failed their checksum and were not in the backup either."""
        return [k for k in self.damaged if k not in self.restored]


@dataclass
class Salvage:
    tables: dict[str, TableSalvage]
    backup: Path | None
    #: The damaged file's list of tables could not be read: nothing was salvaged from it.
    schema_lost: bool
    seconds: float = 0.0

    def of(self, table: str) -> TableSalvage:
        return self.tables.get(table) or TableSalvage(table)


def salvage(damaged: Path, target: Path, backup: Path | None) -> Salvage:
    """Build at ``target`` (which must not exist) a database of every readable row of
    ``damaged``, completed from ``backup`` where a table could not be read whole."""
    started = time.monotonic()
    version = _version(damaged) or (backup and _version(backup)) or len(MIGRATIONS)
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        apply_migrations(sqlite_utils.Database(conn), MIGRATIONS[:version])
        conn.execute("PRAGMA foreign_keys=OFF")  # a row may come before the one it names
        tables = _copied_tables(conn)
        # The new file is renamed into place only when whole: one transaction per step.
        conn.execute("BEGIN")
        with read_only(damaged) as src:
            src.text_factory = _lenient_text
            # A damaged part of the schema leaves the tables it names out instead of
            # failing every statement (SQLite's SQLITE_NoSchemaError, set by this pragma).
            src.execute("PRAGMA writable_schema = ON")
            found = _source_tables(src)
            result = Salvage({t: TableSalvage(t) for t in tables}, backup, not found)
            for table in tables:
                _copy_table(src, conn, result.tables[table], found)
            sequences = _sequences(src)
        conn.execute("COMMIT")
        if backup is not None:
            _merge_backup(conn, backup, result)
            sequences = _max_each(sequences, _sequences_of(backup))
        conn.execute("BEGIN")
        _rebuild_derived(conn, sequences)
        _find_lost(conn, result, sequences)
        conn.execute("COMMIT")
    finally:
        conn.close()
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _lenient_text(raw: bytes) -> str:
    # A damaged byte may leave text that is not UTF-8: keep the row, mark the bad bytes.
    return raw.decode("utf-8", "replace")


def _version(path: Path) -> int | None:
    try:
        with read_only(path) as conn:
            return conn.execute("SELECT max(version) FROM _migrations").fetchone()[0]
    except sqlite3.Error:
        return None


def _copied_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _ in rows
        if name not in _NOT_COPIED
        and name not in virtual
        and not any(name.startswith(f"{v}_") for v in virtual)  # its shadow tables
    ]


def _source_tables(src: sqlite3.Connection) -> dict[str, list[str]] | None:
    """Each table of the damaged file and its columns; None when its schema is unreadable."""
    try:
        names = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: [r[1] for r in src.execute(f'PRAGMA table_info("{n}")')] for n in names}
    except sqlite3.DatabaseError as exc:
        log.error("salvage: the damaged file's list of tables cannot be read: %s", exc)
        return None


def _columns(conn: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


def _primary_key(conn: sqlite3.Connection, table: str) -> list[str]:
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    return [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]


def _rowid_is_key(conn: sqlite3.Connection, table: str) -> bool:
    """Whether the table's primary key is its rowid (one INTEGER PRIMARY KEY column)."""
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    key = [r for r in info if r[5]]
    return len(key) == 1 and key[0][2].upper() == "INTEGER" and not _without_rowid(conn, table)


def _without_rowid(conn: sqlite3.Connection, table: str) -> bool:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
    return "WITHOUT ROWID" in sql.upper()


# --- 1. the readable rows ------------------------------------------------------------------


def _copy_table(
    src: sqlite3.Connection,
    dst: sqlite3.Connection,
    out: TableSalvage,
    found: dict[str, list[str]] | None,
) -> None:
    if found is None or out.table not in found:
        out.incomplete = out.read_failed = out.gave_up = True
        return
    cols = [c for c in _columns(dst, out.table) if c in found[out.table]]
    signed = checksum.SIGNED.get(out.table)
    if signed is not None and checksum.COLUMN not in cols:
        signed = None  # from before the checksums: nothing to check them against
    insert = _inserter(dst, out, cols, signed, _rowid_is_key(dst, out.table))
    if _without_rowid(dst, out.table):
        _read_whole(src, out, cols, insert)
    else:
        _read_by_rowid(src, out, cols, insert)


def _inserter(
    dst: sqlite3.Connection,
    out: TableSalvage,
    cols: list[str],
    signed: checksum.Signed | None,
    rowid_is_key: bool,
) -> Callable[[list[tuple[Any, ...]]], None]:
    names = ", ".join(f'"{c}"' for c in cols)
    sql = f'INSERT OR IGNORE INTO "{out.table}" ({names}) VALUES ({", ".join("?" * len(cols))})'

    def insert(rows: list[tuple[Any, ...]]) -> None:
        """``rows``: (rowid, *cols) each."""
        keep = []
        for rowid, *values in rows:
            row = dict(zip(cols, values, strict=True))
            if signed is not None and not checksum.holds(signed, row):
                out.damaged[row[signed.key]] = row
                out.unreadable.add(rowid)
                out.incomplete = True
                continue
            keep.append((rowid, values))
        before = dst.total_changes
        dst.executemany(sql, [values for _, values in keep])
        done = dst.total_changes - before
        out.salvaged += done
        if done < len(keep):  # values the table's checks refuse (a damaged cell)
            out.refused += len(keep) - done
            if rowid_is_key:
                ids = [rowid for rowid, _ in keep]
                out.unreadable.update(set(ids) - rows_present(dst, out.table, ids))

    return insert


def _read_whole(src: sqlite3.Connection, out: TableSalvage, cols: list[str], insert) -> None:
    names = ", ".join(f'"{c}"' for c in cols)
    try:
        cursor = src.execute(f'SELECT NULL, {names} FROM "{out.table}"')
        while batch := cursor.fetchmany(BATCH):
            insert(batch)
    except sqlite3.DatabaseError as exc:
        log.error("salvage: %s could be read only up to a damaged page: %s", out.table, exc)
        out.incomplete = out.read_failed = out.gave_up = True


def _read_by_rowid(src: sqlite3.Connection, out: TableSalvage, cols: list[str], insert) -> None:
    """Every row that can be read, by rowid ranges: a range that fails is halved until the
    single rowids that cannot be read are found."""
    names = ", ".join(f'"{c}"' for c in cols)
    sql = f'SELECT rowid, {names} FROM "{out.table}" WHERE rowid > ? AND rowid <= ? ORDER BY rowid'
    ranges = [_bounds(src, out.table)]  # (after, up to]
    failures = 0
    while ranges:
        after, upto = ranges.pop()
        try:
            cursor = src.execute(sql, [after, upto])
            while batch := cursor.fetchmany(BATCH):
                insert(batch)
                after = batch[-1][0]
        except sqlite3.DatabaseError as exc:
            if failures == 0:
                log.error("salvage: %s has damaged pages: %s", out.table, exc)
            failures += 1
            out.incomplete = out.read_failed = True
            if upto - after <= 1:
                out.unreadable.add(upto)
            elif failures > FAILED_READS_MAX:
                log.error("salvage: gave up on the rest of %s after rowid %d", out.table, after)
                out.gave_up = True
                return
            else:
                middle = after + (upto - after) // 2
                ranges += [(middle, upto), (after, middle)]  # the lower half first


def _bounds(src: sqlite3.Connection, table: str) -> tuple[int, int]:
    """(below the first rowid, the last rowid): the ends of the b-tree are read alone, so
    one damaged page in the middle does not hide them."""
    ends = []
    for fn, fallback in (("min", 1), ("max", MAX_ROWID)):
        try:
            (value,) = src.execute(f'SELECT {fn}(rowid) FROM "{table}"').fetchone()
        except sqlite3.DatabaseError:
            value = fallback
        ends.append(fallback if value is None else value)
    return ends[0] - 1, max(ends)


# --- 2. the backup, for what could not be read -------------------------------------------


def _merge_backup(conn: sqlite3.Connection, backup: Path, result: Salvage) -> None:
    conn.execute("ATTACH DATABASE ? AS bk", [read_only_uri(backup)])  # not in a transaction
    try:
        conn.execute("BEGIN")
        in_backup = {r[0] for r in conn.execute("SELECT name FROM bk.sqlite_master")}
        for out in result.tables.values():
            if out.incomplete and out.table in in_backup:
                _merge_table(conn, out)
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("DETACH DATABASE bk")


def _merge_table(conn: sqlite3.Connection, out: TableSalvage) -> None:
    key = _primary_key(conn, out.table)
    if not key:
        log.warning("salvage: %s has no primary key: not completed from the backup", out.table)
        return
    theirs = set(_columns(conn, out.table, "bk"))
    cols = [c for c in _columns(conn, out.table) if c in theirs]
    signed = checksum.SIGNED.get(out.table)
    names = ", ".join(f'"{c}"' for c in cols)
    same_key = " AND ".join(f'm."{k}" IS b."{k}"' for k in key)
    theirs_cols = ", ".join(f'b."{c}"' for c in cols)
    rows = conn.execute(
        f'SELECT {theirs_cols} FROM bk."{out.table}" b'
        f' WHERE NOT EXISTS (SELECT 1 FROM main."{out.table}" m WHERE {same_key})'
    ).fetchall()
    marks = ", ".join("?" * len(cols))
    insert = f'INSERT OR IGNORE INTO main."{out.table}" ({names}) VALUES ({marks})'
    for values in rows:
        row = dict(zip(cols, values, strict=True))
        if signed is not None and checksum.COLUMN in row and not checksum.holds(signed, row):
            continue  # the backup's copy is damaged too
        if conn.execute(insert, values).rowcount == 1:
            out.from_backup += 1
            if signed is not None:
                out.restored[row[signed.key]] = row


# --- 3. what is derived ------------------------------------------------------------------


def _sequences(src: sqlite3.Connection) -> dict[str, int]:
    try:
        return dict(src.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    except sqlite3.DatabaseError:
        return {}


def _sequences_of(path: Path) -> dict[str, int]:
    try:
        with read_only(path) as conn:
            return _sequences(conn)
    except sqlite3.Error:
        return {}


def _max_each(*maps: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in maps:
        for name, seq in m.items():
            if isinstance(seq, int):
                out[name] = max(out.get(name, seq), seq)
    return out


def _rebuild_derived(conn: sqlite3.Connection, sequences: dict[str, int]) -> None:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "memory_embeddings" in names:
        conn.execute(
            "DELETE FROM memory_embeddings WHERE node_id NOT IN (SELECT id FROM memory_nodes)"
        )
    if lexical.TABLE in names:
        lexical.backfill(sqlite_utils.Database(conn))
    # Ids are never given twice: the counter goes on from the highest ever seen.
    for name, seq in sequences.items():
        if name not in names:
            continue
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", [seq, name])
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) SELECT ?, ?"
            " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)",
            [name, seq, name],
        )


def _find_lost(conn: sqlite3.Connection, result: Salvage, sequences: dict[str, int]) -> None:
    """The unreadable ids that are in neither the salvage nor the backup, up to the highest
    id the table is known to have given (a rowid past it never held a row)."""
    for out in result.tables.values():
        if not out.incomplete or _without_rowid(conn, out.table):
            continue
        (highest,) = conn.execute(f'SELECT max(rowid) FROM "{out.table}"').fetchone()
        bound = max(highest or 0, sequences.get(out.table, 0))
        out.unreadable = {i for i in out.unreadable if 0 < i <= bound}
        if _rowid_is_key(conn, out.table):
            out.lost = out.unreadable - rows_present(conn, out.table, out.unreadable)


def rows_present(conn: sqlite3.Connection, table: str, ids: Iterable[int]) -> set[int]:
    """Which of the rowids ``ids`` ``table`` holds (in the new database)."""
    ids = list(ids)
    present: set[int] = set()
    for i in range(0, len(ids), BATCH):
        chunk = ids[i : i + BATCH]
        marks = ",".join("?" * len(chunk))
        present.update(
            r[0]
            for r in conn.execute(f'SELECT rowid FROM "{table}" WHERE rowid IN ({marks})', chunk)
        )
    return present
