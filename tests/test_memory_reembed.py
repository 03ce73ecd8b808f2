"""Re-embedding after an embedding-model change (fayd/memory/reembed.py), on real SQLite files
with the real MiniLM embedder: stale nodes (another model, no row, another size) are found and
embedded again, loaded indexes follow in place (a household node in every user's, the
projected copy above 20,000 rows), an interrupted pass keeps its batches, a full disk writes
nothing of its batch, ``fayd memory reembed`` and the daemon's background task."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fayd.errors import StoreError
from fayd.memory import Memory, MemoryConfig, NewNode
from fayd.memory.index import APPROX_MIN_ROWS, LOW_STEP, Row, UserIndex
from fayd.memory.reembed import reembed_in_background
from fayd.store import Store
from tests.test_memory_household import insert_near_copies

pytestmark = pytest.mark.models

ROOT = Path(__file__).parents[1]
OLD = "old-model/model.onnx"
TARGET = "Ann's grandson Tom plays the trumpet in the school brass band."
QUERY = "Which musical instrument does Tom play?"
OTHERS = [
    "Ann had porridge with honey for breakfast.",
    "The weather was rainy all afternoon.",
    "Ann watered the tomatoes in the garden.",
    "The neighbour's dog barked at the postman.",
    "Ann watched a quiz show on television.",
    "The kettle needs descaling soon.",
    "Ann phoned her sister in Leeds.",
    "The library books are due on Friday.",
    "Ann knitted a blue scarf for the winter.",
    "The bus to town was late again.",
    "Ann's knee hurt after the long walk.",
    "The pharmacy closes at six on Saturdays.",
]
#: Vectors only: BM25 would find the target by its words even without a vector.
VECTORS_ONLY = MemoryConfig(lexical_fusion="off")


class Renamed:
    """The real MiniLM under another name: to the store, exactly what a model change is
    (the vectors are computed for real; only the recorded model name differs)."""

    def __init__(self, inner, name: str) -> None:
        self.inner, self.name, self.dim = inner, name, inner.dim

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return self.inner.embed(texts, batch_size)


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "fayd.db")
    yield s
    s.close()


def write_old(store: Store, embedder, contents: list[str], user: str = "ann", **kw) -> list[int]:
    """Nodes as an older model wrote them."""
    old = Memory(store, Renamed(embedder, OLD))
    added = old.add([NewNode(c, user, importance=5, **kw) for c in contents])
    return [n["node_id"] for n in added]


def stale(memory: Memory) -> int:
    return memory.stats()["nodes_without_current_embedding"]


def test_stale_nodes_are_embedded_again_and_searched(store: Store, embedder) -> None:
    ids = write_old(store, embedder, [*OTHERS, TARGET])
    # One node with no embedding row at all, one with the current model at another size.
    store.call(lambda db: db.execute("DELETE FROM memory_embeddings WHERE node_id = ?", [ids[0]]))
    store.call(
        lambda db: db.execute(
            "UPDATE memory_embeddings SET model = ?, dim = 8, vector = zeroblob(32)"
            " WHERE node_id = ?",
            [embedder.name, ids[1]],
        )
    )
    memory = Memory(store, embedder, cfg=VECTORS_ONLY)
    assert stale(memory) == len(ids)
    before = memory.search(QUERY, "ann", n=5)  # loads ann's index: no vector in it
    assert len({h["score"] for h in before}) == 1  # every node 0.5: nothing ranks by meaning

    progress: list[tuple[int, int]] = []
    assert memory.reembed(batch=5, progress=lambda d, t: progress.append((d, t))) == len(ids)
    assert progress == [(5, 13), (10, 13), (13, 13)]
    assert stale(memory) == 0
    # The loaded index changed in place (no forget_cache): the target is found by meaning.
    index = memory._indexes["ann"]
    assert index.n_vec == index.n == len(ids)
    after = memory.search(QUERY, "ann", n=5)
    assert after[0]["content"] == TARGET and after[0]["score"] > after[1]["score"]
    # One row per node, all of the current model; a fresh load agrees; nothing left to do.
    rows = store.call(lambda db: db.execute("SELECT model, dim FROM memory_embeddings").fetchall())
    assert rows == [(embedder.name, embedder.dim)] * len(ids)
    fresh = Memory(store, embedder, cfg=VECTORS_ONLY)
    assert fresh.search(QUERY, "ann", n=1)[0]["content"] == TARGET
    assert memory.reembed() == 0


def test_a_household_node_changes_in_every_loaded_index(store: Store, embedder) -> None:
    [shared] = write_old(store, embedder, [TARGET], "ann", scope="household")
    write_old(store, embedder, OTHERS[:6], "bob")
    write_old(store, embedder, OTHERS[6:], "carol")
    memory = Memory(store, embedder, cfg=VECTORS_ONLY)
    users = ("ann", "bob", "carol")
    for user in users:  # load every user's index before the pass
        memory.search(QUERY, user, n=1)
    assert memory.reembed() == 1 + len(OTHERS)
    for user in users:
        index = memory._indexes[user]
        assert index.has_vec[index.pos[shared]]
        assert memory.search(QUERY, user, n=1)[0]["content"] == TARGET


def test_set_vectors_keeps_the_projected_copy_consistent() -> None:
    """Above the threshold (synthetic unit vectors, no model needed): new vectors reach the
    projected copy, and ``n_vec`` counts only rows that had none."""
    rng = np.random.default_rng(5)
    dim, n = 64, APPROX_MIN_ROWS + 500
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    missing = np.arange(0, n, 50)  # 410 rows loaded without a vector
    index = UserIndex(dim)
    index.extend(
        Row(i + 1, "observation", 5.0, 0.0, i, [], None if i in set(missing) else vecs[i])
        for i in range(n)
    )
    assert index.low is not None and index.proj is not None
    assert index.n_vec == n - missing.size
    new = rng.standard_normal((missing.size + 3, dim)).astype(np.float32)
    new /= np.linalg.norm(new, axis=1, keepdims=True)
    positions = np.concatenate([missing, [1, 2, 3]])  # three rows replaced, not added
    index.set_vectors(positions, new)
    assert index.n_vec == n and index.all_have_vectors()
    assert np.array_equal(index.vecs[positions], new)
    assert _close_to_step(index, slice(0, n))
    index.set_vectors(np.array([], np.int64), np.zeros((0, dim), np.float32))  # a no-op
    assert index.n_vec == n


def test_above_the_threshold_through_memory(store: Store, embedder) -> None:
    """20,000+ current nodes (real sentence structure, so the projection fits) and a few
    stale ones: the pass updates the projected rows and the shortlist finds the target."""
    sentences = [f"{s} Day {d}." for s in OTHERS for d in range(20)]
    insert_near_copies(store, embedder, sentences, APPROX_MIN_ROWS)
    [target] = write_old(store, embedder, [TARGET])
    memory = Memory(store, embedder, cfg=VECTORS_ONLY)
    memory.search(QUERY, "ann", n=1)
    index = memory._indexes["ann"]
    assert index.low is not None and not index.has_vec[index.pos[target]]
    proj = index.proj
    assert memory.reembed() == 1
    assert index.proj is proj  # one new vector of 20,001: the axes stay
    pos = index.pos[target]
    assert _close_to_step(index, pos)
    assert memory.search(QUERY, "ann", n=1)[0]["content"] == TARGET


def test_an_index_of_mostly_new_vectors_refits_its_projection(store: Store, embedder) -> None:
    """An index loaded with few current vectors has axes fitted on those few; when a pass
    brings most of its vectors, the axes are fitted again (synthetic index, no model run)."""
    rng = np.random.default_rng(9)
    dim, n = embedder.dim, APPROX_MIN_ROWS + 100
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = UserIndex(dim)
    index.extend(
        Row(i + 1, "observation", 5.0, 0.0, i, [], vecs[i] if i < 10 else None) for i in range(n)
    )
    proj = index.proj  # fitted on 10 vectors
    index.set_vectors(np.arange(10, n), vecs[10:])
    memory = Memory(store, embedder)
    memory._indexes["ann"] = index
    memory.refit_projections({"ann": n - 10})
    assert index.proj is not proj
    assert _close_to_step(index, slice(0, n))


def test_an_interrupted_pass_keeps_its_batches(store: Store, embedder) -> None:
    write_old(store, embedder, OTHERS[:10])
    memory = Memory(store, embedder)

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt  # as if the process were stopped after the first batch

    with pytest.raises(KeyboardInterrupt):
        memory.reembed(batch=4, progress=stop)
    assert stale(memory) == 6  # the first batch is committed
    assert memory.reembed(batch=4) == 6
    assert stale(memory) == 0


def test_a_full_disk_stops_the_pass_and_writes_nothing_of_the_batch(
    tmp_path: Path, embedder
) -> None:
    path = tmp_path / "f.db"
    first = Store(path)
    write_old(first, embedder, OTHERS)
    first.close()
    with sqlite3.connect(path) as conn:  # nodes without vectors, the file shrunk to fit
        conn.execute("DELETE FROM memory_embeddings")
    conn.close()
    sqlite3.connect(path, isolation_level=None).execute("VACUUM").connection.close()
    store = Store(path)
    try:
        memory = Memory(store, embedder)
        pages = store.call(lambda db: db.execute("PRAGMA page_count").fetchone()[0])
        # SQLite's own limit stands in for a full disk: the same SQLITE_FULL error.
        store.call(lambda db: db.execute(f"PRAGMA max_page_count = {pages}"))
        with pytest.raises(StoreError, match=r"re-embedding stopped after 0 nodes.*full"):
            memory.reembed(batch=len(OTHERS))
        count = "SELECT count(*) FROM memory_embeddings"
        assert store.call(lambda db: db.execute(count).fetchone()[0]) == 0
        assert stale(memory) == len(OTHERS)
        store.call(lambda db: db.execute(f"PRAGMA max_page_count = {pages * 100}"))
        assert memory.reembed() == len(OTHERS)  # with room again, the rerun does it all
    finally:
        store.close()


def test_cli_reembed(tmp_path: Path, embedder) -> None:
    state = tmp_path / "state"
    store = Store(state / "fayd.db")
    write_old(store, embedder, [*OTHERS, TARGET])
    write_old(store, embedder, ["The carer comes on Tuesdays."], "carer", scope="household")
    store.close()
    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(state)}
    env.pop("FAYD_CONFIG", None)

    def fayd(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(ROOT / ".venv" / "bin" / "fayd"), "memory", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)

    done = fayd("reembed", "--batch", "5")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "reembedded": len(OTHERS) + 2,
        "embedding_model": embedder.name,
    }
    assert "re-embedded 5/14" in done.stderr and "re-embedded 14/14" in done.stderr
    stats = fayd("stats")
    assert json.loads(stats.stdout)["nodes_without_current_embedding"] == 0
    again = fayd("reembed")
    assert json.loads(again.stdout) == {"reembedded": 0, "embedding_model": embedder.name}
    bad = fayd("reembed", "--batch", "0")
    assert bad.returncode == 1 and "--batch" in bad.stderr


def test_the_daemons_background_task(store: Store, embedder, caplog) -> None:
    write_old(store, embedder, [*OTHERS, TARGET])
    memory = Memory(store, embedder, cfg=VECTORS_ONLY)
    memory.search(QUERY, "ann", n=1)  # a loaded index, as in a running daemon
    with caplog.at_level(logging.INFO, logger="fayd.memory.reembed"):
        asyncio.run(reembed_in_background(memory, batch=4))
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == f"re-embedding {len(OTHERS) + 1} memory nodes for model {embedder.name}"
    assert messages[1].startswith(f"re-embedded {len(OTHERS) + 1} memory nodes in ")
    assert stale(memory) == 0
    assert memory.search(QUERY, "ann", n=1)[0]["content"] == TARGET
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="fayd.memory.reembed"):
        asyncio.run(reembed_in_background(memory))  # nothing stale: silent
    assert caplog.records == []


def test_a_failed_background_pass_is_logged_and_ends(tmp_path: Path, embedder, caplog) -> None:
    """The supervisor restarts a component that raises: this one must return instead."""
    store = Store(tmp_path / "f.db")
    memory = Memory(store, embedder)
    store.close()  # every query now fails
    with caplog.at_level(logging.ERROR, logger="fayd.memory.reembed"):
        asyncio.run(reembed_in_background(memory))  # returns, does not raise
    assert "re-embedding memory nodes failed" in caplog.records[0].getMessage()


def _close_to_step(index, rows) -> bool:
    """``low`` holds ``vecs @ proj`` to half an int8 step on every axis."""
    err = np.abs(index.projected(rows) - index.vecs[rows] @ index.proj)
    return bool(np.all(err <= LOW_STEP / 2 + 1e-6))
