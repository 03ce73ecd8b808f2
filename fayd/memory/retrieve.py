"""Fay's retrieval score over one user's index, with recency decaying over *time*, and an
optional fusion with a lexical (BM25) ranking.

score = w_rec·recency + w_rel·relevance + w_imp·importance, each min-max scaled to [0, 1]
over the candidates (a constant column becomes 0.5, as in Fay). Relevance is the cosine with
the query (0.5 for a node without an embedding of the current model). Recency is
``max(floor, 0.5 ** (age / half_life))`` with age the time since the node was last
retrieved: Fay's ``0.99 ** steps`` decayed with the number of writes, which let a chatty hour
bury yesterday's evidence.

Fusion (``Fusion``), with the BM25 hits of the query among the candidates:

- ``rrf``: reciprocal-rank fusion, ``1/(k + r_score) + weight/(k + r_bm25)`` over the top
  ``depth`` of the score ranking and the BM25 hits, rescaled so that a node first in both
  rankings scores ``w_rec + w_rel + w_imp`` (callers compare scores to that sum);
- ``score``: ``weight · bm25 / max(bm25)`` added to the score (0 for a node without a hit),
  the sum scaled by ``total / (total + weight)`` so it stays within ``[0, total]``, with
  ``total = w_rec + w_rel + w_imp``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fayd.memory.index import UserIndex

FUSION_MODES = ("off", "rrf", "score")


@dataclass(frozen=True)
class Fusion:
    mode: str = "rrf"
    weight: float = 1.0
    k: int = 60
    depth: int = 100

    def __post_init__(self) -> None:
        if self.mode not in FUSION_MODES:
            raise ValueError(f"lexical fusion must be one of {FUSION_MODES}: {self.mode!r}")


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
    lexical: tuple[np.ndarray, np.ndarray] | None = None,
    fusion: Fusion | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the top ``n`` candidates, best first, and their scores.

    ``lexical``: (positions, BM25 scores) of the query's lexical hits, best first; those
    outside ``mask`` are ignored. Used only with a ``fusion`` other than ``off``.
    """
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
    if fusion is not None and fusion.mode != "off" and lexical is not None:
        score = _fuse(score, rows, count, n, sum(weights), lexical, fusion)
    k = min(n, rows.size)
    top = np.argpartition(-score, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    top = top[np.argsort(-score[top], kind="stable")]
    return rows[top], score[top]


def _fuse(
    score: np.ndarray,
    rows: np.ndarray,
    count: int,
    n: int,
    total: float,
    lexical: tuple[np.ndarray, np.ndarray],
    fusion: Fusion,
) -> np.ndarray:
    positions, bm25 = lexical
    # Lexical hits → indexes into the candidate rows (dropping non-candidates), best first.
    where = np.full(count, -1, np.int64)
    where[rows] = np.arange(rows.size)
    at = where[np.asarray(positions, np.int64)]
    keep = at >= 0
    at, bm25 = at[keep], np.asarray(bm25, np.float64)[keep]
    if at.size == 0:
        return score
    if fusion.mode == "score":
        lex = np.zeros(rows.size, np.float64)
        lex[at] = bm25 / max(float(bm25.max()), 1e-12)
        fused = score + fusion.weight * lex
        return (fused * (total / (total + fusion.weight) if total else 1.0)).astype(np.float32)
    depth = min(max(fusion.depth, n), rows.size)
    head = np.argpartition(-score, depth - 1)[:depth] if depth < rows.size else np.arange(rows.size)
    head = head[np.argsort(-score[head], kind="stable")]
    fused = np.zeros(rows.size, np.float64)
    fused[head] += 1.0 / (fusion.k + 1 + np.arange(head.size))
    fused[at] += fusion.weight / (fusion.k + 1 + np.arange(at.size))
    scale = (total or 1.0) * (fusion.k + 1) / (1.0 + fusion.weight)
    # Candidates in neither ranking keep the order of their score, below every fused one.
    return (fused * scale + 1e-9 * minmax(score)).astype(np.float32)
