"""Turn-level recall of memory search over long two-person dialogues (months of sessions).

    .venv/bin/python benchmarks/memory_recall_dialogues.py [--seed 7] [--pairs N]
        [--only-kind KIND …] [--dump DIR]

The set (``benchmarks/data/recall_dialogues.py``, generated from the seed at run time, no
network, no model): six pairs of friends (four English, two Mandarin), 15-19 dated sessions
each over 4-8 months, both sides of the conversation stored, and questions of five kinds
(single, temporal, multihop, inference, update) with the ids of their evidence turns.

Ingestion is what one would do with such a benchmark and fayd's CLI: one fresh memory
(SQLite file) per pair, each turn a ``conversation`` node of the default user, its content
``"Speaker: words"`` and its ``datetime`` the session's, written through the code of
``fayd memory add --jsonl --no-llm`` (the JSONL read by ``read_jsonl`` / ``node_from_line``,
then ``Memory.add``: MiniLM embeddings, FTS5 rows; importance is the scorer-less default,
and the default search weights give importance no part). The questions go through the code
of ``fayd memory search --queries`` (``fayd.cli.memory._search``: the memory's default
weights and fusion, stateless), ``n`` = 25, the embedder loaded once.

recall@k = the share of a question's evidence turns among its top k, averaged over the
questions; overall, per kind, per language and per kind x language. Also: search latency
(p50/p95 ms), and how many of a question's content words its evidence turns contain (the
paraphrase distance the set was written with). Prints one JSON object; ~2 minutes on two
shared cores (``--pairs 2``: ~40 s).

Baseline (main's retrieval, seed 7: 408 questions, 3,851 turns, 104 sessions), R@5/10/25:
all 0.201/0.256/0.326; single (120) 0.133/0.175/0.200; temporal (108) 0.241/0.315/0.463;
multihop (60) 0.292/0.400/0.483; inference (48) 0.052/0.094/0.167; update (72)
0.278/0.292/0.306; English (272) 0.226/0.296/0.393, Mandarin (136) 0.151/0.176/0.191.
What sinks it (``--dump``, then read the hits): the speaker's name is in every one of their
turns and in the question, and the BM25 term, scaled by the best hit's score, lifts the
shortest turns that have the name ("Tom: Ha!", "周强：好的，拜拜！") above the evidence.
``--fusion off`` (vectors alone) and ``--plain`` (turns stored without names) are the
diagnoses of that (the figures in the report of issue 27).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.data.recall_dialogues import KINDS, PAIRS, Dialogues, Question, Turn, build, overlap
from fayd.agent.clock import days

KS = (5, 10, 25)


def ingest(memory: Any, turns: list[Turn], folder: Path, plain: bool = False) -> dict[str, int]:
    """Write one pair's turns through ``fayd memory add --jsonl``'s code; turn id → node id.
    ``plain``: the words without the speaker's name (a diagnosis, not how one would store a
    dialogue: who said it is lost)."""
    from fayd.cli.memory import node_from_line, read_jsonl

    path = folder / "turns.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for t in turns:
            line = {
                "content": t.text if plain else t.content,
                "node_type": "conversation",
                "datetime": t.datetime,
            }
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    nodes = [node_from_line(obj, memory.cfg.default_user) for _, obj in read_jsonl(str(path))]
    added = memory.add(nodes)
    return {t.id: a["node_id"] for t, a in zip(turns, added, strict=True)}


def ask(memory: Any, questions: list[Question], folder: Path) -> tuple[dict, list[float]]:
    """Each question as a line of ``fayd memory search --queries``: question id → node ids."""
    from fayd.cli.memory import _search, read_jsonl

    path = folder / "queries.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({"query": q.query, "id": q.id}, ensure_ascii=False) + "\n")
    hits, seconds = {}, []
    for _, spec in read_jsonl(str(path)):
        spec.setdefault("user", None)  # as cmd_search: the default user
        spec.setdefault("n", max(KS))
        started = time.perf_counter()
        found = _search(memory, spec)
        seconds.append(time.perf_counter() - started)
        hits[spec["id"]] = [h["node_id"] for h in found]
    return hits, seconds


def recall(questions: list[Question], ids: dict[str, int], hits: dict, k: int) -> float | None:
    if not questions:
        return None
    per = [
        len({ids[e] for e in q.evidence} & set(hits[q.id][:k])) / len(q.evidence) for q in questions
    ]
    return round(float(np.mean(per)), 3)


def report(dev: Dialogues, questions: list[Question], ids: dict, hits: dict) -> dict[str, Any]:
    out: dict[str, Any] = {f"recall_at_{k}": recall(questions, ids, hits, k) for k in KS}
    groups: dict[str, list[Question]] = {}
    for q in questions:
        for name in (q.kind, q.lang, f"{q.kind}.{q.lang}"):
            groups.setdefault(name, []).append(q)
    order = [*KINDS, "en", "zh"] + [f"{k}.{lang}" for k in KINDS for lang in ("en", "zh")]
    out["by"] = {
        g: {"n": len(groups[g]), **{f"r@{k}": recall(groups[g], ids, hits, k) for k in KS}}
        for g in order
        if g in groups
    }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--pairs", type=int, help="the first N pairs of the set (quick runs; both languages from 2)"
    )
    p.add_argument("--only-kind", nargs="+", choices=KINDS, help="ask only these kinds")
    p.add_argument(
        "--fusion", choices=["off", "rrf", "score"], help="diagnosis: another lexical fusion"
    )
    p.add_argument(
        "--plain", action="store_true", help="diagnosis: store turns without the speaker's name"
    )
    p.add_argument("--dump", help="keep the databases, turns, questions and hits in this folder")
    args = p.parse_args()

    from fayd.memory import Memory, MemoryConfig
    from fayd.memory.importance import ImportanceScorer
    from fayd.memory.open import load_embedder
    from fayd.store import Store

    started = time.monotonic()
    dev = build(args.seed, args.pairs or PAIRS)
    questions = [q for q in dev.questions if not args.only_kind or q.kind in args.only_kind]
    root = Path(args.dump) if args.dump else Path(tempfile.mkdtemp(prefix="fayd-dialogues-"))
    embedder = load_embedder(threads=2)  # as open_memory, loaded once for every pair
    ids: dict[str, int] = {}
    hits: dict[str, list[int]] = {}
    seconds: list[float] = []
    ingest_s = 0.0
    for pair in dev.sessions:
        folder = root / pair
        folder.mkdir(parents=True, exist_ok=True)
        store = Store(folder / "memory.db")
        cfg = MemoryConfig()
        if args.fusion:
            cfg = replace(cfg, lexical_fusion=args.fusion)
        memory = Memory(store, embedder, ImportanceScorer(None), cfg, days.named)
        t0 = time.monotonic()
        ids |= ingest(memory, [t for t in dev.turns if t.pair == pair], folder, args.plain)
        ingest_s += time.monotonic() - t0
        found, took = ask(memory, [q for q in questions if q.pair == pair], folder)
        hits |= found
        seconds += took
        store.close()
    if args.dump:
        with (root / "questions.jsonl").open("w", encoding="utf-8") as f:
            for q in questions:
                line = {**q.__dict__, "hits": hits[q.id][:10]}
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    text = {t.id: t.content for t in dev.turns}
    out = {
        "seed": args.seed,
        "pairs": len(dev.sessions),
        "sessions": sum(len(d) for d in dev.sessions.values()),
        "turns": len(dev.turns),
        "questions": len(questions),
        **report(dev, questions, ids, hits),
        "paraphrase_overlap": {
            k: round(float(np.mean([overlap(q, text) for q in questions if q.kind == k])), 3)
            for k in KINDS
            if any(q.kind == k for q in questions)
        },
        "search_ms": {
            "p50": round(1000 * float(np.percentile(seconds, 50)), 1),
            "p95": round(1000 * float(np.percentile(seconds, 95)), 1),
        },
        "ingest_s": round(ingest_s, 1),
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
