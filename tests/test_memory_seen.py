"""Memory written by another connection to the same SQLite file (another process: ``fayd
memory add``, ``fayd mcp``) is recalled by a memory whose indexes are already loaded, at
its next search: appended rows, household rows, rows without a vector, and deleted rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fayd.memory import Memory, NewNode
from fayd.memory import nodes as db_nodes
from fayd.store import Store

pytestmark = pytest.mark.models

PLUMBER = "The plumber comes on Tuesday morning."
OTHER = ["Ann likes roses in the garden.", "Ann's grandson is called Tom."]


@pytest.fixture
def two(tmp_path: Path, embedder):
    """The daemon's memory and another writer's, each with its own connection."""
    daemon_store, other_store = Store(tmp_path / "fayd.db"), Store(tmp_path / "fayd.db")
    yield Memory(daemon_store, embedder), Memory(other_store, embedder)
    daemon_store.close()
    other_store.close()


def contents(hits: list[dict]) -> list[str]:
    return [h["content"] for h in hits]


def test_rows_another_process_adds_are_found_without_reloading(two) -> None:
    daemon, other = two
    for text in OTHER:
        daemon.remember(text, "ann")
    assert PLUMBER not in contents(daemon.search("when does the plumber come?", "ann", n=3))
    node = other.remember(PLUMBER, "ann")
    hits = daemon.search("when does the plumber come?", "ann", n=3)
    assert hits[0]["content"] == PLUMBER and hits[0]["node_id"] == node["node_id"]
    # The daemon's own write after it is indexed once, not twice.
    daemon.remember("Ann's tea is Earl Grey.", "ann")
    ids = [h["node_id"] for h in daemon.search("plumber Tuesday", "ann", n=10)]
    assert len(ids) == len(set(ids)) == 4


def test_household_row_of_another_process_reaches_every_loaded_index(two) -> None:
    daemon, other = two
    daemon.remember(OTHER[0], "ann")
    daemon.remember("Bob walks the dog at seven.", "bob")
    other.remember(PLUMBER, "carer", scope="household")
    for user in ("ann", "bob"):
        assert contents(daemon.search("plumber", user, n=1)) == [PLUMBER]


def test_a_row_stored_without_a_vector_is_embedded_when_seen(two, tmp_path: Path) -> None:
    daemon, other = two
    for text in OTHER:
        daemon.remember(text, "ann")
    daemon.search("roses", "ann")  # loaded
    other.store.call(db_nodes.insert_nodes, [NewNode(PLUMBER, "ann")], [5.0], None, "none")
    hits = daemon.search("when does the plumber come?", "ann", n=1)
    assert contents(hits) == [PLUMBER]
    with sqlite3.connect(tmp_path / "fayd.db") as db:
        model = db.execute(
            "SELECT e.model FROM memory_embeddings e JOIN memory_nodes n ON n.id = e.node_id"
            " WHERE n.content = ?",
            [PLUMBER],
        ).fetchone()
    assert model == (daemon.embedder.name,)


def test_a_row_another_process_deletes_is_no_longer_recalled(two, tmp_path: Path) -> None:
    daemon, other = two
    plumber = daemon.remember(PLUMBER, "ann")
    daemon.remember(OTHER[0], "ann")
    assert contents(daemon.search("plumber", "ann", n=1)) == [PLUMBER]
    other.store.call(
        lambda db: db.execute("DELETE FROM memory_nodes WHERE id = ?", [plumber["node_id"]])
    )
    assert PLUMBER not in contents(daemon.search("plumber", "ann", n=5))


def test_own_writes_alone_never_reload(two) -> None:
    daemon, _ = two
    daemon.remember(OTHER[0], "ann")
    daemon.search("roses", "ann")
    index = daemon._indexes["ann"]
    daemon.remember(OTHER[1], "ann")
    daemon.search("Tom", "ann")
    assert daemon._indexes["ann"] is index and index.n == 2
