"""Household scope of memory nodes on a real SQLite file with the real MiniLM embedder: a
household node is seen by every user (search, rules, recent, reflections; below and above the
20,000-row fast path), a private one only by its writer; filters, stateful search and
``mark_retrieved``; lexical hits; the migration; ``fayd memory add``; Fay export/import."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import sqlite_utils

from fayd.memory import BadInput, Memory, MemoryConfig, NewNode
from fayd.memory import nodes as db_nodes
from fayd.memory.fay_io import HOUSEHOLD_TAG, export_fay, import_fay
from fayd.memory.index import APPROX_MIN_ROWS
from fayd.store import Store, lexical
from fayd.store.migrations import MIGRATIONS, apply_migrations
from tests.test_memory_cli import fayd_memory

pytestmark = pytest.mark.models

DAY = 86400.0
PILLS = "Mum takes her heart pills at 8:00 every morning."
CARER = "The carer comes on Tuesdays at ten to help with the shower."
ANN_SECRET = "Ann hides the spare house key under the blue flowerpot."
BOB_SECRET = "Bob is planning a surprise party for Ann's birthday."


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "fayd.db")
    yield s
    s.close()


@pytest.fixture
def memory(store: Store, embedder) -> Memory:
    return Memory(store, embedder)


def _contents(nodes: list[dict]) -> set[str]:
    return {n["content"] for n in nodes}


def _family(memory: Memory) -> dict[str, dict]:
    """Private nodes of ann and bob, a household rule (ann wrote it) and a household event
    (the carer wrote it: someone who never searches)."""
    return {
        "ann_secret": memory.remember(ANN_SECRET, "ann", "fact", "user"),
        "ann_rule": memory.remember(
            "Never call Ann after 10 pm.", "ann", "rule", "user", True, importance=8
        ),
        "bob_secret": memory.remember(BOB_SECRET, "bob", "event", "user"),
        "pills": memory.remember(
            PILLS, "ann", "rule", "user", True, importance=9, scope="household"
        ),
        "carer": memory.remember(CARER, "carer", "event", "carer", scope="household"),
    }


def test_private_stays_private_household_is_shared(memory: Memory, store: Store, embedder):
    memory.search("warm up", "bob")  # bob's index is loaded before the household writes
    made = _family(memory)
    for m in (memory, Memory(store, embedder)):  # mirrored on write, and loaded from disk
        for user, own, other in (("ann", ANN_SECRET, BOB_SECRET), ("bob", BOB_SECRET, ANN_SECRET)):
            assert m.search("heart pills", user, n=1)[0]["content"] == PILLS
            assert m.search("who helps with the shower", user, n=1)[0]["content"] == CARER
            seen = _contents(m.search("the spare key and the surprise party", user, n=50))
            assert own in seen and other not in seen
        # A user with no node of their own sees the household and nothing private.
        assert _contents(m.search("anything at all", "carol", n=50)) == {PILLS, CARER}
    assert _contents(memory.get_active_rules("bob")) == {PILLS}
    assert [r["content"] for r in memory.get_active_rules("ann")] == [
        PILLS,  # importance 9 before 8
        "Never call Ann after 10 pm.",
    ]
    assert _contents(memory.get_recent("bob", n=20)) == {BOB_SECRET, PILLS, CARER}
    assert memory.get_recent("carol", n=1)[0]["node_id"] == made["carer"]["node_id"]
    assert _contents(memory.get_recent("ann", n=20, filter_tags_all=["kind:rule"])) == {
        PILLS,
        "Never call Ann after 10 pm.",
    }
    stats = memory.stats()
    assert stats["household_nodes"] == 2 and stats["users"]["carer"]["nodes"] == 1


def test_household_reflections_and_a_bad_scope(memory: Memory, store: Store) -> None:
    _family(memory)
    note = NewNode(
        "I noticed the family plans Mum's days around her pills.",
        "ann",
        node_type="reflection",
        tags=["kind:insight", "source:fay_reflection"],
        scope="household",
        importance=6,
    )
    private = NewNode("I noticed Ann worries about her keys.", "ann", node_type="reflection")
    memory.add([note, private])
    assert _contents(memory.get_reflections("bob")) == {note.content}
    assert _contents(memory.get_reflections("ann")) == {note.content, private.content}
    with pytest.raises(BadInput, match="scope"):
        memory.remember("A shared note", "ann", scope="family")
    assert store.call(db_nodes.stats, "x")["nodes"] == 7


def test_filters_over_own_and_household_nodes(memory: Memory) -> None:
    made = _family(memory)
    bob_rule = memory.remember("Bob wants the news at 7 pm.", "bob", "rule", "user", True)
    rules = memory.search("x", "bob", n=50, filter_tags_all=["kind:rule", "persistent:true"])
    assert {h["node_id"] for h in rules} == {bob_rule["node_id"], made["pills"]["node_id"]}
    anyof = memory.search("x", "bob", n=50, filter_tags_any=["source:carer", "kind:event"])
    assert _contents(anyof) == {CARER, BOB_SECRET}
    assert memory.search("x", "bob", n=50, node_type="reflection") == []
    only = memory.search("pills", "carol", n=50, filter_tags_all=["kind:rule"])
    assert _contents(only) == {PILLS}


def test_stateful_search_and_mark_retrieved(memory: Memory, tmp_path: Path) -> None:
    for i in range(5):  # ann's step counter runs ahead of bob's
        memory.remember(f"Ann's note number {i} about the garden", "ann")
    made = _family(memory)
    memory.search("warm up", "ann")  # both indexes loaded: a touch must reach both
    db = sqlite3.connect(tmp_path / "fayd.db")

    def row(node_id: int) -> tuple[float, int]:
        return db.execute(
            "SELECT last_retrieved_at, retrieved_step FROM memory_nodes WHERE id = ?", [node_id]
        ).fetchone()

    pills, secret = made["pills"]["node_id"], made["bob_secret"]["node_id"]
    before = row(pills)
    later = before[0] + 30 * DAY
    hits = memory.search("heart pills", "bob", n=1, stateless=False, now=later)
    assert hits[0]["node_id"] == pills
    # One last_retrieved_at per node; the step stays on its writer's (ann's) counter.
    assert row(pills) == (later, before[1])
    bob, ann = memory._index("bob"), memory._index("ann")
    assert bob.max_step == 0  # bob's own step, not raised by ann's household rows
    for index in (bob, ann):
        assert index.last_retrieved[index.pos[pills]] == later
    memory.mark_retrieved("bob", [made["carer"]["node_id"], secret], now=later + DAY)
    assert row(secret) == (later + DAY, 0)
    assert row(made["carer"]["node_id"])[0] == later + DAY
    # ann cannot mark bob's private node; she can mark the household one.
    memory.mark_retrieved("ann", [secret, pills], now=later + 2 * DAY)
    assert row(secret)[0] == later + DAY and row(pills)[0] == later + 2 * DAY
    assert bob.last_retrieved[bob.pos[pills]] == later + 2 * DAY
    db.close()


def test_lexical_hits_include_the_household(memory: Memory, store: Store) -> None:
    made = _family(memory)
    med = memory.remember(
        "Mum's new medicine is Xarelto, with dinner.", "bob", "fact", scope="household"
    )
    private = memory.remember("Bob's own Xarelto question for the GP.", "bob", "fact")
    found = {i for i, _ in store.call(lexical.search, "Xarelto flowerpot", "ann", 10)}
    assert found == {med["node_id"], made["ann_secret"]["node_id"]}
    assert private["node_id"] not in found
    # Fusion alone (no relevance, no recency) ranks by the BM25 hit.
    hits = memory.search("Xarelto", "carol", n=1, weights=(0.0, 0.0, 0.0))
    assert hits[0]["node_id"] == med["node_id"]


def test_migration_indexes_and_shares_existing_household_rows(tmp_path: Path, embedder):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    upto = next(m for m in MIGRATIONS if m.__name__ == "m007_memory_household")
    apply_migrations(db, MIGRATIONS[: MIGRATIONS.index(upto)])
    # Written before household scope was read: its lexical row carries the writer's name.
    cur = db.execute(
        "INSERT INTO memory_nodes (username, scope, node_type, content, importance, created_at,"
        " last_retrieved_at, step, retrieved_step) VALUES ('ann', 'household', 'observation',"
        " 'The boiler engineer Mr Okafor comes on Friday.', 3, 0, 0, 0, 0)"
    )
    lexical.add(db, [(cur.lastrowid, "ann", "The boiler engineer Mr Okafor comes on Friday.")])
    assert lexical.search(db, "Okafor", "bob", 5) == []
    conn.close()
    store = Store(path)  # applies m007
    try:
        assert [h[0] for h in store.call(lexical.search, "Okafor", "bob", 5)] == [1]
        plan = store.call(
            lambda d: d.execute(f"EXPLAIN QUERY PLAN {db_nodes.OTHERS_HOUSEHOLD}", ["x"]).fetchall()
        )
        assert "memory_nodes_household" in str(plan)
        hits = Memory(store, embedder).search("Mr Okafor", "bob", n=1)
        assert hits[0]["content"].startswith("The boiler engineer")
    finally:
        store.close()


def test_above_the_fast_path_threshold(store: Store, embedder) -> None:
    """ann has more than 20,000 nodes (projected first pass, shortlist); household rows are
    found among them, on load and when written while ann's index is loaded."""
    topics = ["green tea", "the vegetable garden", "football on TV", "the weather", "jazz"]
    sentences = [
        f"Ann talked about {t} with her neighbour, day {d}." for t in topics for d in range(40)
    ]
    size = APPROX_MIN_ROWS + 1000
    insert_near_copies(store, embedder, sentences, size)
    memory = Memory(store, embedder, cfg=MemoryConfig(lexical_fusion="off"))  # vectors only
    memory.add(
        [
            NewNode(PILLS, "bob", scope="household", importance=5),
            NewNode("Bob's heart rate was 72 at the check-up.", "bob", importance=5),
        ]
    )
    top = memory.search("When does Mum take her heart pills?", "ann", n=10)
    index = memory._index("ann")
    assert index.n == size + 1 and index.low is not None  # the projected path is on
    assert top[0]["content"] == PILLS
    assert all("Bob" not in h["content"] for h in top)
    # Written while ann's index is loaded: mirrored into it, projection included.
    memory.remember(CARER, "bob", "event", scope="household", importance=5)
    assert index.n == size + 2
    assert memory.search("Who comes to help with the shower?", "ann", n=3)[0]["content"] == CARER
    fused = Memory(store, embedder)  # default fusion, loaded from disk
    assert fused.search("carer Tuesdays", "ann", n=1)[0]["content"] == CARER


def test_fay_export_import_keeps_the_scope(memory: Memory, tmp_path: Path, embedder) -> None:
    made = _family(memory)
    bob_pills = memory.remember(
        "Bob fetches Mum's prescription on Fridays.", "bob", scope="household"
    )
    refl = NewNode(
        "I noticed Bob organises Mum's medicine.",
        "bob",
        node_type="reflection",
        pointer_id=[made["pills"]["node_id"], bob_pills["node_id"]],
    )
    memory.add([refl])
    out = tmp_path / "out"
    export_fay(memory, out, progress=lambda _: None)
    streams = {
        u: json.loads((out / u / "memory_stream/nodes.json").read_text("utf-8"))
        for u in ("ann", "bob", "carer")
    }
    household = {PILLS, CARER, bob_pills["content"]}
    for user, nodes in streams.items():
        shared = {n["content"] for n in nodes if HOUSEHOLD_TAG in n["tags"]}
        assert shared == household, user  # every stream carries every household node
    assert _contents(streams["bob"]) == household | {BOB_SECRET, refl.content}
    fay_id = {n["content"]: n["node_id"] for n in streams["bob"]}
    (bob_refl,) = [n for n in streams["bob"] if n["node_type"] == "reflection"]
    assert bob_refl["pointer_id"] == [fay_id[PILLS], fay_id[bob_pills["content"]]]

    store = Store(tmp_path / "fresh.db")
    try:
        fresh = Memory(store, embedder)
        report = import_fay(fresh, out, progress=lambda _: None)
        # ann's stream comes first: the household nodes are written from it, once.
        assert report["users"] == {"ann": 5, "bob": 2, "carer": 0}
        assert report["household_merged"] == 6 and report["dangling_pointers"] == 0
        assert fresh.stats()["household_nodes"] == 3
        for user in ("ann", "bob", "carer", "dora"):
            assert household <= _contents(fresh.get_recent(user, n=50))
        assert ANN_SECRET not in _contents(fresh.get_recent("bob", n=50))
        assert BOB_SECRET not in _contents(fresh.get_recent("ann", n=50))
        (back,) = fresh.get_reflections("bob")
        ids = {n["content"]: n["node_id"] for n in fresh.get_recent("bob", n=50)}
        assert back["pointer_id"] == [ids[PILLS], ids[bob_pills["content"]]]
        again = tmp_path / "again"
        export_fay(fresh, again, progress=lambda _: None)
        for user in ("ann", "bob"):  # carer wrote only household nodes: ann's stream has them
            nodes = streams[user]
            second = json.loads((again / user / "memory_stream/nodes.json").read_text("utf-8"))
            assert {(n["content"], tuple(n["tags"])) for n in second} == {
                (n["content"], tuple(n["tags"])) for n in nodes
            }, user
    finally:
        store.close()
    # One stream at a time (two imports): the copies match the nodes already stored.
    store = Store(tmp_path / "fresh2.db")
    try:
        fresh = Memory(store, embedder)
        assert import_fay(fresh, out / "ann", "ann", progress=lambda _: None)["users"] == {"ann": 5}
        report = import_fay(fresh, out / "bob", "bob", progress=lambda _: None)
        assert report["users"] == {"bob": 2} and report["household_merged"] == 3
        (back,) = fresh.get_reflections("bob")
        ids = {n["content"]: n["node_id"] for n in fresh.get_recent("bob", n=50)}
        assert back["pointer_id"] == [ids[PILLS], ids[bob_pills["content"]]]
    finally:
        store.close()


def test_cli_add_takes_a_scope(tmp_path: Path) -> None:
    lines = [
        {"content": PILLS, "username": "ann", "kind": "rule", "persistent": True,
         "importance": 9, "scope": "household"},
        {"content": ANN_SECRET, "username": "ann", "importance": 5},
    ]  # fmt: skip
    added = fayd_memory(
        tmp_path, "add", "--jsonl", "-", "--no-llm", stdin="\n".join(json.dumps(x) for x in lines)
    )
    assert added.returncode == 0, added.stderr
    found = fayd_memory(tmp_path, "search", "pills and keys", "--user", "bob", "--json")
    assert found.returncode == 0, found.stderr
    assert [h["content"] for h in json.loads(found.stdout)] == [PILLS]
    bad = fayd_memory(
        tmp_path, "add", "--jsonl", "-", "--no-llm", stdin=json.dumps({**lines[1], "scope": "all"})
    )
    assert bad.returncode != 0 and "scope must be user or household" in bad.stderr


def insert_near_copies(store: Store, embedder, sentences: list[str], size: int) -> None:
    """``size`` of Ann's nodes: the sentences over and over, each vector a real MiniLM one
    plus a little noise (real structure, so a projection fits it; no model run per node)."""
    base = embedder.embed(sentences)
    rng = np.random.default_rng(3)
    for start in range(0, size, 5000):
        idx = np.arange(start, min(size, start + 5000))
        vecs = base[idx % len(sentences)] + rng.normal(0, 0.01, (idx.size, embedder.dim))
        vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
        batch = [NewNode(f"{sentences[i % len(sentences)]} ({i})", "ann") for i in idx]
        store.call(db_nodes.insert_nodes, batch, [5.0] * len(batch), vecs, embedder.name)
