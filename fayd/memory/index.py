"""Per-user in-memory arrays for search: vectors, importance, times, types and tags.

Rows hold what scoring needs and nothing else (contents stay in SQLite and are fetched for
the few winners). Arrays grow by x1.25, so an append is amortised O(1); the index is only
changed after the database transaction that it mirrors has committed.

From ``APPROX_MIN_ROWS`` rows on, the index also keeps ``low``: every vector projected on the
top ``PROJ_DIM`` principal axes of the user's own vectors (uncentred, so that
``low @ (proj.T @ q)`` approximates ``vecs @ q``), in int8 steps of 1/127. A search
reads that sixteenth-size matrix (9.6 MB at 100k rows) to pick a shortlist and scores only
the shortlist with the float32 vectors (``fayd.memory.retrieve``). The axes are fitted on a
sample of the rows when the index crosses the threshold and again whenever it has doubled
since; rows added in between are projected on the current axes as they are appended.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from fayd.memory.int8dot import QUERY_MAX, ZERO, int8_dot, to_rows
from fayd.memory.tags import NODE_TYPES

TYPE_CODE = {t: i for i, t in enumerate(NODE_TYPES)}
#: Below this many rows a search takes the exact product over every row (~1.5 ms at 20k).
APPROX_MIN_ROWS = 20_000
#: Dimensions of the projected copy (384 → 96: a quarter of the bytes to read per search).
PROJ_DIM = 96
#: Rows sampled to fit the projection (evenly spaced, so the fit is deterministic).
FIT_SAMPLE = 20_000
#: The int8 step of the projected copy. A unit vector's projection on a unit axis is within
#: ±1, so no row is ever clipped, however new its topic; the rounding adds an error of ~0.002
#: to a relevance, against ~0.014 for leaving out the other 288 axes (and the shortlist is
#: scored exactly).
LOW_STEP = 1 / 127


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
    created_at: float = 0.0  # when it was said: neighbours are turns of one sitting


class UserIndex:
    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self.n = 0
        #: Rows with a vector of this model (the others score relevance 0.5).
        self.n_vec = 0
        self.max_step = -1
        self.ids = np.zeros(capacity, np.int64)
        self.vecs = np.zeros((capacity, dim), np.float32)
        self.has_vec = np.zeros(capacity, bool)
        self.importance = np.zeros(capacity, np.float32)
        self.last_retrieved = np.zeros(capacity, np.float64)
        self.type_code = np.zeros(capacity, np.int8)
        #: When each row was written, and its ``session:`` tag as a code (-1: none), so a
        #: hit can bring its neighbours (fayd.memory.neighbours).
        self.created = np.zeros(capacity, np.float64)
        self.session = np.full(capacity, -1, np.int32)
        self._sessions: dict[str, int] = {}
        self.speaker_tags: set[str] = set()  # the ``speaker:`` tags seen (fayd.memory.speakers)
        self.tag_arrays: dict[str, np.ndarray] = {}  # tag_rows as arrays (speakers.py)
        self.pos: dict[int, int] = {}
        self.tag_rows: dict[str, list[int]] = {}
        #: (dim, k) principal axes, and the rows projected on them (None below the threshold)
        #: in int8 steps of ``LOW_STEP``, stored as uint8 = int8 + 128 (``fayd.memory.int8dot``).
        self.proj: np.ndarray | None = None
        self.low: np.ndarray | None = None
        self._fitted_at = 0

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if need <= cap:
            return
        # x1.25, not x2: at 100k nodes the matrix is 150 MB, doubling would waste as much.
        new = max(need, cap + cap // 4, 1024)
        for name in ("ids", "has_vec", "importance", "last_retrieved", "type_code", "created"):
            old = getattr(self, name)
            arr = np.zeros(new, old.dtype)
            arr[: self.n] = old[: self.n]
            setattr(self, name, arr)
        session = np.full(new, -1, np.int32)
        session[: self.n] = self.session[: self.n]
        self.session = session
        vecs = np.zeros((new, self.dim), np.float32)
        vecs[: self.n] = self.vecs[: self.n]
        self.vecs = vecs
        if self.low is not None:
            low = np.zeros((new, self.low.shape[1]), np.uint8)
            low[: self.n] = self.low[: self.n]
            self.low = low

    def extend(self, rows: Iterable[Row]) -> None:
        rows = list(rows)
        self._grow(self.n + len(rows))
        start = self.n
        for row in rows:
            i = self.n
            self.ids[i] = row.id
            if row.vector is not None and row.vector.shape == (self.dim,):
                self.vecs[i] = row.vector
                self.has_vec[i] = True
                self.n_vec += 1
            self.importance[i] = row.importance
            self.last_retrieved[i] = row.last_retrieved_at
            self.type_code[i] = TYPE_CODE[row.node_type]
            self.created[i] = row.created_at
            for tag in row.tags:
                self.tag_rows.setdefault(tag, []).append(i)
                if tag.startswith("speaker:"):
                    self.speaker_tags.add(tag)
                if tag.startswith("session:"):
                    self.session[i] = self._sessions.setdefault(tag, len(self._sessions))
            self.pos[row.id] = i
            self.max_step = max(self.max_step, row.step)
            self.n += 1
        if self.n >= APPROX_MIN_ROWS and self.n >= 2 * self._fitted_at:
            self.fit_projection()
        elif self.low is not None and self.n > start:
            self._project(np.arange(start, self.n))

    def fit_projection(self, k: int = PROJ_DIM) -> None:
        """Fit the principal axes on a sample of the rows and project every row on them."""
        k = min(k, self.dim)
        have = np.flatnonzero(self.has_vec[: self.n])
        if have.size == 0:
            return
        sample = self.vecs[have[:: max(1, have.size // FIT_SAMPLE)]]
        _, axes = np.linalg.eigh((sample.T @ sample).astype(np.float64))  # ascending
        self.proj = np.ascontiguousarray(axes[:, ::-1][:, :k], np.float32)
        self.low = np.zeros((len(self.ids), k), np.uint8)
        for s in range(0, self.n, 16_384):  # chunks: no n x dim temporary
            self._project(np.arange(s, min(self.n, s + 16_384)))
        self._fitted_at = self.n

    def _project(self, positions: np.ndarray) -> None:
        """Write the rows' projections into ``low`` (rounded to the axis's int8 step)."""
        low = (self.vecs[positions] @ self.proj) * np.float32(1 / LOW_STEP)
        self.low[positions] = to_rows(np.clip(np.rint(low), -127, 127))

    def projected(self, positions: np.ndarray | slice) -> np.ndarray:
        """The rows' projections as ``low`` holds them, in float32 (within half a step of
        ``vecs @ proj`` on each axis)."""
        assert self.low is not None
        return (self.low[positions].astype(np.float32) - ZERO) * np.float32(LOW_STEP)

    def approx_relevance(self, query: np.ndarray) -> np.ndarray | None:
        """``vecs @ query`` approximated from the projected copy, for every row (None when
        the index has no projection: below the threshold)."""
        if self.low is None or self.proj is None:
            return None
        # The query on the axes, rounded to ±QUERY_MAX as well (its own step): the int32
        # product times both steps is the projected dot product, to the rounding (which
        # only picks the shortlist: the shortlist is scored exactly).
        q = query.astype(np.float32) @ self.proj
        step = max(float(np.abs(q).max()) / QUERY_MAX, 1e-12)
        q8 = np.rint(q / step).astype(np.int8)
        dot = int8_dot(self.low[: self.n], q8).astype(np.float32)
        return dot * np.float32(step * LOW_STEP)

    def all_have_vectors(self) -> bool:
        return self.n_vec == self.n

    def fill_missing(self, relevance: np.ndarray) -> np.ndarray:
        """``relevance`` (one value per row) with 0.5 for the rows that have no vector."""
        return np.where(self.has_vec[: self.n], relevance, np.float32(0.5))

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
        arrays = [self.ids, self.vecs, self.has_vec, self.importance, self.last_retrieved]
        arrays += [self.created, self.session]
        arrays += [a for a in (self.proj, self.low) if a is not None]
        return sum(a.nbytes for a in arrays) + self.type_code.nbytes

    def set_vectors(self, positions: np.ndarray, vectors: np.ndarray) -> None:
        """Replace the vectors of existing rows (re-embedding after a model change); the
        projected copy follows on the current axes, as appended rows do."""
        positions = np.asarray(positions, np.int64)
        if positions.size == 0:
            return
        vectors = np.asarray(vectors, np.float32).reshape(positions.size, self.dim)
        # Count a row once, and only if it had no vector yet (a repeat is a replacement).
        self.n_vec += int(np.unique(positions[~self.has_vec[positions]]).size)
        self.vecs[positions] = vectors
        self.has_vec[positions] = True
        if self.low is not None:
            self._project(positions)
