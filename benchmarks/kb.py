"""Knowledge-base search on household documents: is the answer among the passages found?

    .venv/bin/python benchmarks/kb.py [--repeat 5] [--dump FILE]

The documents (``benchmarks/data/kb/docs``, written for this benchmark and dedicated to the
public domain): an appliance manual (Markdown), a care-home leaflet (HTML), household notes,
recipes and retold Aesop fables (English); a community elder-services guide, a blood-pressure
monitor manual (Markdown) and four idiom stories (Chinese). ``questions.jsonl``: 149
questions (107 English, 42 Chinese), each worded away from the text (“what do I mix in the
kettle to get the scale out?” for “equal parts water and white vinegar”), with the source
that answers it and a phrase the answer must contain.

The documents are added with :meth:`fayd.kb.KnowledgeBase.add_folder` (the real MiniLM
embedder, a temporary SQLite file) and every question is searched with ``search(q, 5)``.

- ``recall_at_5``: the answering source is among the top 5 passages' sources;
- ``answer_contains_rate``: one of the top 5 passages contains the expected phrase
  (whitespace and case ignored); ``answer_at_1``: the first one does;
- ``search_ms_p50/p95``: the shipped ``search`` call, query embedding included, each
  question ``--repeat`` times;
- ``variants``: the same questions ranked by the vectors alone, the words (FTS5 BM25 over
  bigram-indexed text) alone, and reciprocal-rank fusions of both: at equal weights, with
  the vectors' weight cut for Chinese queries (MiniLM is an English model), and with the
  vectors weighted 1, 2 (shipped) or 3 times the words for English.

The set is small (8 documents, ~55 chunks): every source is nearly always in the top 5, and
``answer_contains_rate`` is the figure that tells rankings apart.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fayd.kb import KnowledgeBase
from fayd.kb import search as ranking
from fayd.memory.open import load_embedder

DATA = Path(__file__).parent / "data" / "kb"
K = 5


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def load_questions() -> list[dict[str, str]]:
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def variant_rankings(kb: KnowledgeBase, question: str) -> dict[str, list[int]]:
    """Chunk ids, best first, by each ranking the benchmark compares."""
    text = ranking.clean_query(question)
    ids, matrix = kb._vectors()
    by_vector = ranking.vector_ranking(ids, matrix, kb.embedder.embed([text])[0])
    match = ranking.match_expression(text)
    by_words = kb.store.lexical(match, ranking.DEPTH) if match else []
    weight = ranking.vector_weight(text)

    def fused(wv: float, ww: float = 1.0) -> list[int]:
        return [i for i, _ in ranking.fuse([by_vector, by_words], [wv, ww])]

    return {
        "rrf_cjk_aware_vectors_x2 (shipped)": fused(weight),
        "rrf_cjk_aware_equal": fused(weight / ranking.VECTOR_WEIGHT),
        "rrf_equal": fused(1.0),
        "rrf_cjk_aware_vectors_x3": fused(1.5 * weight),
        "vector_only": by_vector,
        "words_only": by_words,
    }


def score(rows: list[tuple[str, str]], want: dict[str, str]) -> dict[str, bool]:
    """rows: (source, text) of the top K, best first."""
    expect = squash(want["expect"])
    return {
        "recall": any(source == want["source"] for source, _ in rows),
        "contains": any(expect in squash(text) for _, text in rows),
        "at_1": bool(rows) and expect in squash(rows[0][1]),
    }


def summary(marks: list[dict[str, bool]]) -> dict[str, Any]:
    n = len(marks) or 1
    return {
        "questions": len(marks),
        "recall_at_5": round(sum(m["recall"] for m in marks) / n, 3),
        "answer_contains_rate": round(sum(m["contains"] for m in marks) / n, 3),
        "answer_at_1": round(sum(m["at_1"] for m in marks) / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed searches per question")
    parser.add_argument("--dump", help="write each question's top passages here (JSON lines)")
    args = parser.parse_args()
    questions = load_questions()
    embedder = load_embedder()
    with (
        tempfile.TemporaryDirectory() as tmp,
        KnowledgeBase(Path(tmp) / "kb.sqlite", embedder) as kb,
    ):
        started = time.monotonic()
        report = kb.add_folder(DATA / "docs")
        add_s = time.monotonic() - started
        if report.refused:
            raise SystemExit(f"refused: {report.refused}")
        shipped: list[dict[str, bool]] = []
        by_variant: dict[str, list[dict[str, bool]]] = {}
        langs: dict[str, list[dict[str, bool]]] = {}
        timings: list[float] = []
        dump = []
        for want in questions:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                hits = kb.search(want["question"], K)
                timings.append((time.perf_counter() - t0) * 1000)
            marks = score([(h.source, h.text) for h in hits], want)
            shipped.append(marks)
            langs.setdefault(want["lang"], []).append(marks)
            for name, ids in variant_rankings(kb, want["question"]).items():
                rows = kb.store.chunks(ids[:K])
                top = [(rows[i][0], rows[i][3]) for i in ids[:K] if i in rows]
                by_variant.setdefault(name, []).append(score(top, want))
            dump.append({**want, **marks, "top": [[h.source, h.chunk, h.text] for h in hits]})
        chunks = sum(s.chunks for s in kb.sources())
        sources = len(kb.sources())
    if args.dump:
        Path(args.dump).write_text(
            "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dump), encoding="utf-8"
        )
    out = {
        **summary(shipped),
        "search_ms_p50": round(float(np.percentile(timings, 50)), 2),
        "search_ms_p95": round(float(np.percentile(timings, 95)), 2),
        "per_language": {lang: summary(m) for lang, m in sorted(langs.items())},
        "variants": {
            name: {
                **summary(m),
                "per_language": {
                    lang: summary(
                        [mk for mk, q in zip(m, questions, strict=True) if q["lang"] == lang]
                    )
                    for lang in sorted(langs)
                },
            }
            for name, m in by_variant.items()
        },
        "sources": sources,
        "chunks": chunks,
        "corpus_chars": sum(len(p.read_text(encoding="utf-8")) for p in (DATA / "docs").iterdir()),
        "add_folder_s": round(add_s, 2),
        "embedder": embedder.name,
    }
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
