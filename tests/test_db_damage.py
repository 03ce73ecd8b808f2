"""A damaged database is met, not ignored (issue 14, item 5).

Each kind of damage (half truncated, 0 bytes, garbage, damaged pages in the middle of a
real populated database) is moved aside with its path said in the log and by ``fayd
status``. Each of these leaves the file's list of tables unreadable (the "middle" pages
hold a page of ``sqlite_master``), so nothing can be salvaged from it and ``fayd run``
starts from the newest good backup, else fresh (and says so); a damaged page the salvage
can read around is tests/test_db_salvage.py's.
The backup job makes verified backups and prunes the old ones; ``fayd restore`` puts one
back with fayd stopped and refuses while it runs; a kill -9 of the daemon loses no turn it
acknowledged. Real SQLite files made by the real store, and the real daemon."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest

from fayd.config import BackupConfig
from fayd.errors import StoreError
from fayd.store import Store, nightly, records
from fayd.store.backup import list_backups, make_backup
from fayd.store.health import find_damage
from fayd.store.recovery import open_checked
from fayd.store.restore import check_restorable
from fayd.testing.harness import DaemonProcess

from .conftest import needs_mosquitto

KINDS = ("truncated", "zero", "garbage", "middle")


def populate(path: Path, first: int, last: int) -> None:
    """Turns ``first`` … ``last - 1`` through the real store (closed after: all in the file)."""
    store = Store(path)
    conv = store.call(records.conversation_for, "ann", "kitchen")
    for i in range(first, last):
        store.call(records.record_turn, conv, f"question {i} " + "x" * 300, f"answer {i}", {})
    store.close()


def questions(path: Path) -> set[int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT text FROM messages WHERE role = 'user'").fetchall()
    finally:
        conn.close()
    return {int(text.split()[1]) for (text,) in rows}


def damage(path: Path, kind: str) -> bytes:
    """Damage the database file the way ``kind`` says; returns what the file now holds."""
    size = path.stat().st_size
    rng = random.Random(kind)
    if kind == "truncated":
        with path.open("r+b") as f:
            f.truncate(size // 2)
    elif kind == "zero":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(rng.randbytes(size))
    elif kind == "middle":  # 8 pages in the middle of the b-trees, header and schema intact
        pages = size // 4096
        with path.open("r+b") as f:
            f.seek(4096 * (pages // 2))
            f.write(rng.randbytes(4096 * 8))
    return path.read_bytes()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20,000 turns (~10 MB): a backup of it takes several steps, its check some 40 ms."""
    path = tmp_path_factory.mktemp("big") / "fayd.db"
    populate(path, 0, 20_000)
    return path


def damaged_copies(state: Path) -> list[Path]:
    return [p for p in state.glob("fayd.db.damaged-*") if not p.name.endswith(("-wal", "-shm"))]


# --- the start-up check and what it does (the store alone) --------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_file_is_found_moved_aside_and_fayd_starts_fresh(tmp_path: Path, kind) -> None:
    db = tmp_path / "fayd.db"
    populate(db, 0, 300)
    held = damage(db, kind)
    assert find_damage(db) is not None

    store, notices = open_checked(db, tmp_path / "backups")
    try:
        assert store.call(lambda d: d.execute("SELECT count(*) FROM messages").fetchone()[0]) == 0
    finally:
        store.close()
    [copy] = damaged_copies(tmp_path)
    assert digest(copy.read_bytes()) == digest(held)  # kept exactly as it was found
    assert str(copy) in notices[0] and "damaged" in notices[0]
    assert "no good backup" in notices[1] and "empty database" in notices[1]


def test_the_newest_good_backup_is_taken_and_a_damaged_one_passed_over(tmp_path: Path) -> None:
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    populate(db, 0, 50)
    make_backup(db, backups, 7, date(2025, 1, 1))
    populate(db, 50, 100)
    make_backup(db, backups, 7, date(2025, 1, 2))
    populate(db, 100, 150)
    make_backup(db, backups, 7, date(2025, 1, 3))
    damage(backups / "fayd-20250103.db", "middle")
    damage(db, "truncated")

    store, notices = open_checked(db, backups)
    store.close()
    assert questions(db) == set(range(100))  # the 2nd of January's
    assert "fayd-20250102.db" in notices[1] and "last good backup" in notices[1]
    assert (backups / "fayd-20250103.db").exists()  # passed over, not removed


def test_a_sound_database_and_a_new_install_start_silently(tmp_path: Path) -> None:
    db = tmp_path / "fayd.db"
    store, notices = open_checked(db, tmp_path / "backups")  # a new installation
    store.close()
    assert notices == []
    populate(db, 0, 20)
    store, notices = open_checked(db, tmp_path / "backups")
    store.close()
    assert notices == [] and questions(db) == set(range(20))
    assert damaged_copies(tmp_path) == []


def test_no_database_beside_backups_is_said(tmp_path: Path) -> None:
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    populate(db, 0, 20)
    make_backup(db, backups, 7, date(2025, 1, 1))
    db.unlink()
    store, notices = open_checked(db, backups)
    store.close()
    assert "no database" in notices[0] and "fayd restore" in notices[0]


def test_a_check_past_its_time_budget_is_skipped_with_a_warning(big_db: Path, caplog) -> None:
    """A huge database on a slow card still starts: the check is given up, and said."""
    assert find_damage(big_db, budget_s=0) is None
    assert "did not finish within 0 s: it was skipped" in caplog.text
    caplog.clear()
    assert find_damage(big_db) is None
    assert "did not finish" not in caplog.text


# --- backups ------------------------------------------------------------------------------


def test_a_backup_is_verified_self_contained_and_prunes_the_oldest(tmp_path: Path) -> None:
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    populate(db, 0, 40)
    for day in ("20200101", "20200102", "20200103"):
        make_backup(db, backups, 7, datetime.strptime(day, "%Y%m%d").date())
    report = make_backup(db, backups, 2, date(2025, 1, 1))
    assert report["verified"] and report["path"].endswith("fayd-20250101.db")
    kept = [b.path.name for b in list_backups(backups)]
    assert kept == ["fayd-20250101.db", "fayd-20200103.db"]
    assert sorted(Path(p).name for p in report["pruned"]) == [
        "fayd-20200101.db",
        "fayd-20200102.db",
    ]
    assert sorted(p.name for p in backups.iterdir()) == sorted(kept)  # no WAL, no leftovers
    assert find_damage(backups / "fayd-20250101.db") is None
    assert questions(backups / "fayd-20250101.db") == set(range(40))
    assert not Path(f"{db}-wal").exists()  # a stopped fayd's folder is left as it was


def test_a_backup_of_a_damaged_database_fails_and_keeps_the_old_ones(tmp_path: Path) -> None:
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    populate(db, 0, 300)
    make_backup(db, backups, 1, date(2025, 1, 1))
    before = digest((backups / "fayd-20250101.db").read_bytes())
    damage(db, "middle")
    with pytest.raises(StoreError):
        make_backup(db, backups, 1, date(2025, 1, 2))
    assert [p.name for p in backups.iterdir()] == ["fayd-20250101.db"]
    assert digest((backups / "fayd-20250101.db").read_bytes()) == before


def test_a_backup_completes_while_the_store_keeps_writing(tmp_path: Path, big_db: Path) -> None:
    """One read snapshot for every step: steps that each took a fresh look started over
    at every write and never finished on a busy database."""
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    shutil.copy(big_db, db)
    store = Store(db)
    conv = store.call(records.conversation_for, "ann", "kitchen")
    writing, written = threading.Event(), []

    def writer() -> None:
        i = 20_000
        while not writing.is_set():
            store.call(records.record_turn, conv, f"question {i}", f"answer {i}", {})
            written.append(i)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 10:  # the writer is under way
            time.sleep(0.01)
        done: list[dict] = []
        backup = threading.Thread(
            target=lambda: done.append(make_backup(db, backups, 7, date(2025, 1, 1)))
        )
        backup.start()
        backup.join(120)  # a hang guard only: it takes about a second
        assert done, "the backup did not finish while the store was writing"
    finally:
        writing.set()
        thread.join(10)
        store.close()
    saved = questions(Path(done[0]["path"]))
    assert set(range(20_010)) <= saved <= set(range(20_000 + len(written)))


def test_the_schedule_is_the_configured_local_time() -> None:
    now = datetime(2025, 3, 10, 12, 0, tzinfo=UTC).timestamp()
    assert (
        nightly.latest_slot("03:30", UTC, now)
        == datetime(2025, 3, 10, 3, 30, tzinfo=UTC).timestamp()
    )
    assert (
        nightly.next_slot("03:30", UTC, now) == datetime(2025, 3, 11, 3, 30, tzinfo=UTC).timestamp()
    )
    early = datetime(2025, 3, 10, 2, 0, tzinfo=UTC).timestamp()
    assert (
        nightly.latest_slot("03:30", UTC, early)
        == datetime(2025, 3, 9, 3, 30, tzinfo=UTC).timestamp()
    )


def test_the_nightly_job_makes_up_a_missed_night_then_waits_for_the_next(
    tmp_path: Path, monkeypatch
) -> None:
    db, backups = tmp_path / "fayd.db", tmp_path / "backups"
    populate(db, 0, 30)
    for day in ("20200101", "20200102"):
        made = make_backup(db, backups, 7, datetime.strptime(day, "%Y%m%d").date())
        stamp = datetime.strptime(day + "0330", "%Y%m%d%H%M").timestamp()
        os.utime(made["path"], (stamp, stamp))  # made on that night
    monkeypatch.setattr(nightly, "CATCH_UP_S", 0.0)  # made up at once, not a minute after
    job = nightly.NightlyBackup(db, backups, BackupConfig(keep_days=2), UTC)

    async def scenario() -> None:
        task = asyncio.create_task(job.run())
        try:
            for _ in range(1200):  # a bound only: it takes well under a second
                if job.last:
                    break
                await asyncio.sleep(0.05)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    today = datetime.now(UTC).strftime("%Y%m%d")
    assert job.last["ok"], job.last
    assert [b.path.name for b in list_backups(backups)] == [f"fayd-{today}.db", "fayd-20200102.db"]
    assert job.next_at == nightly.next_slot("03:30", UTC, time.time())
    assert job.status()["count"] == 2


def test_restore_refuses_a_damaged_or_foreign_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 50)
    with pytest.raises(StoreError, match="damaged"):
        check_restorable(junk)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not fayd's"):
        check_restorable(other)


# --- the real daemon and the fayd command -------------------------------------------------


@contextmanager
def running(state: Path, env: dict[str, str] | None = None) -> Iterator[DaemonProcess]:
    daemon = DaemonProcess(state, env).start()
    try:
        yield daemon
    finally:
        daemon.stop()


def status_json(daemon: DaemonProcess) -> dict:
    done = daemon.cli("status", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_mosquitto
@pytest.mark.parametrize("kind", KINDS)
def test_fayd_run_starts_from_the_latest_backup(tmp_path: Path, kind) -> None:
    state = tmp_path / "state"
    state.mkdir()
    db = state / "fayd.db"
    populate(db, 0, 100)
    make_backup(db, state / "backups", 7, date(2025, 1, 1))
    populate(db, 100, 200)
    make_backup(db, state / "backups", 7, date(2025, 1, 2))
    populate(db, 200, 300)  # after the last backup: lost with the damaged file
    held = damage(db, kind)

    with running(state) as daemon:
        notices = status_json(daemon)["notices"]
        [copy] = damaged_copies(state)
        assert any(str(copy) in n and "damaged" in n for n in notices), notices
        assert any("fayd-20250102.db" in n and "last good backup" in n for n in notices)
        assert str(copy) in daemon.log_text()
    assert digest(copy.read_bytes()) == digest(held)
    assert questions(db) == set(range(200))


@needs_mosquitto
def test_fayd_run_on_a_0_byte_database_without_backups_says_it_starts_empty(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "fayd.db").write_bytes(b"")
    with running(state) as daemon:
        shown = daemon.cli("status", timeout=60).stdout
        [copy] = damaged_copies(state)
        assert f"note: the database {state / 'fayd.db'} is damaged (empty: 0 bytes)" in shown
        assert str(copy) in shown
        assert "fayd starts with an empty database" in shown


def test_backup_and_restore_round_trip_with_fayd_stopped(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    db = state / "fayd.db"
    populate(db, 0, 50)
    cli = DaemonProcess(state).cli  # the fayd command on this state folder; no daemon

    made = cli("backup", "--json", timeout=60)
    assert made.returncode == 0, made.stderr
    name = Path(json.loads(made.stdout)["path"]).name
    populate(db, 50, 80)

    listed = cli("restore", timeout=60)
    assert listed.returncode == 0 and f"  {name}  made " in listed.stdout, listed
    done = cli("restore", name, timeout=60)
    assert done.returncode == 0, done.stderr
    assert questions(db) == set(range(50))
    [replaced] = state.glob("fayd.db.before-restore-*")
    assert str(replaced) in done.stdout
    assert questions(replaced) == set(range(80))  # moved aside, never deleted

    wrong = cli("restore", "fayd-19990101.db", timeout=60)
    assert wrong.returncode == 1 and name in wrong.stderr  # the line lists the backups


@needs_mosquitto
def test_while_fayd_runs_backup_goes_through_it_and_restore_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    populate(state / "fayd.db", 0, 40)
    for day in ("20200101", "20200102", "20200103"):
        make_backup(
            state / "fayd.db", state / "backups", 7, datetime.strptime(day, "%Y%m%d").date()
        )

    with running(state, {"FAYD_BACKUP_KEEP_DAYS": "2"}) as daemon:
        made = daemon.cli("backup", timeout=120)
        assert made.returncode == 0, made.stderr
        assert "backed up to" in made.stdout and "checked" in made.stdout
        assert made.stdout.count("removed the old backup") == 2
        names = [b.path.name for b in list_backups(state / "backups")]
        assert len(names) == 2 and names[1] == "fayd-20200103.db"
        assert f"backup: newest {state / 'backups' / names[0]}" in daemon.cli("status").stdout

        before = digest((state / "fayd.db").read_bytes())
        refused = daemon.cli("restore", "fayd-20200103.db", timeout=60)
        assert refused.returncode == 1
        assert f"fayd is running (pid {daemon.proc.pid})" in refused.stderr
        assert digest((state / "fayd.db").read_bytes()) == before
        assert list(state.glob("fayd.db.before-restore-*")) == []


def test_kill_9_of_the_daemon_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    """A turn is acknowledged when ``POST /api/say`` answers; the daemon is killed -9
    mid-stream (no broker: a kill leaves no child behind) and every acknowledged turn is
    in the database, which is sound."""
    state = tmp_path / "state"
    env = {"FAYD_MQTT_URL": "mqtt://127.0.0.1:9", "FAYD_SERIAL_ENABLED": "false"}
    daemon = DaemonProcess(state, env).start()
    acked: list[int] = []
    try:
        for i in range(1000):
            answer = daemon.api(
                "POST", "/api/say", json={"text": f"what time is it, number {i}"}, timeout=60
            )
            assert answer.status_code == 200, answer.text
            acked.append(i)
            if i == 15:  # the kill lands while turns are being written
                threading.Timer(0.05, daemon.proc.send_signal, [signal.SIGKILL]).start()
    except httpx.TransportError:
        pass
    finally:
        daemon.proc.wait(30)
    assert daemon.proc.returncode == -signal.SIGKILL
    assert len(acked) >= 16
    conn = sqlite3.connect(state / "fayd.db")
    stored = {t for (t,) in conn.execute("SELECT text FROM messages WHERE role = 'user'")}
    assert {f"what time is it, number {i}" for i in acked} <= stored
    assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    conn.close()
