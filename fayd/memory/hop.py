"""A second hop: names in the first hits ask a follow-up question.

"What job does Hannah's sister in Brighton have?" finds "Ellie has gone to Brighton"; the
job is in "My little sister Ellie is a journalist", which shares no word with the question.
The first ``HOP_FROM`` hits' names (capitalised words that are neither in the question, nor
a speaker, nor a stopword) go to BM25 as a second query, and its hits are lifted by
``weight x bm25 / max(bm25)`` of the score's total, re-ranking the first pool (a hit
outside the pool enters at the pool's lowest score). Lexical only: no second embedding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from fayd.memory import speakers
from fayd.store import lexical

if TYPE_CHECKING:
    from fayd.memory.index import UserIndex

#: How many of the first hits lend their names.
HOP_FROM = 3
#: Names per follow-up query, most frequent first.
MAX_NAMES = 6
_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]{2,}(?:'s)?")


def names(contents: list[str], query: str) -> list[str]:
    """Capitalised words of ``contents`` worth a follow-up query."""
    asked = {w.lower() for w in re.findall(r"\w+", query)}
    counts: dict[str, int] = {}
    for content in contents:
        who = speakers.speaker(content)
        for word in _NAME.findall(speakers.without(content)):
            word = word.removesuffix("'s")
            low = word.lower()
            if low in asked or low in lexical.STOPWORDS or word == who:
                continue
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: -counts[w])[:MAX_NAMES]


def rerank(
    positions: np.ndarray, scores: np.ndarray, hits: list[tuple[int, float]], lift: float
) -> tuple[np.ndarray, np.ndarray]:
    """The pool with the follow-up query's ``hits`` (row, bm25) lifted by ``lift`` x bm25 /
    max(bm25); the first ``HOP_FROM`` rows lent the names, so a hop lifts only others (lifting
    its sources reinforced the first hit: docs/memory.md)."""
    sources = {int(p) for p in positions[:HOP_FROM]}
    hits = [(p, b) for p, b in hits if p not in sources]
    if not hits:
        return positions, scores
    top = max(b for _, b in hits)
    score = {int(p): float(s) for p, s in zip(positions, scores, strict=True)}
    floor = float(scores.min())
    for p, b in hits:
        score[p] = score.get(p, floor) + lift * b / top
    order = sorted(score, key=lambda p: -score[p])
    return np.array(order, np.int64), np.array([score[p] for p in order], np.float32)


def second(
    index: UserIndex,
    query: str,
    pool: tuple[np.ndarray, np.ndarray],
    mask: np.ndarray | None,
    fetch: Callable[[list[int]], dict[int, Any]],
    search: Callable[[str], list[tuple[int, float]]],
    lift: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The pool (positions, scores) re-ranked by a second hop: ``fetch`` gives nodes by id,
    ``search`` is BM25 over the user's rows (node id, score)."""
    positions, scores = pool
    first = [int(i) for i in index.ids[positions[:HOP_FROM]]]
    contents = fetch(first)
    found = names([contents[i]["content"] for i in first if i in contents], query)
    if not found:
        return positions, scores
    hits = [(index.pos[i], b) for i, b in search(" ".join(found)) if i in index.pos]
    hits = [(p, b) for p, b in hits if mask is None or mask[p]]
    return rerank(positions, scores, hits, lift)
