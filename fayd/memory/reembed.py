"""Re-embed the nodes that have no vector of the current embedding model.

A node's vector is stored with its model's name and dimension, and an index loads only the
vectors of the current model: after a model change every older node scores relevance 0.5
until it is embedded again. This pass finds those nodes (all users, both scopes), embeds
them in batches and replaces their vectors, one transaction per batch, so a kill loses at
most the batch in flight and the next pass (the daemon runs one at every start) continues
where this one stopped. Embeddings are computed outside the store transaction and the
memory's lock, as ``Memory.add`` does, so readers never wait on the model.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np
import sqlite_utils

from fayd.embedding import EmbedderLike
from fayd.errors import StoreError
from fayd.memory import speakers
from fayd.store import Store

log = logging.getLogger(__name__)

#: (nodes re-embedded so far, nodes that needed it when the pass started)
ReembedProgress = Callable[[int, int], None]
BATCH = 64


class Reembeddable(Protocol):
    """What a pass needs of the memory (``fayd.memory.service.Memory``, which runs it)."""

    store: Store
    embedder: EmbedderLike

    def replace_vectors(
        self, ids: list[int], vectors: np.ndarray, model: str
    ) -> tuple[list[int], dict[str, int]]: ...

    def refit_projections(self, changed: dict[str, int]) -> None: ...


#: Nodes without a vector of model ``?`` and dimension ``?`` (no row, another model or size).
_STALE = (
    "FROM memory_nodes n LEFT JOIN memory_embeddings e ON e.node_id = n.id"
    " WHERE (e.node_id IS NULL OR e.model != ? OR e.dim != ?)"
)


def count_stale(db: sqlite_utils.Database, model: str, dim: int) -> int:
    return int(db.execute(f"SELECT COUNT(*) {_STALE}", [model, dim]).fetchone()[0])


def stale_nodes(
    db: sqlite_utils.Database, model: str, dim: int, after: int, limit: int
) -> list[tuple[int, str]]:
    """(id, content) of the next ``limit`` stale nodes with an id above ``after``, by id."""
    sql = f"SELECT n.id, n.content {_STALE} AND n.id > ? ORDER BY n.id LIMIT ?"
    return [(int(i), c) for i, c in db.execute(sql, [model, dim, after, limit])]


def write_vectors(
    db: sqlite_utils.Database, ids: list[int], vectors: np.ndarray, model: str
) -> list[int]:
    """Replace the embedding row of each node (``node_id`` is the table's primary key: one
    row per node). A node deleted meanwhile is skipped; returns the ids written."""
    written = []
    for node_id, vector in zip(ids, vectors, strict=True):
        cursor = db.execute(
            "INSERT INTO memory_embeddings (node_id, model, dim, vector)"
            " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_nodes WHERE id = ?)"
            " ON CONFLICT (node_id) DO UPDATE SET"
            " model = excluded.model, dim = excluded.dim, vector = excluded.vector",
            [node_id, model, vector.shape[0], vector.astype("<f4").tobytes(), node_id],
        )
        if cursor.rowcount:
            written.append(node_id)
    return written


class Reembedder:
    """One pass, a batch per :meth:`step` (the daemon runs each step in a worker thread and
    yields to the event loop between them)."""

    def __init__(self, memory: Reembeddable, batch: int = BATCH) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a positive integer: {batch!r}")
        self.memory = memory
        self.batch = batch
        self.model: str = memory.embedder.name
        self.dim: int = memory.embedder.dim
        self.done = 0
        #: The highest id seen: each batch starts past it, so a node that cannot be
        #: embedded (blank content) or written is skipped instead of read again forever.
        self.after = 0
        #: Rows changed per loaded index (user), to refit its projection at the end.
        self.changed: dict[str, int] = {}

    def count(self) -> int:
        return self.memory.store.call(count_stale, self.model, self.dim)

    def step(self) -> bool:
        """Re-embed the next batch; False when no stale node is left."""
        todo = self.memory.store.call(stale_nodes, self.model, self.dim, self.after, self.batch)
        if not todo:
            return False
        self.after = todo[-1][0]
        # The schema refuses blank content; should one exist anyway, it keeps scoring 0.5
        # rather than getting the vector of nothing.
        todo = [(i, c) for i, c in todo if isinstance(c, str) and c.strip()]
        if todo:
            vectors = self.memory.embedder.embed([speakers.without(c) for _, c in todo])  # unlocked
            try:
                written, changed = self.memory.replace_vectors(
                    [i for i, _ in todo], vectors, self.model
                )
            except StoreError as exc:  # e.g. "database or disk is full": the batch rolled back
                raise StoreError(
                    f"re-embedding stopped after {self.done} nodes ({exc}); nothing of the"
                    " failed batch was written, a rerun continues from there"
                ) from exc
            self.done += len(written)
            for user, n in changed.items():
                self.changed[user] = self.changed.get(user, 0) + n
        return True

    def finish(self) -> None:
        """After a complete pass: refit the projection of large indexes whose vectors mostly
        came from it (see ``Memory.refit_projections``)."""
        self.memory.refit_projections(self.changed)


def reembed_all(
    memory: Reembeddable, batch: int = BATCH, progress: ReembedProgress | None = None
) -> int:
    """Re-embed every stale node (blocking); returns how many were re-embedded."""
    job = Reembedder(memory, batch)
    total = job.count()
    while job.step():
        if progress is not None:
            progress(job.done, total)
    job.finish()
    return job.done


async def reembed_in_background(memory: Reembeddable, batch: int = BATCH) -> None:
    """A supervisor component of the daemon: re-embed the stale nodes, then return (the
    supervisor does not restart a component that returned). One batch per worker-thread
    call, at the workers' lower priority, with a yield between batches so a user's turn and
    a shutdown are never held behind the whole pass. A failure is logged and ends the task:
    the nodes keep relevance 0.5 and the next start tries again."""
    try:
        job = Reembedder(memory, batch)
        total = await asyncio.to_thread(job.count)
        if not total:
            return
        log.info("re-embedding %d memory nodes for model %s", total, job.model)
        started = time.monotonic()
        more = True
        while more:
            more = await asyncio.to_thread(job.step)
            await asyncio.sleep(0)  # a turn's work and a shutdown get in between batches
        await asyncio.to_thread(job.finish)
        log.info("re-embedded %d memory nodes in %.1f s", job.done, time.monotonic() - started)
    except Exception:
        log.exception("re-embedding memory nodes failed; they score relevance 0.5 until then")
