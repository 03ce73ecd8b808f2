"""The memory stream on a real SQLite file with the real MiniLM embedder: Fay's tag rules,
retrieval semantics, per-user isolation, all-or-nothing writes, reload after restart."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fayd.memory import BadInput, Memory, MemoryConfig, NewNode, normalize_tags, reflection_tags
from fayd.memory.index import UserIndex
from fayd.memory.retrieve import minmax, rank
from fayd.store import Store

pytestmark = pytest.mark.models
DAY = 86400.0


@pytest.fixture
def memory(tmp_path: Path, embedder):
    store = Store(tmp_path / "fayd.db")
    yield Memory(store, embedder)
    store.close()


def test_fay_tag_normalisation() -> None:
    assert normalize_tags("rule", "user", True, ["domain:quant", "domain:quant"]) == [
        "domain:quant",
        "kind:rule",
        "persistent:true",
        "source:user",
    ]
    assert normalize_tags("Hobby") == ["kind:observation", "kind:unknown:hobby"]
    with pytest.raises(BadInput):
        normalize_tags("fact", extra_tags=["ok", ""])
    # Fay's 事例 G: sources B and E → the reflection's tags.
    b = [
        "domain:quant",
        "kind:event",
        "session:2026-04-27-am",
        "source:claude_code",
        "strategy:breakout",
        "symbol:AAPL",
    ]
    e = [
        "domain:quant",
        "kind:error",
        "session:2026-04-27-pm",
        "source:claude_code",
        "strategy:breakout",
        "symbol:AAPL",
    ]
    assert reflection_tags([b, e]) == [
        "domain:quant",
        "kind:insight",
        "source:fay_reflection",
        "strategy:breakout",
        "symbol:AAPL",
    ]


def test_minmax_constant_column_is_half() -> None:
    assert minmax(np.array([2.0, 2.0])).tolist() == [0.5, 0.5]
    assert minmax(np.array([1.0, 3.0, 2.0])).tolist() == [0.0, 1.0, 0.5]


def test_recency_decays_over_time_with_a_floor() -> None:
    index = UserIndex(2)
    from fayd.memory.index import Row

    now = 100 * DAY
    index.extend(
        [
            Row(1, "observation", 5, now - 60, 0, [], np.array([1, 0], np.float32)),
            Row(2, "observation", 5, now - 3 * DAY, 1, [], np.array([1, 0], np.float32)),
            Row(3, "observation", 5, now - 90 * DAY, 2, [], np.array([1, 0], np.float32)),
        ]
    )
    query = np.array([1, 0], np.float32)
    pos, _ = rank(index, query, 3, (1.0, 0.0, 0.0), now, 3 * DAY, 0.1)
    assert index.ids[pos].tolist() == [1, 2, 3]
    from fayd.memory.retrieve import recency

    r = recency(index.last_retrieved[:3], now, 3 * DAY, 0.1)
    assert r[1] == pytest.approx(0.5) and r[2] == pytest.approx(0.1)


def test_write_search_filters_and_isolation(memory: Memory) -> None:
    tea = memory.remember("Ann drinks green tea every morning", "ann", "preference", "user", True)
    rule = memory.remember(
        "Never call Ann after 10 pm",
        "ann",
        "rule",
        "user",
        True,
        ["domain:companion"],
        importance=9,
    )
    memory.remember("Ann's grandson Leo plays football", "ann", "fact", "user")
    memory.remember("Bob drinks black coffee", "bob", "preference")
    assert tea["tags"] == ["kind:preference", "persistent:true", "source:user"]
    assert [h["node_id"] for h in memory.search("hot drinks", "ann", n=1)] == [tea["node_id"]]
    assert all(h["content"] != "Bob drinks black coffee" for h in memory.search("coffee", "ann"))
    assert [
        h["node_id"]
        for h in memory.search("x", "ann", filter_tags_all=["kind:rule", "domain:companion"])
    ] == [rule["node_id"]]
    anyof = memory.search("x", "ann", filter_tags_any=["kind:rule", "kind:fact"])
    assert len(anyof) == 2 and tea["node_id"] not in {h["node_id"] for h in anyof}
    assert memory.search("x", "ann", node_type="reflection") == []
    assert [r["node_id"] for r in memory.get_active_rules("ann")] == [rule["node_id"]]
    assert memory.get_recent("ann", n=1)[0]["content"].startswith("Ann's grandson")
    assert memory.remember("no source given", "ann")["tags"] == [
        "kind:observation",
        "source:fay_self",
    ]


def test_stateful_search_updates_last_retrieved(memory: Memory, tmp_path: Path) -> None:
    old = NewNode("Ann was born in Lisbon", "ann", datetime="2020/01/01 08:00:00", importance=5)
    memory.add([old, NewNode("Ann likes roses", "ann", importance=5)])
    db = sqlite3.connect(tmp_path / "fayd.db")
    before = db.execute(
        "SELECT last_retrieved_at, retrieved_step FROM memory_nodes WHERE content LIKE '%Lisbon'"
    ).fetchone()
    memory.search("birthplace", "ann", n=1, stateless=True)
    assert (
        db.execute(
            "SELECT last_retrieved_at FROM memory_nodes WHERE content LIKE '%Lisbon'"
        ).fetchone()[0]
        == before[0]
    )
    memory.search("birthplace", "ann", n=1, stateless=False, now=before[0] + 10 * 365 * DAY)
    after = db.execute(
        "SELECT last_retrieved_at, retrieved_step FROM memory_nodes WHERE content LIKE '%Lisbon'"
    ).fetchone()
    assert after[0] > before[0] and after[1] == 1  # Fay: last_retrieved = current step
    db.close()


def test_bad_input_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    memory.remember("kept", "ann")
    for bad in (
        lambda: memory.remember("   ", "ann"),
        lambda: memory.remember("x", "ann", extra_tags=["a\nb"]),
        lambda: NewNode("x", "ann", node_type="dream"),
        lambda: NewNode("x", "ann", datetime="yesterday"),
        lambda: NewNode("x", "ann", importance="high"),  # type: ignore[arg-type]
        lambda: memory.search("", "ann"),
        lambda: memory.search("x", "ann", n=0),
    ):
        with pytest.raises(BadInput):
            bad()
    # A batch whose last node breaks a database constraint: the whole batch is rolled back.
    good = NewNode("first of a batch", "ann", importance=1)
    broken = NewNode("second of a batch", "ann", importance=1)
    broken.node_type = "dream"  # slipped past validation: the CHECK constraint catches it
    with pytest.raises(Exception, match="CHECK"):
        memory.add([good, broken])
    db = sqlite3.connect(tmp_path / "fayd.db")
    assert [r[0] for r in db.execute("SELECT content FROM memory_nodes")] == ["kept"]
    db.close()
    assert [h["content"] for h in memory.search("batch", "ann")] == ["kept"]


def test_reload_from_disk_and_a_model_change(tmp_path: Path, embedder) -> None:
    store = Store(tmp_path / "fayd.db")
    Memory(store, embedder).remember("The cat is called Tom", "ann", importance=2)
    Memory(store, embedder).remember("Ann plants tulips in autumn", "ann", importance=2)
    fresh = Memory(store, embedder)  # a new process: the index is rebuilt from SQLite
    assert fresh.search("pet name", "ann", n=1)[0]["content"] == "The cat is called Tom"

    class OtherModel:  # the same network under another name: its vectors must not be mixed
        name, dim = "another-model", embedder.dim
        embed = staticmethod(embedder.embed)

    other = Memory(store, OtherModel(), cfg=MemoryConfig())
    assert other.stats()["nodes_without_current_embedding"] == 2
    hits = other.search("pet name", "ann", n=2, weights=(0, 1, 0.5))
    # No usable vectors: every relevance is 0.5 (Fay), a constant column → 0.5 after scaling;
    # equal importance too: 1·0.5 + 0.5·0.5 (and no word of the query in either node).
    assert {h["score"] for h in hits} == {0.75}
    store.close()
