"""Ranking: the query cleaned, both rankings of chunks, and their fusion.

Two rankings, because each misses what the other finds: MiniLM's cosine finds a paraphrase
("how do I get rid of the white crust" → the descaling paragraph) but ranks rare exact words
(a model number, a name, a dose) poorly and reads Chinese badly (it is an English model);
FTS5's BM25 finds exact words and, through bigrams, Chinese. Reciprocal-rank fusion
(Cormack et al., 2009) adds ``weight / (RRF_K + rank)`` over the rankings a chunk appears in:
it needs no calibration between a cosine and a BM25 score. The vector ranking's weight is
:data:`VECTOR_WEIGHT` times the share of the query that is not CJK (:func:`vector_weight`):
for a Chinese question MiniLM's ranking is close to noise and, at equal weight, pushed the
right passage down (benchmarks/kb.py: Chinese answer@1 0.48 fused at equal weights, 0.86 by
the words alone). For English, vectors at twice the words' weight found the answer in the top
5 for 0.972 of the questions, equal weights 0.953 (two questions of 107: a small margin).
"""

from __future__ import annotations

import re

import numpy as np

from fayd.kb.errors import BadQuery
from fayd.store.lexical import terms

#: A longer query is cut to this many characters: a question is a sentence, and MiniLM reads
#: 256 word pieces at most anyway.
MAX_QUERY_CHARS = 1000
#: At most this many words go into the FTS5 expression.
MAX_TERMS = 32
#: At most this many hits, whatever ``k`` asks.
MAX_K = 50
#: How deep each ranking is read before fusion.
DEPTH = 50
RRF_K = 60
#: The vector ranking's weight for an all-English query (the words' is 1).
VECTOR_WEIGHT = 2.0
_SURROGATE = re.compile("[\ud800-\udfff]")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def clean_query(query: object) -> str:
    """The query as searched: a str, without lone surrogates (a broken client's UTF-16
    halves cannot be encoded), at most :data:`MAX_QUERY_CHARS`; an empty one is refused."""
    if not isinstance(query, str):
        raise BadQuery(f"a query is text, not {type(query).__name__}")
    text = " ".join(_SURROGATE.sub(" ", query).split())[:MAX_QUERY_CHARS]
    if not text:
        raise BadQuery("the query is empty: say what to look for")
    return text


def check_k(k: object) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise BadQuery(f"k must be a whole number of at least 1, not {k!r}")
    return min(k, MAX_K)


def match_expression(query: str) -> str | None:
    """FTS5: any of the query's words or CJK bigrams (BM25 ranks by how many and how rare)."""
    found = terms(query)[:MAX_TERMS]
    return " OR ".join(f'"{t}"' for t in found) if found else None


def vector_ranking(ids: np.ndarray, matrix: np.ndarray, query_vector: np.ndarray) -> list[int]:
    """Chunk ids by cosine with the query (unit vectors: the dot product), best first."""
    if len(ids) == 0:
        return []
    scores = matrix @ query_vector.astype(np.float32)
    depth = min(DEPTH, len(ids))
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [int(ids[i]) for i in top]


def vector_weight(query: str) -> float:
    """The weight of the vector ranking for ``query``: :data:`VECTOR_WEIGHT` times the share of
    its letters (and digits) that are not CJK: full for English, 0 for Chinese."""
    letters = [c for c in query if c.isalnum()]
    if not letters:
        return VECTOR_WEIGHT
    return VECTOR_WEIGHT * (1.0 - sum(1 for c in letters if _CJK.match(c)) / len(letters))


def fuse(rankings: list[list[int]], weights: list[float] | None = None) -> list[tuple[int, float]]:
    """(chunk id, fused score), best first: weighted reciprocal-rank fusion."""
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (RRF_K + rank)
    return sorted((item for item in scores.items() if item[1] > 0), key=lambda i: (-i[1], i[0]))
