"""The recall benchmark's development set (benchmarks/data/recall_world.py) and its runner
(benchmarks/memory_recall.py) on a real SQLite file with the real MiniLM embedder."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from benchmarks import memory_recall as bench
from benchmarks.data.recall_world import DevSet, build
from fayd.memory import Memory, MemoryConfig
from fayd.store import Store

FAY = "%Y/%m/%d %H:%M:%S"


def test_the_set_is_big_enough_dated_and_deterministic() -> None:
    dev = build(4)
    assert len(dev.turns) >= 1000
    sessions = {(t.user, t.session) for t in dev.turns}
    assert len(sessions) >= 20
    days = sorted({datetime.strptime(t.datetime, FAY).date() for t in dev.turns})
    assert days[-1] - days[0] >= timedelta(weeks=6)
    assert len(dev.questions) >= 150
    assert Counter(q.category for q in dev.questions).keys() == {"single", "multi", "temporal"}
    assert min(Counter(q.category for q in dev.questions).values()) >= 30
    by_id = {t.id: t for t in dev.turns}
    assert len(by_id) == len(dev.turns)
    for q in dev.questions:
        assert q.evidence and all(by_id[e].fact and by_id[e].user == q.user for e in q.evidence)
        assert len(q.evidence) == (2 if q.category == "multi" else 1)
    # Chit-chat outnumbers facts several times; every session's turns go forward in time.
    assert sum(1 for t in dev.turns if t.fact) * 5 < len(dev.turns)
    for user in {t.user for t in dev.turns}:
        times = [t.datetime for t in dev.turns if t.user == user]
        assert times == sorted(times)
    assert dev.now > datetime.strptime(max(t.datetime for t in dev.turns), FAY)
    again = build(4)
    assert [t.content for t in again.turns] == [t.content for t in dev.turns]
    assert [t.content for t in build(5).turns] != [t.content for t in dev.turns]


def _mandarin(dev: DevSet) -> DevSet:
    return DevSet(
        [t for t in dev.turns if t.user == "lin"],
        [q for q in dev.questions if q.user == "lin"],
        dev.now,
    )


@pytest.mark.models
def test_the_runner_measures_fusion_and_step_decay(tmp_path: Path, embedder) -> None:
    """Lin's sessions (Mandarin): the English MiniLM reads them badly, BM25 on bigrams well;
    Fay's step decay buries old evidence."""
    dev = _mandarin(build(4))
    store = Store(tmp_path / "recall.db")
    try:
        ids = bench.ingest(
            Memory(store, embedder), dev, tmp_path, bench.synthetic_importance(dev, 4)
        )
        assert len(ids) == len(dev.turns)
        steps = dict(
            store.call(lambda db: db.execute("SELECT id, step FROM memory_nodes").fetchall())
        )
        now = dev.now.timestamp()

        def run(name: str) -> dict:
            spec = bench.VARIANTS[name]
            cfg = replace(MemoryConfig(), lexical_fusion=spec[3], lexical_weight=spec[4] or 1.0)
            return bench.evaluate(Memory(store, embedder, cfg=cfg), dev, ids, now, spec, steps)

        chosen, plain, fay = (
            run(bench.CHOSEN_SEARCH),
            run("relevance_only"),
            run("fay_chat_step_0.8_0.5_0.5"),
        )
        for k in (5, 10, 25):
            assert 0.0 <= max(fay[f"recall_at_{k}"], plain[f"recall_at_{k}"]) <= 1.0
            assert chosen[f"recall_at_{k}"] >= max(fay[f"recall_at_{k}"], plain[f"recall_at_{k}"])
        assert chosen["recall_at_10"] >= plain["recall_at_10"] + 0.3
        assert chosen["recall_at_10"] >= fay["recall_at_10"] + 0.3
        assert chosen["recall_at_10_by"]["en"] is None  # no English question in this part
    finally:
        store.close()
