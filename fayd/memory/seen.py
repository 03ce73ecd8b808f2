"""Memory written by another process while the daemon runs (``fayd memory add``, ``fayd
mcp``'s memory_remember, ``fayd memory import-fay``): noticed before each search and folded
into the loaded indexes, so the running daemon recalls it without a restart.

SQLite's ``PRAGMA data_version`` changes only when *another* connection committed: an idle
household pays one pragma per search. When it changed, the nodes past the last id seen are
read (rows, tags, vectors); a count that does not add up means rows went away (or the
database was replaced): the indexes are dropped and load again. Rows stored without a vector
of the current model are embedded here, once, and their vectors written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from fayd.embedding import EmbedderLike
from fayd.memory import nodes as db_nodes
from fayd.memory import speakers
from fayd.memory.index import Row, UserIndex
from fayd.memory.reembed import write_vectors
from fayd.store import Store

log = logging.getLogger(__name__)


@dataclass
class Found:
    """What others wrote since the last look: each new row with its writer and scope, or
    ``reload`` when rows were deleted or changed beyond appending."""

    rows: list[tuple[str, str, Row]] = field(default_factory=list)
    reload: bool = False


class OtherWriters:
    """The last state of ``memory_nodes`` this process knows: call :meth:`look` on the
    store's thread and :meth:`wrote` after each of the process's own inserts, both under
    the memory's lock (so an own insert is never taken for another's)."""

    def __init__(self) -> None:
        self.version: int | None = None
        #: The largest node id and the node count as of the last look.
        self.mark = 0
        self.count = 0
        #: Ids this process inserted since the last look.
        self.own: set[int] = set()

    def wrote(self, ids: list[int]) -> None:
        self.own.update(ids)

    def look(self, db: sqlite_utils.Database, model: str, dim: int) -> Found | None:
        """None when no other connection committed since the last look."""
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        if version == self.version:
            # Nothing but our own writes since: known without asking the table.
            if self.own:
                self.mark = max(self.mark, *self.own)
                self.count += len(self.own)
                self.own.clear()
            return None
        first = self.version is None
        self.version = version
        mark, count = db.execute(
            "SELECT COALESCE(MAX(id), 0), COUNT(*) FROM memory_nodes"
        ).fetchone()
        if first:  # the indexes load from the database as it is now
            self.mark, self.count, self.own = int(mark), int(count), set()
            return None
        after = [
            (int(i), str(u), str(s))
            for i, u, s in db.execute(
                "SELECT id, username, scope FROM memory_nodes WHERE id > ? ORDER BY id",
                [self.mark],
            )
        ]
        expected = self.count + len(after)
        theirs = [a for a in after if a[0] not in self.own]
        self.mark, self.count, self.own = int(mark), int(count), set()
        if count != expected:
            return Found(reload=True)
        if not theirs:
            return None
        loaded = {r.id: r for r in db_nodes.load_rows_after(db, theirs[0][0] - 1, model, dim)}
        return Found([(u, s, loaded[i]) for i, u, s in theirs if i in loaded])


def catch_up(
    store: Store, embedder: EmbedderLike, others: OtherWriters, indexes: dict[str, UserIndex]
) -> None:
    """Fold what other processes wrote since the last look into the loaded ``indexes``
    (call under the memory's lock; unloaded users read it when they load)."""
    model, dim = embedder.name, embedder.dim
    found = store.call(others.look, model, dim)
    if found is None:
        return
    if found.reload:
        log.info("memory rows were removed by another process: the indexes load again")
        indexes.clear()
        return
    bare = [row for _, _, row in found.rows if row.vector is None]
    if bare:  # stored without a vector of this model (another model, or none): embed now
        ids = [row.id for row in bare]
        texts = store.call(_contents, ids)
        vectors = embedder.embed([speakers.without(texts[i]) for i in ids])
        store.call(write_vectors, ids, vectors, model)
        for row, vector in zip(bare, vectors, strict=True):
            row.vector = vector
    for user, scope, row in found.rows:
        if user in indexes:
            indexes[user].extend([row])
        if scope == "household":
            for other, index in indexes.items():
                if other != user:
                    mirror(index, [row])
    log.info("%d memory nodes written by another process are recalled now", len(found.rows))


def mirror(index: UserIndex, rows: list[Row]) -> None:
    """Add household rows that another user wrote: ``max_step`` stays the user's own (it is
    the time step a touch records, and steps count one writer's nodes)."""
    if rows:
        step = index.max_step
        index.extend(rows)
        index.max_step = step


def _contents(db: sqlite_utils.Database, ids: list[int]) -> dict[int, Any]:
    marks = ",".join("?" * len(ids))
    sql = f"SELECT id, content FROM memory_nodes WHERE id IN ({marks})"
    return dict(db.execute(sql, ids).fetchall())
