"""Memory stays bounded by the events stored (issue 28): routine sensor events are folded into
one memory per device, sensor and hour, so the in-RAM search index holds as many rows after
600 events as after 60; events that matter keep a memory each. Real SQLite, the real MiniLM
embedder, the real EventMemory."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from fayd.devices.sensors import EventMemory
from fayd.memory import Memory
from fayd.memory.folds import Folds, Observed
from fayd.protocol import SensorEvent
from fayd.store import Store
from fayd.store import devices_records as reg

pytestmark = pytest.mark.models
USER = "ann"
#: Yesterday 09:00: every event below falls in that one hour (10 s apart, 360 at most).
HOUR = (datetime.now() - timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
DEVICES = {"pir-1": "motion", "hall-1": "door", "bed-1": "bed"}


@pytest.fixture
def store(tmp_path: Path):
    store = Store(tmp_path / "fayd.db")
    yield store
    store.close()


@pytest.fixture
def memory(store: Store, embedder) -> Memory:
    return Memory(store, embedder)


def data_of(sensor: str, seq: int) -> dict:
    if sensor == "door":
        return {"open": seq % 2 == 1, "name": "front"}
    if sensor == "bed":
        return {"occupied": seq % 2 == 1}
    return {}


def store_events(store: Store, first_seq: int, count: int) -> None:
    """``count`` routine events from each device, 10 s apart, within HOUR."""
    events = []
    for seq in range(first_seq, first_seq + count):
        at = HOUR.timestamp() + (seq % 360) * 10
        for device, sensor in DEVICES.items():
            events.append((device, SensorEvent(seq, sensor, ts=at, data=data_of(sensor, seq))))
    assert all(s is True for s in store.call(reg.record_events, events))


async def remember_all(rememberer: EventMemory) -> None:
    while await rememberer._one_batch():
        pass


def count(store: Store, sql: str) -> int:
    return store.call(lambda db: db.execute(sql).fetchone()[0])


async def test_the_index_holds_as_many_rows_after_600_events_as_after_60(
    store: Store, memory: Memory
) -> None:
    rememberer = EventMemory(store, memory, USER)
    store_events(store, 1, 20)  # 60 events
    await remember_all(rememberer)
    index = memory._indexes[USER]
    after_60 = (index.n, len(index.tag_rows), len(memory.folds))
    assert after_60[0] == len(DEVICES)  # one row a device and sensor, not one an event

    store_events(store, 21, 180)  # 540 more, same hour
    await remember_all(rememberer)
    assert (index.n, len(index.tag_rows), len(memory.folds)) == after_60
    assert count(store, "SELECT count(*) FROM memory_nodes") == len(DEVICES)
    assert count(store, "SELECT count(*) FROM device_events WHERE remembered = 0") == 0
    assert rememberer.remembered == 600

    [door] = memory.get_recent(USER, filter_tags_all=["sensor:door"])
    assert door["content"].startswith(f"Door events from hall-1 on {HOUR:%Y-%m-%d}, 09:00-09:59:")
    assert "200 (opened 100, closed 100)" in door["content"]
    assert "Last: Door (front) closed from hall-1 at 09:33" in door["content"]
    assert "fold:hall-1/door/" + f"{HOUR:%Y-%m-%dT%H}" in door["tags"]
    # Its vector follows its rewritten content: the search finds the door for a door question.
    [best] = memory.search("when was the front door opened?", USER, n=1)
    assert best["node_id"] == door["node_id"]


async def test_events_that_matter_keep_a_memory_each(store: Store, memory: Memory) -> None:
    now = time.time()
    events = [
        ("pendant", SensorEvent(1, "panic", ts=now, data={})),
        ("pendant", SensorEvent(2, "fall", ts=now, data={"impact_g": 3.1})),
        ("cuff", SensorEvent(1, "bp", ts=now, data={"sys": 152, "dia": 96})),
        ("cuff", SensorEvent(2, "bp", ts=now, data={"sys": 131, "dia": 84})),
        ("hall-1", SensorEvent(1, "door", ts=now, data={"fault": "reed switch stuck"})),
        ("hall-1", SensorEvent(2, "door", ts=now, data={"open": True})),
    ]
    store.call(reg.record_events, events)
    await remember_all(EventMemory(store, memory, USER))
    nodes = memory.get_recent(USER, n=20)
    alone = [n for n in nodes if any(t.startswith("device_event:") for t in n["tags"])]
    assert len(alone) == 5 and len(nodes) == 6  # the door's opening alone is folded
    said = " | ".join(n["content"] for n in alone)
    for words in ("Panic button pressed", "Fall detected", "152/96", "131/84", "reed switch"):
        assert words in said
    [best] = memory.search("blood pressure 152", USER, n=1)
    assert "152/96" in best["content"]


async def test_a_restart_starts_a_second_fold_and_counts_no_event_twice(
    store: Store, embedder
) -> None:
    store_events(store, 1, 10)
    await remember_all(EventMemory(store, Memory(store, embedder), USER))
    # A new daemon: the open folds' totals are gone, the events already folded are marked.
    memory = Memory(store, embedder)
    store_events(store, 11, 10)
    await remember_all(EventMemory(store, memory, USER))
    doors = memory.get_recent(USER, filter_tags_all=["sensor:door"])
    assert sorted(d["content"].split(": ")[1].split(" (")[0] for d in doors) == ["10", "10"]
    assert count(store, "SELECT count(*) FROM memory_nodes") == 2 * len(DEVICES)


async def test_a_failed_fold_write_changes_nothing(store: Store, memory: Memory) -> None:
    store_events(store, 1, 5)
    rows = store.call(reg.events_to_remember, 100)
    rememberer = EventMemory(store, memory, USER)
    folded = [rememberer.observed(r, rememberer._data(r)) for r in rows]

    def fails(db) -> None:
        raise RuntimeError("the disk went")

    with pytest.raises(RuntimeError):
        memory.fold(folded, fails)
    assert count(store, "SELECT count(*) FROM memory_nodes") == 0
    assert len(memory.folds) == 0 and memory._indexes[USER].n == 0
    await remember_all(rememberer)  # the retry counts each event once
    [door] = memory.get_recent(USER, filter_tags_all=["sensor:door"])
    assert ": 5 (" in door["content"]


def test_the_open_folds_are_bounded_by_count() -> None:
    folds = Folds(max_open=4)
    for hour in range(10):
        event = Observed(
            "hall-1", "door", USER, "Door events from hall-1", "opened", "Door opened",
            HOUR.timestamp() + hour * 3600,
        )  # fmt: skip
        folds.committed(folds.changes([event]))
    assert len(folds) == 4
