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
#: Candidates scored exactly after the approximate pass: at least 4 x n, and at least one in
#: ``SHORTLIST_SHARE`` of the candidates (more rows, more near-ties to tell apart). Recall of
#: the exact top 10 on real MiniLM vectors: see tests/test_memory_index.py, docs/memory.md.
SHORTLIST = 1000
SHORTLIST_SHARE = 32
#: Candidates with the lowest approximate relevance also scored exactly (the min-max).
LOW_ENDS = 32


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
    return _scale(x, float(x.min()), float(x.max()))


def _scale(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    if hi - lo < 1e-12:
        return np.full_like(x, 0.5)
    return (x - lo) / (hi - lo)


def recency(last_retrieved: np.ndarray, now: float, half_life_s: float, floor: float) -> np.ndarray:
    age = np.maximum(now - last_retrieved, 0.0)
    # exp2(-x) is 0.5 ** x; numpy's power with a scalar base is ~5x slower at 100k rows.
    return np.maximum(floor, np.exp2(-age / half_life_s)).astype(np.float32)


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
    shortlist: int = SHORTLIST,
    boost: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the top ``n`` candidates, best first, and their scores.

    ``lexical``: (positions, BM25 scores) of the query's lexical hits, best first; those
    outside ``mask`` are ignored. Used only with a ``fusion`` other than ``off``.

    With a projected copy in the index (``index.low``, large users) and more candidates
    than ``shortlist``, relevance is exact only for a shortlist (see ``_relevance``); the
    ``n`` returned are chosen among the shortlist, with exact scores (relevance min-max
    still over every candidate; lexical hits are always in the shortlist, so fusion sees
    them all). ``shortlist=0`` forces the exact product over every row.
    """
    count = index.n
    rows = np.arange(count) if mask is None else np.flatnonzero(mask)
    if rows.size == 0 or n <= 0:
        return rows[:0], np.zeros(0, np.float32)
    sel = slice(0, count) if mask is None else rows  # a view instead of a copy when unfiltered
    w_rec, w_rel, w_imp = weights
    imp = minmax(index.importance[sel]) if w_imp else None
    rec = minmax(recency(index.last_retrieved[sel], now, half_life_s, floor)) if w_rec else None
    use_lexical = fusion is not None and fusion.mode != "off" and lexical is not None
    # The lexical hits as indexes into the candidate rows (non-candidates dropped), best first.
    hits, bm25 = _lexical_at(rows, mask, count, lexical) if use_lexical else (rows[:0], None)
    lifted = _lexical_at(rows, mask, count, boost) if boost else None
    if lifted is not None and lifted[0].size <= shortlist:
        # Scored exactly; more (a speaker's every turn at 100k rows) would make the shortlist
        # the whole index: then only those the shortlist holds anyway are lifted.
        hits = np.concatenate([hits, lifted[0]])
    exact = None  # indexes into rows scored exactly (None: all of them)
    if not w_rel:
        rel = np.zeros(rows.size, np.float32)  # minmax → 0.5 everywhere, times 0
    else:
        rel, exact = _relevance(index, query, rows, sel, n, shortlist, weights, imp, rec, hits)
    if exact is None:
        score = _combine(rel, imp, rec, weights)
    else:  # the shortlist only: min-max over every candidate, the rest left out
        score = w_rel * _scale(rel[exact], float(rel.min()), float(rel.max()))
        if imp is not None:
            score += w_imp * imp[exact]
        if rec is not None:
            score += w_rec * rec[exact]
        rows = rows[exact]
    if use_lexical:
        lex = hits[: bm25.size]
        if exact is not None:  # the hits are all in the shortlist: re-index them into it
            lex = np.searchsorted(exact, lex)
        score = _fuse(score, n, sum(weights), lex, bm25, fusion)
    if lifted is not None and lifted[0].size:
        at, amount = lifted
        if exact is not None:
            where = np.minimum(np.searchsorted(exact, at), exact.size - 1)
            held = exact[where] == at
            at, amount = where[held], amount[held]
        score = score.astype(np.float32, copy=True)
        score[at] += (amount * (sum(weights) or 1.0)).astype(np.float32)
    k = min(n, rows.size)
    top = np.argpartition(-score, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    top = top[np.argsort(-score[top], kind="stable")]
    return rows[top], score[top]


def _combine(
    rel: np.ndarray,
    imp: np.ndarray | None,
    rec: np.ndarray | None,
    weights: tuple[float, float, float],
) -> np.ndarray:
    w_rec, w_rel, w_imp = weights
    score = w_rel * minmax(rel)
    if imp is not None:
        score += w_imp * imp
    if rec is not None:
        score += w_rec * rec
    return score


def _relevance(
    index: UserIndex,
    query: np.ndarray,
    rows: np.ndarray,
    sel: np.ndarray | slice,
    n: int,
    shortlist: int,
    weights: tuple[float, float, float],
    imp: np.ndarray | None,
    rec: np.ndarray | None,
    hits: np.ndarray,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Relevance of the candidate ``rows``, and which of them are exact (None: all).

    Exact: one matrix-vector product over all rows (a fancy-indexed copy of the filtered
    rows would cost more than the product itself), or over the gathered candidates when
    there are few. Shortlist: the projected copy gives every candidate an approximate
    relevance and so an approximate score (importance and recency exact, min-max over all
    candidates as always); the exact product is then taken for the best ``shortlist`` by
    that score, the best ``shortlist`` by approximate relevance (when other weights are
    on), the lowest few (so min-max has the true minimum) and the lexical ``hits`` (fusion
    can lift any of them). Every other candidate keeps its approximate relevance, which
    only enters the min-max.
    """
    count = index.n
    size = max(shortlist, 4 * n, rows.size // SHORTLIST_SHARE)
    approx = index.approx_relevance(query) if shortlist and rows.size > size else None
    if approx is None:
        if index.low is not None and rows.size < count // 2:
            rel = index.vecs[rows] @ query  # few candidates (a filter): gather them
            return np.where(index.has_vec[rows], rel, np.float32(0.5)), None
        rel = index.vecs[:count] @ query
        return np.where(index.has_vec[:count], rel, np.float32(0.5))[sel], None
    rel = approx if index.all_have_vectors() else index.fill_missing(approx)
    rel = rel[sel]
    first = rel if imp is None and rec is None else _combine(rel, imp, rec, weights)
    parts = [_top(first, size), _bottom(rel, LOW_ENDS), hits]
    if imp is not None or rec is not None:
        parts.append(_top(rel, size))
    keep = np.zeros(rel.size, bool)  # the union, sorted: a mask is ~5x faster than unique
    for part in parts:
        keep[part] = True
    pick = np.flatnonzero(keep)
    chosen = rows[pick]
    exact = np.einsum("ij,j->i", index.vecs[chosen], query)  # one thread (see index.py)
    rel[pick] = np.where(index.has_vec[chosen], exact, np.float32(0.5))
    return rel, pick


def _top(x: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` largest values of ``x`` (unordered)."""
    if k >= x.size:
        return np.arange(x.size)
    return np.argpartition(x, x.size - k)[x.size - k :]  # no negated copy of x


def _bottom(x: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` smallest values of ``x`` (unordered)."""
    if k >= x.size:
        return np.arange(x.size)
    return np.argpartition(x, k - 1)[:k]


def _lexical_at(
    rows: np.ndarray, mask: np.ndarray | None, count: int, lexical: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Lexical hits (positions, BM25) → (indexes into the candidate rows, their BM25), hits
    outside the candidates dropped, order kept."""
    positions = np.asarray(lexical[0], np.int64)
    bm25 = np.asarray(lexical[1], np.float64)
    if mask is None:  # every row is a candidate: a position is its own index
        return positions, bm25
    keep = mask[positions]
    # rows is sorted (flatnonzero), so a hit's index among the candidates is a binary search.
    return np.searchsorted(rows, positions[keep]), bm25[keep]


def _fuse(
    score: np.ndarray,
    n: int,
    total: float,
    at: np.ndarray,
    bm25: np.ndarray,
    fusion: Fusion,
) -> np.ndarray:
    """``score`` fused with the lexical hits ``at`` (indexes into ``score``, best first)."""
    if at.size == 0:
        return score
    size = score.size
    if fusion.mode == "score":
        lex = np.zeros(size, np.float64)
        lex[at] = bm25 / max(float(bm25.max()), 1e-12)
        fused = score + fusion.weight * lex
        return (fused * (total / (total + fusion.weight) if total else 1.0)).astype(np.float32)
    depth = min(max(fusion.depth, n), size)
    head = np.argpartition(-score, depth - 1)[:depth] if depth < size else np.arange(size)
    head = head[np.argsort(-score[head], kind="stable")]
    fused = np.zeros(size, np.float64)
    fused[head] += 1.0 / (fusion.k + 1 + np.arange(head.size))
    fused[at] += fusion.weight / (fusion.k + 1 + np.arange(at.size))
    scale = (total or 1.0) * (fusion.k + 1) / (1.0 + fusion.weight)
    # Candidates in neither ranking keep the order of their score, below every fused one.
    return (fused * scale + 1e-9 * minmax(score)).astype(np.float32)


#: Cosine above which two rows say the same thing ("Classic." said in five sessions).
SAME = 0.995


def distinct(
    index: UserIndex, positions: np.ndarray, scores: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` of a ranking (best first) with repeats left out: a row whose vector
    is the same as a better one's adds nothing, and five copies of a filler line pushed
    evidence out of the top ten. Rows without a vector are kept."""
    if positions.size <= 1:
        return positions[:n], scores[:n]
    vecs = index.vecs[positions]
    keep: list[int] = []
    for i in range(positions.size):
        if index.has_vec[positions[i]] and keep:
            kept = [k for k in keep if index.has_vec[positions[k]]]
            if kept and float(np.max(vecs[kept] @ vecs[i])) >= SAME:
                continue
        keep.append(i)
        if len(keep) == n:
            break
    return positions[keep], scores[keep]
