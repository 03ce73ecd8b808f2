"""Memory writes under stress: a kill -9 loses nothing acknowledged; a full disk is a clear
error with nothing half-written and the old memories intact."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fayd.errors import FaydError
from fayd.memory import Memory, NewNode
from fayd.store import Store


def test_acknowledged_memories_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    script = textwrap.dedent(f"""
        from fayd.memory import Memory
        from fayd.memory.open import load_embedder
        from fayd.store import Store
        memory = Memory(Store({str(path)!r}), load_embedder())
        for i in range(100000):
            memory.remember(f"note number {{i}}", "ann", importance=5)
            print("ack", i, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acked = -1
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 40:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    conn = sqlite3.connect(path)
    stored = {row[0] for row in conn.execute("SELECT content FROM memory_nodes")}
    assert {f"note number {i}" for i in range(acked + 1)} <= stored
    # Every stored node has its embedding and tags: no half-written node.
    assert conn.execute(
        "SELECT count(*) FROM memory_nodes n LEFT JOIN memory_embeddings e ON e.node_id = n.id"
        " WHERE e.node_id IS NULL"
    ).fetchone() == (0,)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_full_disk_is_a_clear_error_and_nothing_is_half_written(tmp_path: Path, embedder) -> None:
    store = Store(tmp_path / "f.db")
    memory = Memory(store, embedder)
    memory.remember("Ann's cat is called Whiskers", "ann", importance=5)
    pages = store.call(lambda db: db.execute("PRAGMA page_count").fetchone()[0])
    # SQLite's own limit stands in for a full disk: the same SQLITE_FULL error.
    store.call(lambda db: db.execute(f"PRAGMA max_page_count = {pages + 2}"))
    batch = [NewNode(content=f"long note {i} " + "x" * 3000, username="ann") for i in range(20)]
    with pytest.raises(FaydError, match="full"):
        memory.add(batch)
    conn = sqlite3.connect(tmp_path / "f.db")
    contents = [row[0] for row in conn.execute("SELECT content FROM memory_nodes")]
    assert contents == ["Ann's cat is called Whiskers"]  # the batch left no trace
    found = memory.search("what is the cat's name?", "ann", n=1)
    assert found[0]["content"] == "Ann's cat is called Whiskers"
    store.close()
