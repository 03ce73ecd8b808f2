"""Neighbours: a hit lends part of its score to the turns said next to it.

A fact told over two turns ("What did the doctor say?" / "Cut the salt, and walk daily"),
or a question whose answer is the next turn, is found by one turn and needs the other:
MiniLM scores each turn alone. Search therefore ranks a pool wider than ``n`` and re-ranks
it with every candidate's own score lifted by ``weight`` times what its best linked
neighbour (up to ``radius`` rows away in the index, which holds a user's rows in write
order) scores above it, so a turn beside a strong hit can enter the top ``n``. The result
count stays ``n``: expansion ranks, it does not append.

Two adjacent rows are linked when they share a ``session:`` tag, or, when neither has
one, when they are of one node type and were written at most ``GAP_S`` apart (turns of one
sitting). A neighbour outside the pool has no score of its own here: it counts as the
pool's lowest score (it ranked below every pool member).

Off by default (``MemoryConfig.neighbour_weight = 0``): on both recall sets every fact is
one turn, and the lifted neighbours (small talk beside a hit) pushed evidence out of the top
ten (docs/memory.md has the figures).
"""

from __future__ import annotations

import numpy as np

from fayd.memory.index import UserIndex

#: Untagged rows written this close together are turns of one sitting.
GAP_S = 3600.0


def _linked(index: UserIndex, a: int, b: int) -> bool:
    sa, sb = int(index.session[a]), int(index.session[b])
    if sa >= 0 or sb >= 0:
        return sa == sb
    if index.type_code[a] != index.type_code[b]:
        return False
    return abs(float(index.created[a]) - float(index.created[b])) <= GAP_S


def neighbours(index: UserIndex, p: int, radius: int, mask: np.ndarray | None) -> list[int]:
    """Rows within ``radius`` of row ``p`` reached through a chain of linked rows (nearest
    first on each side), candidates only (``mask``)."""
    out: list[int] = []
    for step in (-1, 1):
        q = p
        for _ in range(radius):
            nxt = q + step
            if not 0 <= nxt < index.n or not _linked(index, q, nxt):
                break
            q = nxt
            if mask is None or mask[q]:
                out.append(q)
    return out


def expand(
    index: UserIndex,
    positions: np.ndarray,
    scores: np.ndarray,
    n: int,
    weight: float,
    radius: int,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``n`` of the pool (``positions``/``scores``, best first) and its linked
    neighbours, by ``own + weight * max(0, best linked neighbour - own)``: scores stay within
    the pool's range."""
    if positions.size == 0 or weight <= 0 or radius <= 0:
        return positions[:n], scores[:n]
    own = {int(p): float(s) for p, s in zip(positions, scores, strict=True)}
    floor = float(scores.min())
    near = {p: neighbours(index, p, radius, mask) for p in own}
    for found in list(near.values()):
        for q in found:
            if q not in near:
                near[q] = neighbours(index, q, radius, mask)
    cand = np.fromiter(near, np.int64, len(near))
    final = np.empty(cand.size, np.float64)
    for i, p in enumerate(cand):
        lent = max((own.get(q, 0.0) for q in near[int(p)] if q in own), default=0.0)
        mine = own.get(int(p), floor)
        # Lift only: a weaker row moves toward its neighbour's score, a strong isolated hit
        # keeps its own (averaging the two lowered single-turn facts: docs/memory.md).
        final[i] = mine + weight * max(0.0, lent - mine)
    order = np.argsort(-final, kind="stable")[:n]
    return cand[order], final[order].astype(np.float32)
