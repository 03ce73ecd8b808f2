"""Memory settings (a frozen dataclass like the other subsystems' in fayd.config)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryConfig:
    #: Username of nodes written without one (Fay writes its default user as 主人/User).
    default_user: str = "User"
    # Defaults chosen on benchmarks/memory_recall.py (docs/memory.md has the figures).
    #: Recency decays over time since the node was last retrieved: 0.5 every half-life...
    recency_half_life_h: float = 168.0
    #: ...but never below this, so an old memory can still win on relevance.
    recency_floor: float = 0.1
    #: Default weights (recency, relevance, importance) of searches. Fay's memory service has
    #: (0, 1, 0.5); importance is 0 here: the shipped scorer rates chit-chat above facts.
    weights: tuple[float, float, float] = (0.0, 1.0, 0.0)
    #: Weights of the chat path (Fay: [0.8, 0.5, 0.5] with step decay, which buried the
    #: evidence): a little recency, for continuity, costs no recall.
    chat_weights: tuple[float, float, float] = (0.2, 1.0, 0.0)
    #: Lexical fusion with FTS5's BM25 (fayd.store.lexical): "score" (weight x BM25/max
    #: added to the score), "rrf" (reciprocal-rank fusion of the score ranking and the BM25
    #: ranking) or "off" (Fay's score alone).
    lexical_fusion: str = "score"
    #: Weight of the BM25 term ("score") or of the BM25 ranking ("rrf"; the score ranking
    #: has weight 1).
    lexical_weight: float = 1.0
    #: RRF's k: a node at rank r (1-based) of a ranking adds weight / (k + r).
    rrf_k: int = 60
    #: BM25 hits fetched per search, and how deep the score ranking goes into RRF.
    lexical_depth: int = 100
    #: Neighbours (fayd.memory.neighbours): a search ranks this many candidates, then
    #: re-ranks them with their session neighbours, each lending ``neighbour_weight`` of its
    #: score to rows up to ``neighbour_radius`` away. 0: off, as measured (docs/memory.md).
    neighbour_pool: int = 100
    neighbour_weight: float = 0.0
    neighbour_radius: int = 1
    #: A question naming a day ("what did she do last Saturday?", 5月6日): rows said on that
    #: day or naming it (``when:`` tags) get this share of the score's total added.
    date_boost: float = 0.2
    #: Leave repeats out of a search's results (same vector as a better hit): five copies
    #: of "Classic." said in five sessions took half the top ten (fayd.memory.retrieve).
    distinct: bool = True
    #: A question naming a speaker ("Would Callum like...") lifts that speaker's turns
    #: (``speaker:`` tags, fayd.memory.speakers) by this share of the score's total.
    speaker_boost: float = 0.5
    #: A second, lexical hop from the names in the first hits (fayd.memory.hop): its BM25
    #: hits get up to this share of the score's total (0: off; docs/memory.md).
    hop_weight: float = 0.1
