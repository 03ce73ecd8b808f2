"""Per-user in-memory arrays for search: vectors, importance, times, types and tags.

Rows hold what scoring needs and nothing else (contents stay in SQLite and are fetched for
the few winners). Arrays grow by doubling, so an append is amortised O(1); the index is only
changed after the database transaction that it mirrors has committed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from fayd.memory.tags import NODE_TYPES

TYPE_CODE = {t: i for i, t in enumerate(NODE_TYPES)}


@dataclass
class Row:
    """One node as the index sees it (vector may be None: no embedding of this model)."""

    id: int
    node_type: str
    importance: float
    last_retrieved_at: float
    step: int
    tags: list[str]
    vector: np.ndarray | None


class UserIndex:
    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self.n = 0
        self.max_step = -1
        self.ids = np.zeros(capacity, np.int64)
        self.vecs = np.zeros((capacity, dim), np.float32)
        self.has_vec = np.zeros(capacity, bool)
        self.importance = np.zeros(capacity, np.float32)
        self.last_retrieved = np.zeros(capacity, np.float64)
        self.type_code = np.zeros(capacity, np.int8)
        self.pos: dict[int, int] = {}
        self.tag_rows: dict[str, list[int]] = {}

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if need <= cap:
            return
        # x1.25, not x2: at 100k nodes the matrix is 150 MB, doubling would waste as much.
        new = max(need, cap + cap // 4, 1024)
        for name in ("ids", "has_vec", "importance", "last_retrieved", "type_code"):
            old = getattr(self, name)
            arr = np.zeros(new, old.dtype)
            arr[: self.n] = old[: self.n]
            setattr(self, name, arr)
        vecs = np.zeros((new, self.dim), np.float32)
        vecs[: self.n] = self.vecs[: self.n]
        self.vecs = vecs

    def extend(self, rows: Iterable[Row]) -> None:
        rows = list(rows)
        self._grow(self.n + len(rows))
        for row in rows:
            i = self.n
            self.ids[i] = row.id
            if row.vector is not None and row.vector.shape == (self.dim,):
                self.vecs[i] = row.vector
                self.has_vec[i] = True
            self.importance[i] = row.importance
            self.last_retrieved[i] = row.last_retrieved_at
            self.type_code[i] = TYPE_CODE[row.node_type]
            for tag in row.tags:
                self.tag_rows.setdefault(tag, []).append(i)
            self.pos[row.id] = i
            self.max_step = max(self.max_step, row.step)
            self.n += 1

    def mask(
        self,
        node_type: str = "all",
        tags_all: list[str] | None = None,
        tags_any: list[str] | None = None,
    ) -> np.ndarray | None:
        """Candidate rows as a boolean mask, or None when every row is a candidate."""
        mask: np.ndarray | None = None
        if node_type != "all":
            mask = self.type_code[: self.n] == TYPE_CODE[node_type]
        for tag in tags_all or ():
            rows = np.zeros(self.n, bool)
            rows[self.tag_rows.get(tag, [])] = True
            mask = rows if mask is None else mask & rows
        if tags_any:
            rows = np.zeros(self.n, bool)
            for tag in tags_any:
                rows[self.tag_rows.get(tag, [])] = True
            mask = rows if mask is None else mask & rows
        return mask

    def touch(self, positions: np.ndarray, now: float) -> None:
        self.last_retrieved[positions] = now

    def memory_bytes(self) -> int:
        arrays = (self.ids, self.vecs, self.has_vec, self.importance, self.last_retrieved)
        return sum(a.nbytes for a in arrays) + self.type_code.nbytes
