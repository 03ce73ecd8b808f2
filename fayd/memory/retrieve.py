"""Fay's retrieval score over one user's index, with recency decaying over *time*.

score = w_rec·recency + w_rel·relevance + w_imp·importance, each min-max scaled to [0, 1]
over the candidates (a constant column becomes 0.5, as in Fay). Relevance is the cosine with
the query (0.5 for a node without an embedding of the current model). Recency is
``max(floor, 0.5 ** (age / half_life))`` with age the time since the node was last
retrieved: Fay's ``0.99 ** steps`` decayed with the number of writes, which let a chatty hour
bury yesterday's evidence.
"""

from __future__ import annotations

import numpy as np

from fayd.memory.index import UserIndex


def minmax(x: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    if hi - lo < 1e-12:
        return np.full_like(x, 0.5)
    return (x - lo) / (hi - lo)


def recency(last_retrieved: np.ndarray, now: float, half_life_s: float, floor: float) -> np.ndarray:
    age = np.maximum(now - last_retrieved, 0.0)
    return np.maximum(floor, 0.5 ** (age / half_life_s)).astype(np.float32)


def rank(
    index: UserIndex,
    query: np.ndarray,
    n: int,
    weights: tuple[float, float, float],
    now: float,
    half_life_s: float,
    floor: float,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the top ``n`` candidates, best first, and their scores."""
    count = index.n
    rows = np.arange(count) if mask is None else np.flatnonzero(mask)
    if rows.size == 0 or n <= 0:
        return rows[:0], np.zeros(0, np.float32)
    w_rec, w_rel, w_imp = weights
    # One matrix-vector product over all rows (a fancy-indexed copy of the filtered rows
    # would cost more than the product itself), then pick the candidates.
    rel = index.vecs[:count] @ query
    rel = np.where(index.has_vec[:count], rel, np.float32(0.5))[rows]
    score = w_rel * minmax(rel)
    if w_imp:
        score += w_imp * minmax(index.importance[rows])
    if w_rec:
        rec = recency(index.last_retrieved[rows], now, half_life_s, floor)
        score += w_rec * minmax(rec)
    k = min(n, rows.size)
    top = np.argpartition(-score, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    top = top[np.argsort(-score[top], kind="stable")]
    return rows[top], score[top]
