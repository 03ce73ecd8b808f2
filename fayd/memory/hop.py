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

from fayd.memory import speakers
from fayd.store import lexical

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
