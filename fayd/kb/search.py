"""Ranking: the query cleaned, both rankings of chunks, and their fusion.

Two rankings, because each misses what the other finds: MiniLM's cosine finds a paraphrase
("how do I get rid of the white crust" → the descaling paragraph) but ranks rare exact words
(a model number, a name, a dose) poorly and reads Chinese badly (it is an English model);
FTS5's BM25 finds exact words and, through bigrams, Chinese. Reciprocal-rank fusion
(Cormack et al., 2009) adds ``1 / (RRF_K + rank)`` over the rankings a chunk appears in: it
needs no calibration between a cosine and a BM25 score. ``benchmarks/kb.py`` compares it with
either ranking alone.
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
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def fuse(*rankings: list[int]) -> list[tuple[int, float]]:
    """(chunk id, fused score), best first: reciprocal-rank fusion of the rankings."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
