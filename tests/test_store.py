from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fayd.errors import StoreError
from fayd.protocol import AudioFormat, Hello, SensorEvent
from fayd.store import Store, records
from fayd.store import devices_records as reg
from fayd.store.migrations import MIGRATIONS, apply_migrations


def test_wal_and_migrations_recorded_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.db")
    store.close()
    store = Store(tmp_path / "f.db")  # reopening applies nothing twice
    rows = store.call(lambda db: list(db["_migrations"].rows))
    assert [r["name"] for r in rows] == [m.__name__ for m in MIGRATIONS]
    assert store.call(lambda db: db.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    store.close()


def test_a_new_migration_runs_once(tmp_path: Path) -> None:
    import sqlite_utils

    db = sqlite_utils.Database(tmp_path / "m.db")
    calls = []

    def m999_extra(db: sqlite_utils.Database) -> None:
        calls.append(1)
        db["extra"].create({"id": int}, pk="id")

    shipped = [m.__name__ for m in MIGRATIONS]
    assert apply_migrations(db, [*MIGRATIONS, m999_extra]) == [*shipped, "m999_extra"]
    assert apply_migrations(db, [*MIGRATIONS, m999_extra]) == []
    assert calls == [1]


def test_devices_events_and_conversations(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.db")
    hello = Hello("d1", ("mic", "speaker"), fw="1.2", audio_in=AudioFormat(16000), user="ann")
    store.call(records.upsert_device, hello)
    store.call(records.set_presence, "d1", False)
    [device] = store.call(records.list_devices)
    assert device["roles"] == ["mic", "speaker"] and device["online"] is False
    assert device["audio_in"] == {"rate": 16000, "width": 2, "channels": 1}

    event = SensorEvent(seq=5, sensor="bp", data={"sys": 150})
    assert store.call(reg.record_events, [("d1", event)]) == [True]
    assert store.call(reg.record_events, [("d1", event)]) == [False]  # a replay: stored once
    assert store.call(reg.record_events, [("d2", event)]) == [True]  # another device's seq 5
    # The device's flash was erased: its counter starts again, under a new epoch.
    reflashed = SensorEvent(seq=5, sensor="bp", data={"sys": 120}, epoch="3f9a01c2")
    assert store.call(reg.record_events, [("d1", reflashed), ("d1", reflashed)]) == [True, False]

    conv = store.call(records.conversation_for, "ann", "d1")
    assert store.call(records.conversation_for, "ann", "d1") == conv
    assert store.call(records.conversation_for, "bob", "d1") != conv
    for i in range(6):
        store.call(records.record_turn, conv, f"q{i}", f"a{i}", {"source": "text"})
    history = store.call(records.history, conv, 2)
    assert [m["content"] for m in history] == ["q4", "a4", "q5", "a5"]
    store.close()


def test_a_failed_write_is_rolled_back_whole(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.db")
    conv = store.call(records.conversation_for, "ann", "d1")

    def half_then_fail(db):
        records.record_turn(db, conv, "q", "a", {})
        db.execute("INSERT INTO nowhere VALUES (1)")

    with pytest.raises(StoreError):
        store.call(half_then_fail)
    assert store.call(records.history, conv, 5) == []
    store.close()


def test_unopenable_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "f.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"f\.db"):
        Store(tmp_path / "f.db")


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    """A writer prints 'ack N' after each committed turn; we kill -9 it mid-stream and
    every acknowledged turn must be in the file."""
    path = tmp_path / "f.db"
    script = textwrap.dedent(f"""
        import sys
        from fayd.store import Store, records
        store = Store({str(path)!r})
        conv = store.call(records.conversation_for, "u", "d")
        for i in range(100000):
            store.call(records.record_turn, conv, f"q{{i}}", f"a{{i}}", {{}})
            print("ack", i, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acked = -1
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 300:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    conn = sqlite3.connect(path)
    questions = {row[0] for row in conn.execute("SELECT text FROM messages WHERE role='user'")}
    assert all(f"q{i}" in questions for i in range(acked + 1))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
