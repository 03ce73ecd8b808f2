"""Evidence recall of memory search on a development set of companion conversations.

    .venv/bin/python benchmarks/memory_recall.py [--seed 4] [--dump DIR] [--only NAME …]

The set (``benchmarks/data/recall_world.py``, generated from the seed at run time): 1,286
turns (seed 4) over 32 dated sessions of two household members (Margaret in English, 24 sessions;
林阿姨 in Mandarin, 8 sessions), and 185 questions (single-hop, multi-hop, temporal) with
the ids of their evidence turns. Each turn is one ``conversation`` node with its real
``datetime``, written through the code of ``fayd memory add --jsonl`` (a JSONL file read by
its ``read_jsonl`` / ``node_from_line``, then ``Memory.add``: MiniLM embeddings, the FTS5
rows); the questions are searched like ``fayd memory search --queries`` (models loaded once,
stateless) with ``now`` an hour after the last session, the user's own memory only.

recall@k = the share of a question's evidence turns among its top k, averaged over
questions. Every variant runs over the same nodes: weights (recency, relevance,
importance), time-decay half-life and floor, lexical fusion (RRF or a BM25 score term; the
shipped bigram-unicode61 FTS5 table, or a trigram table built here for comparison), and
Fay's own step decay (``0.99 ** steps``, re-implemented over the same index).

Importance: the shipped scorer (SmolLM2-135M) takes seconds per turn here and does not tell
facts from chit-chat, so turns carry a *synthetic* importance (facts ~6.5, chit-chat ~3.5,
sd 2, 1-10): variants with an importance weight show what a scorer that roughly separates
them would add; with ``w_imp = 0`` importance plays no part (as with ``--no-llm``, where
every node gets the same value). Prints one JSON object: the chosen defaults' recall, and
``variants``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.data.recall_world import DevSet, build
from fayd.agent.clock import days

KS = (5, 10, 25)
H = 3600.0

# name → (weights, half-life h, floor, fusion, fusion weight, options)
VARIANTS: dict[str, tuple[tuple[float, float, float], float, float, str, float, str]] = {
    # Fay's own recency: 0.99 ** (write steps since retrieval)
    "fay_chat_step_0.8_0.5_0.5": ((0.8, 0.5, 0.5), 0, 0, "off", 0, "step"),
    "fay_chat_step_0.8_0.5_0": ((0.8, 0.5, 0.0), 0, 0, "off", 0, "step"),
    "fay_search_0_1_0.5": ((0.0, 1.0, 0.5), 72, 0.1, "off", 0, ""),
    # relevance alone, then time decay
    "relevance_only": ((0.0, 1.0, 0.0), 72, 0.1, "off", 0, ""),
    "time_0.8_0.5_0_hl72": ((0.8, 0.5, 0.0), 72, 0.1, "off", 0, ""),
    "time_0.5_1_0_hl24": ((0.5, 1.0, 0.0), 24, 0.1, "off", 0, ""),
    "time_0.5_1_0_hl72": ((0.5, 1.0, 0.0), 72, 0.1, "off", 0, ""),
    "time_0.5_1_0_hl168": ((0.5, 1.0, 0.0), 168, 0.1, "off", 0, ""),
    "time_0.5_1_0_hl720": ((0.5, 1.0, 0.0), 720, 0.1, "off", 0, ""),
    "time_0.5_1_0_hl72_floor0.3": ((0.5, 1.0, 0.0), 72, 0.3, "off", 0, ""),
    "time_0.2_1_0_hl168": ((0.2, 1.0, 0.0), 168, 0.1, "off", 0, ""),
    "time_0.1_1_0_hl168": ((0.1, 1.0, 0.0), 168, 0.1, "off", 0, ""),
    # lexical fusion
    "rrf_w0.5_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 0.5, ""),
    "rrf_w1_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 1.0, ""),
    "rrf_w2_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 2.0, ""),
    "rrf_w3_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 3.0, ""),
    "rrf_w2_0_1_0_trigram": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 2.0, "trigram"),
    "rrf_w1_0_1_0_trigram": ((0.0, 1.0, 0.0), 72, 0.1, "rrf", 1.0, "trigram"),
    "bm25score_w0.5_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "score", 0.5, ""),
    "bm25score_w1_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "score", 1.0, ""),
    "bm25score_w1.5_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "score", 1.5, ""),
    "bm25score_w2_0_1_0": ((0.0, 1.0, 0.0), 72, 0.1, "score", 2.0, ""),
    "bm25score_w1_0_1_0_trigram": ((0.0, 1.0, 0.0), 72, 0.1, "score", 1.0, "trigram"),
    "bm25score_w1_0.1_1_0_hl168": ((0.1, 1.0, 0.0), 168, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.2_1_0_hl168": ((0.2, 1.0, 0.0), 168, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.2_1_0_hl336": ((0.2, 1.0, 0.0), 336, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.3_1_0_hl168": ((0.3, 1.0, 0.0), 168, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.5_1_0_hl72": ((0.5, 1.0, 0.0), 72, 0.1, "score", 1.0, ""),
    "bm25score_w1_0_1_0.5_synth_imp": ((0.0, 1.0, 0.5), 72, 0.1, "score", 1.0, ""),
    "bm25score_w1_0_1_0.5_noise_imp": ((0.0, 1.0, 0.5), 72, 0.1, "score", 1.0, "noise_imp"),
    "bm25score_w1_0.2_1_0.5_hl168_synth_imp": ((0.2, 1.0, 0.5), 168, 0.1, "score", 1.0, ""),
    "bm25score_w1_0_1_0.5_anti_imp": ((0.0, 1.0, 0.5), 72, 0.1, "score", 1.0, "anti_imp"),
    "bm25score_w1_0.2_1_0.5_hl72_synth_imp": ((0.2, 1.0, 0.5), 72, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.2_1_0.5_hl336_synth_imp": ((0.2, 1.0, 0.5), 336, 0.1, "score", 1.0, ""),
    "bm25score_w1_0.2_1_0.5_hl168_anti_imp": ((0.2, 1.0, 0.5), 168, 0.1, "score", 1.0, "anti_imp"),
    "fay_search_0_1_0.5_noise_imp": ((0.0, 1.0, 0.5), 72, 0.1, "off", 0, "noise_imp"),
    "fay_search_0_1_0.5_anti_imp": ((0.0, 1.0, 0.5), 72, 0.1, "off", 0, "anti_imp"),
    "bm25_only": ((0.0, 0.0, 0.0), 72, 0.1, "rrf", 1.0, "lexical_only"),
    "rrf_w1_0.1_1_0_hl168": ((0.1, 1.0, 0.0), 168, 0.1, "rrf", 1.0, ""),
    "rrf_w1_0.2_1_0_hl168": ((0.2, 1.0, 0.0), 168, 0.1, "rrf", 1.0, ""),
    "rrf_w1_0.5_1_0_hl72": ((0.5, 1.0, 0.0), 72, 0.1, "rrf", 1.0, ""),
    "rrf_w1_0.5_1_0_hl168": ((0.5, 1.0, 0.0), 168, 0.1, "rrf", 1.0, ""),
    # synthetic importance (see the module docstring)
    "rrf_w1_0_1_0.5_synth_imp": ((0.0, 1.0, 0.5), 72, 0.1, "rrf", 1.0, ""),
    "rrf_w1_0_1_0.2_synth_imp": ((0.0, 1.0, 0.2), 72, 0.1, "rrf", 1.0, ""),
    "time_0.5_1_0.5_hl72_synth_imp": ((0.5, 1.0, 0.5), 72, 0.1, "off", 0, ""),
    "rrf_w1_0.2_1_0.2_hl168_synth_imp": ((0.2, 1.0, 0.2), 168, 0.1, "rrf", 1.0, ""),
}
#: The defaults in fayd.memory.MemoryConfig, by the figures this prints (docs/memory.md).
CHOSEN_SEARCH = "bm25score_w1_0_1_0"
CHOSEN_CHAT = "bm25score_w1_0.2_1_0_hl168"


def synthetic_importance(dev: DevSet, seed: int) -> dict[str, float]:
    rng = random.Random(seed * 7919)
    out = {}
    for t in dev.turns:
        mean = 6.5 if t.fact else 3.5
        out[t.id] = float(min(10, max(1, round(rng.gauss(mean, 2.0)))))
    return out


def ingest(memory: Any, dev: DevSet, folder: Path, importance: dict[str, float]) -> dict[str, int]:
    """Write every turn through ``fayd memory add --jsonl``'s code; turn id → node id."""
    from fayd.cli.memory import node_from_line, read_jsonl

    path = folder / "turns.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for t in dev.turns:
            line = {
                "content": t.content,
                "node_type": "conversation",
                "datetime": t.datetime,
                "username": t.user,
                "tags": [f"session:{t.user}-{t.session:02d}"],
                "importance": importance[t.id],
            }
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    nodes = [node_from_line(obj, "User") for _, obj in read_jsonl(str(path))]
    added = memory.add(nodes)
    return {t.id: a["node_id"] for t, a in zip(dev.turns, added, strict=True)}


class QueryCache:
    """The embedder, remembering query vectors (every variant asks the same questions)."""

    def __init__(self, embedder: Any) -> None:
        self.inner = embedder
        self.name, self.dim = embedder.name, embedder.dim
        self.memo: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) != 1:
            return self.inner.embed(texts)
        if texts[0] not in self.memo:
            self.memo[texts[0]] = self.inner.embed(texts)
        return self.memo[texts[0]]


# --- FTS5 trigram, for comparison with the shipped bigram/unicode61 table ----------------
def build_trigram(db: Any) -> None:
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS bench_fts_tri USING fts5(text, username UNINDEXED,"
        " tokenize = 'trigram')"
    )
    db.execute(
        "INSERT INTO bench_fts_tri (rowid, text, username) SELECT id, content, username"
        " FROM memory_nodes"
    )


def trigram_search(db: Any, query: str, username: str, limit: int) -> list[tuple[int, float]]:
    """The same terms, as a trigram table can take them: words of 3+ letters, and every
    3-character window of a CJK run (a 2-character word alone cannot be matched)."""
    from fayd.store import lexical

    parts: list[str] = []
    for word in lexical._WORD.findall(query.lower()):
        if lexical._RUN.fullmatch(word):
            parts += [word[i : i + 3] for i in range(len(word) - 2)]
        elif word not in lexical.STOPWORDS and len(word) >= 3:
            parts.append(word)
    parts = list(dict.fromkeys(parts))
    if not parts:
        return []
    rows = db.execute(
        "SELECT rowid, bm25(bench_fts_tri) FROM bench_fts_tri WHERE bench_fts_tri MATCH ?"
        " AND username = ? ORDER BY rank LIMIT ?",
        [" OR ".join(f'"{p}"' for p in parts), username, limit],
    ).fetchall()
    return [(int(i), -float(s)) for i, s in rows]


# --- Fay's step decay over the same index -------------------------------------------------
def fay_step_rank(memory: Any, steps: dict[int, int], user: str, qvec, n: int, weights) -> list:
    from fayd.memory.retrieve import minmax

    index = memory._index(user)
    count = index.n
    step = np.array([steps[int(i)] for i in index.ids[:count]], np.float64)
    rec = 0.99 ** (step.max() - step)  # stateless: last_retrieved = created
    rel = np.where(index.has_vec[:count], index.vecs[:count] @ qvec, 0.5)
    w_rec, w_rel, w_imp = weights
    score = w_rec * minmax(rec) + w_rel * minmax(rel) + w_imp * minmax(index.importance[:count])
    return [int(index.ids[i]) for i in np.argsort(-score, kind="stable")[:n]]


def evaluate(memory: Any, dev: DevSet, ids: dict[str, int], now: float, spec, steps) -> dict:
    weights, options = spec[0], spec[5]
    hits: dict[str, list[int]] = {}
    for q in dev.questions:
        if options == "step":
            qvec = memory.embedder.embed([q.query])[0]
            hits[q.id] = fay_step_rank(memory, steps, q.user, qvec, max(KS), weights)
        elif options == "lexical_only":
            found = memory.store.call(memory.lexical_search, q.query, q.user, max(KS))
            hits[q.id] = [i for i, _ in found]
        else:
            found = memory.search(q.query, q.user, n=max(KS), weights=weights, now=now)
            hits[q.id] = [h["node_id"] for h in found]
    return score(dev, ids, hits)


def score(dev: DevSet, ids: dict[str, int], hits: dict[str, list[int]]) -> dict[str, Any]:
    def recall(questions, k):
        if not questions:
            return None
        per = [
            len({ids[e] for e in q.evidence} & set(hits[q.id][:k])) / len(q.evidence)
            for q in questions
        ]
        return round(float(np.mean(per)), 3)

    out: dict[str, Any] = {f"recall_at_{k}": recall(dev.questions, k) for k in KS}
    groups = {
        "single": [q for q in dev.questions if q.category == "single"],
        "multi": [q for q in dev.questions if q.category == "multi"],
        "temporal": [q for q in dev.questions if q.category == "temporal"],
        "en": [q for q in dev.questions if q.lang == "en"],
        "zh": [q for q in dev.questions if q.lang == "zh"],
    }
    out["recall_at_10_by"] = {g: recall(qs, 10) for g, qs in groups.items()}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=4)
    p.add_argument("--dump", help="also write turns.jsonl and questions.jsonl to this folder")
    p.add_argument("--only", nargs="+", help="run only these variants")
    args = p.parse_args()

    from fayd.memory import Memory, MemoryConfig
    from fayd.memory.open import load_embedder
    from fayd.store import Store

    started = time.monotonic()
    dev = build(args.seed)
    folder = Path(args.dump) if args.dump else Path(tempfile.mkdtemp(prefix="fayd-recall-"))
    folder.mkdir(parents=True, exist_ok=True)
    embedder = QueryCache(load_embedder(threads=2))
    store = Store(folder / "recall.db")
    ids = ingest(
        Memory(store, embedder, days_named=days.named),
        dev,
        folder,
        synthetic_importance(dev, args.seed),
    )
    if args.dump:
        with (folder / "questions.jsonl").open("w", encoding="utf-8") as f:
            for q in dev.questions:
                f.write(json.dumps(q.__dict__, ensure_ascii=False) + "\n")
    store.call(build_trigram)
    steps = dict(store.call(lambda db: db.execute("SELECT id, step FROM memory_nodes").fetchall()))
    now = dev.now.timestamp()

    variants = {}
    for name, spec in VARIANTS.items():
        if args.only and name not in args.only:
            continue
        weights, half_life, floor, fusion, fweight, options = spec
        cfg = replace(
            MemoryConfig(),
            recency_half_life_h=half_life or 72.0,
            recency_floor=floor or 0.1,
            lexical_fusion=fusion,
            lexical_weight=fweight or 1.0,
        )
        memory = Memory(store, embedder, cfg=cfg, days_named=days.named)
        if options == "trigram":
            memory.lexical_search = trigram_search
        if options == "noise_imp":  # a scorer that says nothing: uniform 1-10
            rng = np.random.default_rng(args.seed)
            for user in sorted({q.user for q in dev.questions}):
                index = memory._index(user)
                index.importance[: index.n] = rng.integers(1, 11, index.n)
        if options == "anti_imp":  # like the shipped 135M scorer: chit-chat high, facts low
            for user in sorted({q.user for q in dev.questions}):
                index = memory._index(user)
                index.importance[: index.n] = 11 - index.importance[: index.n]
        result = evaluate(memory, dev, ids, now, spec, steps)
        variants[name] = {
            "weights": list(weights),
            "recency": "steps 0.99^n"
            if options == "step"
            else f"half-life {half_life} h, floor {floor}",
            "fusion": "off" if fusion == "off" else f"{fusion} w={fweight} {options}".strip(),
            **result,
        }
    store.close()
    chosen = variants.get(CHOSEN_SEARCH) or next(iter(variants.values()))
    out = {
        "questions": len(dev.questions),
        "turns": len(dev.turns),
        "sessions": len({(t.user, t.session) for t in dev.turns}),
        "now": datetime.fromtimestamp(now).isoformat(),
        "chosen_search": CHOSEN_SEARCH,
        "recall_at_5": chosen["recall_at_5"],
        "recall_at_10": chosen["recall_at_10"],
        "recall_at_25": chosen["recall_at_25"],
        "chosen_chat": CHOSEN_CHAT,
        "chat": {k: v for k, v in variants.get(CHOSEN_CHAT, {}).items() if k.startswith("recall")},
        "variants": variants,
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
