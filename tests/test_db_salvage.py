"""A damaged database is salvaged, not rolled back (issue 28, item 2).

Real households' databases built through fayd's own writers (benchmarks/chaos_damage.py),
backed up, written to again, then damaged for real: a page of a table overwritten with
random bytes (found with ``dbstat``), a byte of a reminder's text changed in the file, a
device key changed behind the writer's back. The real start path (open_checked) must keep
every row it can read, take from the backup only what it cannot, and name what is lost."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from benchmarks.chaos_damage import build, damage_page, pages_of, snapshot, unreadable
from fayd.store import checksum, devices_records
from fayd.store.backup import make_backup
from fayd.store.health import find_damage
from fayd.store.migrations import MIGRATIONS, apply_migrations
from fayd.store.recovery import open_checked
from fayd.testing.care import Posts, wait_for
from fayd.testing.harness import DaemonProcess, free_port

from .conftest import needs_mosquitto
from .test_orphans import send_events


@pytest.fixture(scope="module")
def household(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A household (keys, reminders, rules, caregivers, 120+30 memories with vectors,
    events) with a backup taken before its last 2 keys, 3 reminders, 1 rule, 1 caregiver."""
    root = tmp_path_factory.mktemp("household")
    build(root / "fayd.db", root / "backups", memories=120)
    return root


def copy_of(household: Path, tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "fayd.db"
    db.write_bytes((household / "fayd.db").read_bytes())
    return db, household / "backups"


def query(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_damaged_page_of_vectors_loses_no_row(household: Path, tmp_path: Path) -> None:
    db, backups = copy_of(household, tmp_path)
    before = snapshot(db)
    leaves = pages_of(db, "memory_embeddings")
    damage_page(db, leaves[len(leaves) // 2])
    assert find_damage(db) is not None

    store, notices = open_checked(db, backups)
    store.close()
    assert snapshot(db) == before  # every row that matters, as written (vectors apart)
    assert "moved to" in notices[0]
    assert "Everything could be read back" in notices[2]
    assert "device keys: 6 read back" in notices[3] and "memories: 150 read back" in notices[3]
    nodes_without = query(
        db,
        "SELECT count(*) FROM memory_nodes WHERE id NOT IN (SELECT node_id FROM memory_embeddings)",
    )[0][0]
    assert nodes_without < 30  # a damaged leaf's vectors at most, made again by re-embed
    assert query(db, "SELECT count(*) FROM memory_fts")[0][0] == 150  # the index made again
    assert find_damage(db) is None


def test_a_damaged_page_of_reminders_takes_the_backup_for_it_alone(
    household: Path, tmp_path: Path
) -> None:
    db, backups = copy_of(household, tmp_path)
    before = snapshot(db)
    [page] = pages_of(db, "reminders")
    damage_page(db, page)
    lost = unreadable(db, before)
    assert {t for t, _ in lost} == {"reminders"}

    store, notices = open_checked(db, backups)
    store.close()
    after = snapshot(db)
    # The 6 reminders of the backup are back, the 3 written after it are lost: by name.
    assert sorted(k for (k,) in after["reminders"]) == [1, 2, 3, 4, 5, 6]
    text = "\n".join(notices)
    assert "Everything could be read back except 3 reminders" in text
    assert "device keys, care rules and caregivers are all intact" in text
    for n in (7, 8, 9):
        assert f"lost: the reminder no. {n}" in text
    assert notices.summary and "3 reminders" in notices.summary
    # Everything else, written after the backup too, is as it was.
    for table in ("device_keys", "care_rules", "care_caregivers", "memory_nodes"):
        assert after[table] == before[table], table
    # Ids go on from the highest ever given: no new reminder takes a lost one's id.
    assert query(db, "SELECT seq FROM sqlite_sequence WHERE name = 'reminders'") == [(9,)]


def test_a_changed_device_key_is_found_and_taken_from_the_backup(
    household: Path, tmp_path: Path
) -> None:
    db, backups = copy_of(household, tmp_path)
    good = query(db, "SELECT secret FROM device_keys WHERE device = 'dev-0-1'")[0][0]
    conn = sqlite3.connect(db)  # behind the writer's back: the checksum stays as it was
    conn.execute(
        "UPDATE device_keys SET secret = 'f' || substr(secret, 2) WHERE device = 'dev-0-1'"
    )
    conn.commit()
    conn.close()
    assert find_damage(db) is None  # SQLite's own check sees nothing

    store, notices = open_checked(db, backups)
    try:
        assert store.call(devices_records.device_secret, "dev-0-1") == good
    finally:
        store.close()
    assert "the device key 'dev-0-1' failed its checksum" in notices[0]
    assert "taken from the backup" in notices[-1] and "the device key of 'dev-0-1'" in notices[-1]
    assert "device keys: 5 read back, 1 from the backup, 0 lost" in "\n".join(notices)


def test_a_changed_key_not_in_the_backup_never_authenticates(
    household: Path, tmp_path: Path
) -> None:
    db, backups = copy_of(household, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE device_keys SET secret = 'f' || substr(secret, 2) WHERE device = 'dev-1-0'"
    )
    conn.commit()
    conn.close()

    store, notices = open_checked(db, backups)
    try:
        assert store.call(devices_records.device_secret, "dev-1-0") is None
        assert store.call(devices_records.device_secret, "dev-1-1") is not None
    finally:
        store.close()
    text = "\n".join(notices)
    assert (
        "lost: the device key of 'dev-1-0': add the device again (fayd devices add dev-1-0)" in text
    )
    assert "except 1 device key" in text


def test_a_flipped_byte_in_a_reminder_in_the_file_is_found(household: Path, tmp_path: Path) -> None:
    db, backups = copy_of(household, tmp_path)
    data = db.read_bytes()
    written = b"take the blue pill number 0-2 with water"
    assert data.count(written) == 1
    db.write_bytes(data.replace(written, written.replace(b"blue", b"blve")))
    assert find_damage(db) is None

    store, notices = open_checked(db, backups)
    store.close()
    assert "the reminder 3 failed its checksum" in notices[0]
    assert query(db, "SELECT text FROM reminders WHERE id = 3") == [(written.decode(),)]
    assert "reminders: 8 read back, 1 from the backup, 0 lost" in "\n".join(notices)


def test_rows_from_before_the_checksums_are_signed_by_the_migration(tmp_path: Path) -> None:
    db = tmp_path / "fayd.db"
    conn = sqlite3.connect(db, isolation_level=None)
    apply_migrations(sqlite_utils.Database(conn), MIGRATIONS[:12])
    conn.execute("INSERT INTO device_keys VALUES ('hall', 'ab' , 1.0)")
    conn.close()

    store, notices = open_checked(db, tmp_path / "backups")
    store.close()
    assert notices == []
    [(stored,)] = query(db, "SELECT checksum FROM device_keys")
    assert stored == checksum.of_values(["hall", "ab"])


def test_a_sound_database_with_an_unsigned_row_signs_it(household: Path, tmp_path: Path) -> None:
    db, backups = copy_of(household, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE care_caregivers SET checksum = NULL")
    conn.commit()
    conn.close()
    store, notices = open_checked(db, backups)
    store.close()
    assert notices == []
    assert query(db, "SELECT count(*) FROM care_caregivers WHERE checksum IS NULL") == [(0,)]


@needs_mosquitto
def test_fayd_run_on_a_damaged_database_still_admits_a_device_added_after_the_backup(
    tmp_path: Path, posts: Posts
) -> None:
    """The daemon itself: a device added after the last backup still connects once a page of
    another table is damaged (a rollback made it "Not authorized"), and the caregiver is
    told in plain words what was lost."""
    state = tmp_path / "state"
    env = {"FAYD_MQTT_EMBEDDED_PORT": str(free_port())}
    daemon = DaemonProcess(state, env).start()
    try:
        old = daemon.add_device("door-old")["mqtt_password"]
        added = daemon.cli("care", "caregivers", "add", "anna", posts.url("anna"), timeout=60)
        assert added.returncode == 0, added.stderr
        assert asyncio.run(send_events(daemon, "door-old", old, range(5))) == 5
    finally:
        daemon.stop()
    make_backup(state / "fayd.db", state / "backups", 7)
    daemon.start()
    try:
        new = daemon.add_device("door-new")["mqtt_password"]
        assert asyncio.run(send_events(daemon, "door-new", new, range(400))) == 400
    finally:
        daemon.stop()
    leaves = pages_of(state / "fayd.db", "device_events")
    assert len(leaves) > 2
    damage_page(state / "fayd.db", leaves[len(leaves) // 2])

    daemon.start()
    try:
        notices = json.loads(daemon.cli("status", "--json", timeout=60).stdout)["notices"]
        assert any("is damaged" in n for n in notices), notices
        assert any(
            "device keys, reminders, care rules and caregivers are all intact" in n for n in notices
        ), notices
        assert asyncio.run(send_events(daemon, "door-new", new, range(400, 405))) == 5
        wait_for(lambda: posts.to("anna"), 30)
        [told] = posts.to("anna")
        assert told["title"] == "fayd: the database was damaged", told
        assert "device keys, reminders, care rules and caregivers are all intact" in told["message"]
    finally:
        daemon.stop()
