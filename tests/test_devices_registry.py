"""The device registry on a real SQLite file: settings, the listing, batched event writes,
sensor events as memory nodes, and ``fayd devices`` without the daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from fayd.auth import mqtt_password
from fayd.devices.sensors import EventMemory, describe, event_time
from fayd.protocol import Hello, SensorEvent
from fayd.store import Store, records
from fayd.store import devices_records as reg


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "fayd.db")
    yield s
    s.close()


@pytest.mark.parametrize(
    ("pair", "expected"),
    [
        ("user=ann", ("user", "ann")),
        ("wake=on", ("wake", True)),
        ("wake=OFF", ("wake", False)),
        ("wake-threshold=0.4", ("wake_threshold", 0.4)),
        ("volume=70", ("volume", 70)),
        ("barge_in=no", ("barge_in", False)),
        ("user=", ("user", None)),
        ("language=ZH", ("language", "zh")),
        ("language=auto", ("language", "auto")),
        ("language=", ("language", None)),
        ("pause_ms=2500", ("pause_ms", 2500)),
        ("pause-ms=", ("pause_ms", None)),
    ],
)
def test_parse_setting(pair: str, expected: tuple) -> None:
    assert reg.parse_setting(pair) == expected


@pytest.mark.parametrize(
    "pair",
    [
        "volume=101",
        "volume=loud",
        "wake=maybe",
        "wake_threshold=2",
        "colour=red",
        "user",
        "pause_ms=99999999999999999999",
        "pause_ms=-1",
        "pause_ms=1.5",
    ],
)
def test_bad_settings_are_refused(pair: str) -> None:
    with pytest.raises(reg.BadSetting):
        reg.parse_setting(pair)


@pytest.mark.parametrize("value", ["fr", "中文", "\ud800", "x" * 10000, "en,zh"])
def test_a_language_other_than_en_zh_auto_is_refused(value: str) -> None:
    with pytest.raises(reg.BadSetting, match="language must be en, zh or auto") as caught:
        reg.parse_setting(f"language={value}")
    assert len(str(caught.value)) < 200  # a 10k-character value is not repeated whole


def test_a_devices_language_is_stored_and_listed(store: Store) -> None:
    rev0, _ = store.call(reg.settings_since, 0)
    store.call(reg.set_settings, "k2", dict([reg.parse_setting("language=zh")]))
    _, changed = store.call(reg.settings_since, rev0)
    assert changed == {"k2": reg.DeviceSettings(language="zh")}
    assert {r["id"]: r for r in store.call(reg.registry)}["k2"]["settings"] == {"language": "zh"}
    store.call(reg.set_settings, "k2", {"language": None})
    assert store.call(reg.settings_since, 0)[1]["k2"] == reg.DeviceSettings()


def test_settings_persist_and_report_changes_by_revision(store: Store) -> None:
    rev0, _ = store.call(reg.settings_since, 0)
    store.call(reg.set_settings, "k1", {"user": "ann", "volume": 40})
    rev1, changed = store.call(reg.settings_since, rev0)
    assert changed == {"k1": reg.DeviceSettings(user="ann", volume=40)}
    assert store.call(reg.settings_since, rev1) == (rev1, {})
    store.call(reg.set_settings, "k1", {"volume": None, "wake": True})
    _, changed = store.call(reg.settings_since, rev1)
    assert changed["k1"] == reg.DeviceSettings(user="ann", wake=True)


def test_registry_lists_seen_and_configured_devices(store: Store) -> None:
    store.call(records.upsert_device, Hello("seen-1", ("mic",), user="bob"))
    store.call(records.set_presence, "seen-1", False)
    store.call(reg.set_settings, "later-1", {"volume": 10})
    store.call(reg.set_settings, "seen-1", {"user": "carol"})
    rows = {r["id"]: r for r in store.call(reg.registry)}
    assert rows["seen-1"]["user"] == "carol" and rows["seen-1"]["hello_user"] == "bob"
    assert rows["seen-1"]["online"] is False and rows["seen-1"]["last_seen"] > 0
    assert rows["later-1"]["last_seen"] is None and rows["later-1"]["settings"] == {"volume": 10}


def test_a_batch_stores_each_event_once(store: Store) -> None:
    e = SensorEvent(seq=1, sensor="door", data={"open": True})
    batch = [("d1", e), ("d1", e), ("d2", e), ("d1", SensorEvent(seq=2, sensor="door"))]
    assert store.call(reg.record_events, batch) == [True, False, True, True]
    assert store.call(reg.record_events, batch[:1]) == [False]


def test_content_is_readable() -> None:
    at = datetime(2025, 3, 4, 9, 12)
    assert describe("bp", {"sys": 152, "dia": 96}, "bp-cuff-1", at) == (
        "Blood pressure 152/96 from bp-cuff-1 at 09:12"
    )
    assert describe("panic", {}, "btn", at) == "Panic button pressed from btn at 09:12"
    assert describe("door", {"open": False}, "d", at) == "Door closed from d at 09:12"
    # The firmware's drivers (docs/protocol.md, "Sensor events").
    assert describe("door", {"open": True, "name": "front"}, "d", at) == (
        "Door (front) opened from d at 09:12"
    )
    assert describe("fall", {"impact_g": 3.6, "free_fall_ms": 440}, "p", at) == (
        "Fall detected from p at 09:12 (impact 3.6 g)"
    )
    assert describe("chair", {"occupied": True, "level": 75}, "c", at) == (
        "Chair occupied from c at 09:12"
    )
    assert describe("temperature", {"value": -3.25}, "t", at) == (
        "Temperature -3.25 °C from t at 09:12"
    )
    assert describe("temperature", {"fault": "crc"}, "t", at) == (
        "Temperature sensor fault (crc) from t at 09:12"
    )
    weird = describe("x\ny", {"k": "v" * 1000}, "d", at)
    assert weird.startswith("Sensor x\ny from d at 09:12: k ") and len(weird) < 400
    assert event_time(float("inf"), 5.0) == 5.0 and event_time(10.0, 5.0) == 5.0
    first, last = datetime(2025, 3, 4, 5, 1).timestamp(), datetime(2025, 3, 4, 8, 59).timestamp()
    summary = {"events": 37, "sensors": {"motion": 30, "door": 7}, "first_seq": 5}
    assert describe("dropped", summary | {"first_ts": first, "last_ts": last}, "s-1", at) == (
        "s-1 could not keep 37 events while fayd was out of reach (motion 30, door 7),"
        " made 05:01-08:59; told at 09:12"
    )
    assert (
        describe("dropped", {"events": "x"}, "s-1", at)
        == 'Sensor dropped from s-1 at 09:12: events "x"'
    )


class FakeMemory:
    """Records the batches (the real Memory is exercised end to end in test_devices_e2e,
    folds in test_memory_bound); ``fold`` runs its ``also`` as the real one does."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store
        self.batches: list[list] = []
        self.folded: list = []

    def add(self, nodes: list) -> list:
        self.batches.append(nodes)
        return []

    def fold(self, events: list, also) -> None:
        self.folded.extend(events)
        assert self.store is not None
        self.store.call(also)


async def test_events_become_tagged_nodes_once(store: Store) -> None:
    store.call(reg.set_settings, "cuff", {"user": "ann"})
    events = [
        ("cuff", SensorEvent(seq=i, sensor="bp", data={"sys": 150, "dia": 90})) for i in range(3)
    ]
    events.append(("cuff", SensorEvent(seq=9, sensor="bed time", ts=1e300)))
    store.call(reg.record_events, events)
    memory = FakeMemory(store)
    rememberer = EventMemory(store, memory, "household")  # type: ignore[arg-type]
    while await rememberer._one_batch():
        pass
    [nodes] = memory.batches
    assert [n.username for n in nodes] == ["ann"] * 3
    first = nodes[0]
    assert first.content.startswith("Blood pressure 150/90 from cuff at ")
    date = datetime.now().strftime("%Y-%m-%d")
    for tag in ("domain:homecare", "kind:event", "source:cuff", "sensor:bp", f"date:{date}"):
        assert tag in first.tags
    [last] = memory.folded  # a routine sensor: folded into its hour (fayd.memory.folds)
    assert last.username == "ann" and "sensor:bed_time" in last.tags
    assert not await rememberer._one_batch()  # marked: nothing is remembered twice


async def test_a_fall_matters_and_a_fall_sensors_fault_less(store: Store) -> None:
    events = [
        ("pendant", SensorEvent(seq=1, sensor="fall", data={"impact_g": 3.6})),
        ("pendant", SensorEvent(seq=2, sensor="fall", data={"fault": "no accelerometer"})),
    ]
    store.call(reg.record_events, events)
    memory = FakeMemory()
    rememberer = EventMemory(store, memory, "household")  # type: ignore[arg-type]
    await rememberer._one_batch()
    [[fall, fault]] = memory.batches
    assert fall.importance == 9.0 and fall.content.startswith("Fall detected from pendant")
    assert fault.importance == 4.0
    assert fault.content.startswith("Fall sensor fault (no accelerometer) from pendant")


def devices_cli(state: Path):
    """``fayd devices …`` on the state folder ``state``, without a daemon."""
    env = {"FAYD_PATHS_STATE_DIR": str(state), "PATH": "/usr/bin:/bin"}

    def fayd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fayd", "devices", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return fayd


def test_cli_set_and_list_without_the_daemon(tmp_path: Path) -> None:
    fayd = devices_cli(tmp_path)

    typo = fayd("set", "kitchen-1", "volume=70")  # not added yet: no phantom device
    assert typo.returncode == 1 and "no device 'kitchen-1' (known: none yet)" in typo.stderr
    assert fayd("add", "kitchen-1").returncode == 0
    done = fayd(
        "set", "kitchen-1", "user=ann", "volume=70", "wake=on", "barge_in=off", "language=zh"
    )
    assert done.returncode == 0, done.stderr
    assert "user=ann wake=on volume=70 barge_in=off language=zh" in done.stdout
    bad = fayd("set", "kitchen-1", "volume=300")
    assert bad.returncode == 1 and "volume must be 0-100" in bad.stderr
    bad = fayd("set", "kitchen-1", "language=chinese")
    assert bad.returncode == 1 and "language must be en, zh or auto" in bad.stderr
    assert fayd("set", "not/an/id", "volume=3").returncode == 1
    listed = fayd("list")
    assert listed.returncode == 0 and "kitchen-1" in listed.stdout and "never" in listed.stdout
    [row] = json.loads(fayd("list", "--json").stdout)
    assert row["user"] == "ann" and row["settings"]["volume"] == 70


def test_keys_add_list_remove_without_the_daemon(tmp_path: Path) -> None:
    fayd = devices_cli(tmp_path)

    added = fayd("add", "porch-1")
    assert added.returncode == 0, added.stderr
    assert "porch-1: added." in added.stdout and "fayd is not running" in added.stdout
    first = json.loads(fayd("add", "porch-1", "--json").stdout)
    assert first["new"] is False and len(first["key"]) == 64 and first["key"] in added.stdout
    assert first["mqtt_password"] == mqtt_password(first["key"]) != first["key"]
    rotated = json.loads(fayd("add", "porch-1", "--new-key", "--json").stdout)
    assert rotated["new"] and rotated["key"] != first["key"]
    listed = fayd("list")
    assert "porch-1" in listed.stdout and " yes " in listed.stdout
    removed = fayd("remove", "porch-1")
    assert removed.returncode == 0 and "porch-1: removed" in removed.stdout
    assert fayd("list", "--json").stdout.strip() == "[]"
    again = fayd("remove", "porch-1")
    assert again.returncode == 1 and "no device 'porch-1'" in again.stderr
    assert fayd("add", "fayd").returncode == 1


def test_events_stored_before_epochs_keep_their_identity(tmp_path: Path) -> None:
    """An install from before device keys: its events become epoch '' and a replay of one
    of them is still a replay after the upgrade; a seen device shows it has no key."""
    import sqlite_utils

    from fayd.store.migrations import MIGRATIONS, apply_migrations

    path = tmp_path / "old.db"
    old = sqlite_utils.Database(path)
    apply_migrations(old, MIGRATIONS[:7])
    old.execute(
        "INSERT INTO device_events (device, seq, sensor, data, received_at, remembered)"
        " VALUES ('cuff-1', 7, 'bp', '{}', 0, 1)"
    )
    old.conn.commit()
    old.close()
    store = Store(path)  # applies the rest
    try:
        store.call(records.upsert_device, Hello("cuff-1", ("sensor",)))
        replay = SensorEvent(seq=7, sensor="bp")
        assert store.call(reg.record_events, [("cuff-1", replay)]) == [False]
        [row] = store.call(reg.registry)
        assert row["id"] == "cuff-1" and row["key"] is False
    finally:
        store.close()


def test_a_devices_longest_pause_is_stored_and_listed(store: Store) -> None:
    rev0, _ = store.call(reg.settings_since, 0)
    store.call(reg.set_settings, "k3", dict([reg.parse_setting("pause_ms=3000")]))
    _, changed = store.call(reg.settings_since, rev0)
    assert changed == {"k3": reg.DeviceSettings(pause_ms=3000)}
    assert {r["id"]: r for r in store.call(reg.registry)}["k3"]["settings"] == {"pause_ms": 3000}
