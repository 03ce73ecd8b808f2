"""Lexical (FTS5) fusion on a real SQLite file with the real MiniLM embedder: the table kept
in step with writes and backfilled by its migration, Chinese bigrams, per-user isolation,
filters, and rare exact words that the embedding ranks poorly found with fusion."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import sqlite_utils

from fayd.memory import Memory, MemoryConfig, NewNode
from fayd.store import Store, lexical
from fayd.store.migrations import MIGRATIONS, apply_migrations

pytestmark = pytest.mark.models

OFF = replace(MemoryConfig(), lexical_fusion="off")
PILL_TALK = [
    "How many tablets should I take with breakfast?",
    "What dose of medicine did the doctor give me?",
    "I take two pills every morning with food.",
    "The pharmacist explained the dose of my tablets.",
    "Did I take my evening medicine already?",
    "The doctor wants me to take my pills on time.",
    "The dog's medicine dose is on the label.",
    "How much medicine should the dog have?",
    "I forgot my tablets yesterday morning.",
    "The new medicine makes me a bit sleepy.",
    "Please remind me about my medication every evening.",
    "I need to ask about the dose of my pills.",
]
PILL_TALK_ZH = [
    "医生说药要饭后吃。",
    "我今天早上吃药了吗？",
    "药盒放在厨房里。",
    "医生让我按时吃药。",
    "这个药吃了有点困。",
    "提醒我晚上吃药。",
    "药房的药准备好了。",
    "我忘了昨天的药。",
    "医生说剂量不用变。",
    "我要问问医生药的剂量。",
]


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "fayd.db")
    yield s
    s.close()


def _rank(memory: Memory, query: str, target: str, user: str = "ann") -> int:
    hits = [h["content"] for h in memory.search(query, user, n=20)]
    return hits.index(target) if target in hits else len(hits)


def test_chinese_is_cut_into_bigrams_and_queries_lose_function_words() -> None:
    assert lexical.index_text("医生说：吃药") == " 医生 生说 ： 吃药 "
    assert lexical.index_text("a 药 b") == "a  药  b"
    assert lexical.terms("What did Dr Okafor change about the Metformin dose?") == [
        "dr",
        "okafor",
        "change",
        "metformin",
        "dose",
    ]
    assert lexical.terms("牙医是哪天？") == ["牙医", "医是", "是哪"]
    assert lexical.match_expression("what is it?") is None  # nothing left to look for


def test_writes_keep_the_table_in_step_per_user(store: Store, embedder) -> None:
    memory = Memory(store, embedder)
    memory.add(
        [
            NewNode("Biscuit's ear drops are called Otomax.", "ann", importance=3),
            NewNode("Otomax is for the cat as well.", "bob", importance=3),
            NewNode("我约了牙医，五月六号下午三点。", "ann", importance=3),
        ]
    )
    count = store.call(lambda db: db.execute(f"SELECT COUNT(*) FROM {lexical.TABLE}").fetchone())
    assert count == (3,)
    ann = store.call(lexical.search, "otomax", "ann", 10)
    assert len(ann) == 1 and ann[0][1] > 0  # bob's node is not ann's
    # Porter stems: "drop" finds "drops"; a two-character Chinese word is found.
    assert store.call(lexical.search, "drop", "ann", 10)[0][0] == ann[0][0]
    assert len(store.call(lexical.search, "牙医是哪天？", "ann", 10)) == 1
    # A node deleted (nothing does today) takes its row with it.
    store.call(lambda db: db.execute("DELETE FROM memory_nodes WHERE id = ?", [ann[0][0]]))
    assert store.call(lexical.search, "otomax", "ann", 10) == []


def test_trigram_cannot_match_a_two_character_word(tmp_path: Path) -> None:
    """Why bigrams and not FTS5's trigram tokenizer: most Chinese words are two characters."""
    db = sqlite3.connect(tmp_path / "tri.db")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'trigram')")
    db.execute("INSERT INTO t (text) VALUES ('我约了牙医，五月六号下午三点。')")
    assert db.execute("""SELECT COUNT(*) FROM t WHERE t MATCH '"牙医"'""").fetchone() == (0,)
    assert db.execute("""SELECT COUNT(*) FROM t WHERE t MATCH '"约了牙"'""").fetchone() == (1,)
    db.close()


def test_migration_backfills_existing_nodes(tmp_path: Path, embedder) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    fts = next(m for m in MIGRATIONS if m.__name__ == "m006_memory_fts")
    apply_migrations(db, MIGRATIONS[: MIGRATIONS.index(fts)])
    assert lexical.TABLE not in db.table_names()
    for i, text in enumerate(["The vet is Dr Patel at Riverside.", "Tea with lemon."]):
        db.execute(
            "INSERT INTO memory_nodes (username, node_type, content, importance, created_at,"
            " last_retrieved_at, step, retrieved_step) VALUES ('ann', 'observation', ?, 3, 0,"
            " 0, ?, ?)",
            [text, i, i],
        )
    conn.close()
    store = Store(path)  # applies the rest: the FTS table, filled with both nodes
    try:
        assert [h[0] for h in store.call(lexical.search, "Patel", "ann", 5)] == [1]
        assert [h[0] for h in store.call(lexical.search, "lemon", "ann", 5)] == [2]
        # Nodes without a vector (relevance 0.5 for all): the BM25 term decides.
        hits = Memory(store, embedder).search("Dr Patel", "ann", n=1)
        assert hits[0]["content"] == "The vet is Dr Patel at Riverside."
    finally:
        store.close()


def test_fusion_finds_a_rare_word_the_embedding_ranks_poorly(store: Store, embedder) -> None:
    target = "Dr Okafor switched me to ramipril this morning."
    Memory(store, embedder).add([NewNode(c, "ann", importance=3) for c in [*PILL_TALK, target]])
    query = "How much ramipril should she take each day?"
    assert _rank(Memory(store, embedder, cfg=OFF), query, target) >= 3
    assert _rank(Memory(store, embedder), query, target) <= 1  # the default: fusion on


def test_fusion_finds_a_chinese_drug_name(store: Store, embedder) -> None:
    target = "医生把降压药换成了缬沙坦。"
    Memory(store, embedder).add([NewNode(c, "lin", importance=3) for c in [*PILL_TALK_ZH, target]])
    for query in ("缬沙坦怎么吃？", "她还在吃缬沙坦吗？"):
        assert _rank(Memory(store, embedder, cfg=OFF), query, target, "lin") >= 5
        assert _rank(Memory(store, embedder), query, target, "lin") <= 1
        rrf = replace(MemoryConfig(), lexical_fusion="rrf", lexical_weight=2.0)
        assert _rank(Memory(store, embedder, cfg=rrf), query, target, "lin") <= 1


def test_fusion_respects_filters_and_keeps_scores_in_range(store: Store, embedder) -> None:
    memory = Memory(store, embedder)
    memory.add(
        [
            NewNode("Otomax drops for Biscuit.", "ann", tags=["kind:event"], importance=3),
            NewNode("Otomax again, twice daily.", "ann", tags=["kind:fact"], importance=9),
            NewNode("The weather is grey.", "ann", tags=["kind:event"], importance=5),
        ]
    )
    hits = memory.search("otomax", "ann", n=3, filter_tags_all=["kind:event"])
    assert [h["content"] for h in hits] == ["Otomax drops for Biscuit.", "The weather is grey."]
    for weights in [(0.0, 1.0, 0.0), (0.2, 1.0, 0.5)]:
        for h in memory.search("otomax twice", "ann", n=3, weights=weights):
            assert 0.0 <= h["score"] <= sum(weights) + 1e-6  # what context assembly expects


def test_a_bad_fusion_mode_is_refused(store: Store, embedder) -> None:
    with pytest.raises(ValueError, match="lexical fusion"):
        Memory(store, embedder, cfg=replace(MemoryConfig(), lexical_fusion="bm42"))


def test_a_term_in_too_many_rows_is_not_searched(store: Store, embedder, monkeypatch) -> None:
    Memory(store, embedder).add(
        [NewNode(c, "ann", importance=3) for c in ["tea", "more tea", "tea and Otomax"]]
    )
    assert len(store.call(lexical.search, "tea", "ann", 10)) == 3
    monkeypatch.setattr(lexical, "MAX_ROWS_PER_TERM", 2)  # "tea" is now too common
    assert store.call(lexical.search, "tea", "ann", 10) == []
    assert [i for i, _ in store.call(lexical.search, "tea otomax", "ann", 10)] == [3]
