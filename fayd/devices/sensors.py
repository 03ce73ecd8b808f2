"""Sensor events: batched writes (several events per transaction, each acked after its
commit) and, behind them, their observation memories (SPEC §7).

Neither blocks the hub's frame loop: the hub hands an event to :class:`EventWriter` and
moves on; the writer commits whatever has gathered, then acks. :class:`EventMemory` follows
the ``remembered`` flag of ``device_events``, so an event stored just before a restart is
still remembered after it, exactly once (each node is tagged ``device_event:<id>``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from fayd.beat import Pulse
from fayd.memory import Memory, NewNode, normalize_tags
from fayd.memory.errors import BadInput
from fayd.memory.folds import Observed
from fayd.protocol import Ack, Error, Sender, SensorEvent
from fayd.protocol.text import BadText, check_strings
from fayd.store import Store
from fayd.store import devices_records as reg

log = logging.getLogger(__name__)

#: Events committed per transaction at most.
WRITE_BATCH = 512
#: Events waiting for their commit before the hub's loop waits for the writer.
MAX_PENDING = 20_000
#: Events turned into memories per batch (one embedding call, one transaction).
MEMORY_BATCH = 32
#: The memory waits this long after new events to gather a batch (and leave the CPU to
#: the frames while a burst lasts).
MEMORY_GATHER_S = 0.5
#: The writer beats at least this often (fayd.beat.Pulse), also when no event comes.
HEARTBEAT_S = 30.0
#: While the writer has no room, a waiting caller beats this often.
ROOM_BEAT_S = 5.0
#: How long the writer waits for room in the link's outbox for one ack.
ACK_WAIT_S = 5.0
#: Events kept in memory while the disk refuses them (full): over this, the oldest are let
#: go (never acked, so their devices send them again) and summed up in the log.
HELD_MAX = 10_000
#: Retry delays after a failed write: the first, and the longest (doubling between).
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 5.0
#: Importance (1-10) by sensor, without asking the LLM (events can come fast).
#: The sensor name of a device's summary of the events its full buffer let go (its data:
#: events, sensors {name: count}, first_seq, last_seq, first_ts, last_ts; docs/protocol.md).
DROPPED = "dropped"
IMPORTANCE = {
    "panic": 9.0,
    "fall": 9.0,
    "bp": 5.0,
    "wellbeing": 6.0,  # feeling unwell, said to fayd (fayd.service.wellbeing)
    DROPPED: 4.0,
    "temperature": 3.0,
    "door": 2.0,
}
DEFAULT_IMPORTANCE = 2.0
#: An event saying a part cannot be trusted ({"fault": ...}; a fall sensor's is no fall).
FAULT_IMPORTANCE = 4.0
FAY_TIME = "%Y/%m/%d %H:%M:%S"
#: A device clock before this (2020-01-01) or over a day ahead is not trusted.
EARLIEST_TS = 1_577_836_800


class EventWriter:
    def __init__(
        self, store: Store, sender: Sender, on_stored: Callable[[], None] | None = None
    ) -> None:
        self.store = store
        self.sender = sender
        self.on_stored = on_stored
        #: Told of each event once stored, new ones only (not replays); must not block.
        self.on_fresh: Callable[[str, SensorEvent], None] | None = None
        #: Told of each event as it comes, before it is stored (the care engine's urgent
        #: rules: a full disk must not hold a panic press back); must not block.
        self.on_arrival: Callable[[str, SensorEvent], None] | None = None
        self.pending: list[tuple[str, SensorEvent]] = []
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self.pulse = Pulse(HEARTBEAT_S, essential=True)
        self.stored = 0
        self.replays = 0
        self.failures = 0
        self.refused = 0
        self.acks_dropped = 0
        #: Events let go unacked while the disk was full (HELD_MAX); devices resend them.
        self.let_go = 0
        #: Why the last write failed, while writes fail (None once one succeeds).
        self.failing: str | None = None

    @property
    def held(self) -> int:
        """Events waiting for their commit (all of them while the disk refuses writes)."""
        return len(self.pending)

    async def submit(
        self, device: str, event: SensorEvent, beat: Callable[[], None] = lambda: None
    ) -> None:
        """Queue one event; waits only while MAX_PENDING events await their commit,
        calling ``beat`` meanwhile: the caller (the hub) is held back, not hung, and a
        writer that hangs is told by its own pulse."""
        if self.on_arrival is not None:
            self.on_arrival(device, event)
        while not self._room.is_set():
            beat()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(ROOM_BEAT_S):
                    await self._room.wait()
        self.pending.append((device, event))
        self._wake.set()
        if len(self.pending) >= MAX_PENDING:
            self._room.clear()

    async def run(self) -> None:
        retry_s = RETRY_FIRST_S
        while True:
            self.pulse.beat()
            if not await self.pulse.wait(self._wake):
                continue
            batch, self.pending = self.pending[:WRITE_BATCH], self.pending[WRITE_BATCH:]
            try:
                stored = await self.store.run(reg.record_events, batch)
            except Exception as exc:  # the disk: kept and retried, not acked until written
                self._failed(batch, exc)
                await asyncio.sleep(retry_s)
                retry_s = min(RETRY_MAX_S, retry_s * 2)
                continue
            retry_s = RETRY_FIRST_S
            if self.failing is not None:
                log.warning("sensor events are stored again (%d waiting)", len(self.pending))
                self.failing = None
            if not self.pending:
                self._wake.clear()
            if len(self.pending) < MAX_PENDING:
                self._room.set()
            for (device, event), new in zip(batch, stored, strict=True):
                self.pulse.beat()  # an ack may wait ACK_WAIT_S for the link
                if isinstance(new, str):  # this event alone could not be stored
                    await self._refuse(device, event, new)
                else:
                    await self._ack(
                        device, Ack(str(event.seq), detail=None if new else "duplicate")
                    )
                    if new and self.on_fresh is not None:
                        self.on_fresh(device, event)
            fresh = sum(new is True for new in stored)
            self.stored += fresh
            self.replays += sum(new is False for new in stored)
            if fresh and self.on_stored:
                self.on_stored()

    def _failed(self, batch: list[tuple[str, SensorEvent]], exc: Exception) -> None:
        """Put a batch the disk refused back in front, keeping at most HELD_MAX events."""
        self.failures += 1
        self.pending[:0] = batch
        over = len(self.pending) - HELD_MAX
        if over > 0:
            gone, self.pending = self.pending[:over], self.pending[over:]
            self.let_go += over
            devices = sorted({device for device, _ in gone})
            log.warning(
                "%d sensor events over the %d kept while the disk refuses writes let go"
                " unacked (devices %s send them again); %d let go so far",
                over,
                HELD_MAX,
                ", ".join(devices[:5]) + (" …" if len(devices) > 5 else ""),
                self.let_go,
            )
        why = f"{type(exc).__name__}: {exc}"
        if self.failing is None or self.failures % 100 == 0:
            log.error("could not store %d sensor events (kept, retrying): %s", len(batch), why)
        self.failing = why
        if len(self.pending) < MAX_PENDING:
            self._room.set()

    async def _refuse(self, device: str, event: SensorEvent, why: str) -> None:
        """An event the database refused (its data, not the disk): the device is told, with
        the event's seq, and never acked, and the rest of its batch is stored."""
        self.refused += 1
        if self.refused in (1, 10, 100) or self.refused % 1000 == 0:  # a flood is not logged
            log.warning("sensor event %s of %s not stored: %s", event.seq, device, why)
        refusal = Error("malformed", f"event {event.seq} not stored: {why}", str(event.seq))
        await self._ack(device, refusal)

    async def _ack(self, device: str, ack: Ack | Error) -> None:
        """Send, waiting while the link's outbox is full (backpressure: the writer slows
        to what the link can send instead of dropping acks); after ACK_WAIT_S it gives
        up and the device, with no ack, sends the event again."""
        waited = 0.0
        while not self.sender.send(device, ack):
            if waited >= ACK_WAIT_S:
                self.acks_dropped += 1
                return
            await asyncio.sleep(0.005)
            waited += 0.005


class EventMemory:
    """Writes each stored event, once, as an observation of its device's user: an event
    that matters as a memory of its own, a routine one (motion, a door, a bed...) folded
    into one memory per device, sensor and hour (fayd.memory.folds: a node and a vector in
    RAM per event grew the daemon by ~5 KB an event, issue 28)."""

    #: Sensors whose every event is a memory of its own: rare, and each one matters (so is
    #: any event saying a part cannot be trusted).
    OWN_MEMORY = frozenset({"panic", "fall", "bp", "wellbeing", DROPPED})

    def __init__(self, store: Store, memory: Memory, default_user: str) -> None:
        self.store = store
        self.memory = memory
        self.default_user = default_user
        self._wake = asyncio.Event()
        #: Also looks every minute: events written while memory was failing.
        self.pulse = Pulse(60.0)
        self.remembered = 0
        self.skipped = 0

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        self._wake.set()  # catch up on what was stored before a restart
        while True:
            # Not asyncio.wait_for: on 3.11 it swallows a cancel that comes as the wake
            # does, and this task then outlives its stop (the supervisor waits for it).
            self.pulse.beat()
            await self.pulse.wait(self._wake)
            self._wake.clear()
            await asyncio.sleep(MEMORY_GATHER_S)
            try:
                while True:
                    self.pulse.beat()
                    started = time.monotonic()
                    if not await self._one_batch():
                        break
                    # At most half of a core: the frames keep the CPU during a burst.
                    await asyncio.sleep(time.monotonic() - started)
            except Exception as exc:
                log.error("could not remember sensor events (retrying): %s", exc)
                await asyncio.sleep(5.0)
                self._wake.set()

    async def _one_batch(self) -> bool:
        rows = await self.store.run(reg.events_to_remember, MEMORY_BATCH)
        if not rows:
            return False
        nodes, folded, folded_ids, bad = [], [], [], []
        for row in rows:
            try:
                data = self._data(row)
                if row["sensor"] in self.OWN_MEMORY or "fault" in data:
                    nodes.append(self.node(row))
                else:
                    folded.append(self.observed(row, data))
                    folded_ids.append(row["id"])
            except (BadInput, BadText) as exc:  # cannot be a memory; it stays in device_events
                log.warning("sensor event %s not remembered: %s", row["id"], exc)
                bad.append(row["id"])
        if nodes:
            await asyncio.to_thread(self.memory.add, nodes)
        if folded:  # marked in the fold's own transaction: never counted twice
            mark = functools.partial(reg.mark_remembered, ids=folded_ids)
            await asyncio.to_thread(self.memory.fold, folded, mark)
        await self.store.run(reg.mark_remembered, [r["id"] for r in rows])
        self.remembered += len(nodes) + len(folded)
        self.skipped += len(bad)
        return True

    @staticmethod
    def _data(row: dict[str, Any]) -> dict[str, Any]:
        # Stored as JSON with escapes: a row from before fayd refused lone surrogates at the
        # edge may hold one, which no memory write could take (BadText: skipped, not retried).
        return check_strings("data", json.loads(row["data"])) if row["data"] else {}

    def observed(self, row: dict[str, Any], data: dict[str, Any]) -> Observed:
        """A routine event as its fold counts it."""
        at = event_time(row["ts"], row["received_at"])
        moment = datetime.fromtimestamp(at)
        sensor, device = row["sensor"], row["device"]
        name = sensor.strip()[:64] or "unknown"
        what = name
        if sensor == "door" and "open" in data:
            what = "opened" if data["open"] else "closed"
        elif sensor in ("bed", "chair") and "occupied" in data:
            what = "occupied" if data["occupied"] else "empty"
        reading = next((data[k] for k in ("value", "c", "celsius", "temp") if k in data), None)
        numeric = isinstance(reading, int | float) and not isinstance(reading, bool)
        tags = normalize_tags(
            "event",
            device,
            extra_tags=[
                "domain:homecare",
                f"date:{moment:%Y-%m-%d}",
                f"sensor:{tag_value(sensor)}",
            ],
        )
        return Observed(
            source=device,
            kind=tag_value(sensor),
            username=row["user"] or self.default_user,
            label=f"{name.capitalize()} events from {device}",
            what=what,
            text=describe(sensor, data, device, moment),
            at=at,
            value=float(reading) if numeric and math.isfinite(reading) else None,
            importance=IMPORTANCE.get(sensor, DEFAULT_IMPORTANCE),
            tags=tuple(tags),
        )

    def node(self, row: dict[str, Any]) -> NewNode:
        at = event_time(row["ts"], row["received_at"])
        moment = datetime.fromtimestamp(at)
        sensor = tag_value(row["sensor"])
        tags = normalize_tags(
            "event",
            row["device"],
            extra_tags=[
                "domain:homecare",
                f"date:{moment:%Y-%m-%d}",
                f"sensor:{sensor}",
                f"device_event:{row['id']}",
            ],
        )
        data = self._data(row)
        return NewNode(
            content=describe(row["sensor"], data, row["device"], moment),
            username=row["user"] or self.default_user,
            tags=tags,
            importance=FAULT_IMPORTANCE
            if "fault" in data
            else IMPORTANCE.get(row["sensor"], DEFAULT_IMPORTANCE),
            datetime=moment.strftime(FAY_TIME),
        )


def event_time(ts: float | None, received_at: float) -> float:
    """The device's clock when it is plausible, else when fayd received the event."""
    if ts is not None and math.isfinite(ts) and EARLIEST_TS <= ts <= time.time() + 86400:
        return ts
    return received_at


def tag_value(text: str) -> str:
    """A sensor name as one short tag value."""
    return re.sub(r"\s+", "_", text.strip())[:64] or "unknown"


def _dropped(data: dict[str, Any], device: str, moment: datetime) -> str:
    """The firmware's summary of the events its full ring let go (firmware/README.md)."""
    sensors = data.get("sensors")
    counts = _fields(sensors) if isinstance(sensors, dict) and sensors else ""
    times = [
        datetime.fromtimestamp(t)
        for t in (data.get("first_ts"), data.get("last_ts"))
        if isinstance(t, int | float) and event_time(t, 0) == t
    ]
    span = f", made {times[0]:%H:%M}-{times[-1]:%H:%M}" if times else ""
    return (
        f"{device} could not keep {data['events']} events while fayd was out of reach"
        f"{f' ({counts})' if counts else ''}{span}; told at {moment:%H:%M}"
    )


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fields(data: dict[str, Any], limit: int = 300) -> str:
    text = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in data.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(sensor: str, data: dict[str, Any], device: str, moment: datetime) -> str:
    """Readable content, e.g. "Blood pressure 152/96 from bp-cuff-1 at 09:12"."""
    where = f"from {device} at {moment:%H:%M}"
    name = sensor.strip()[:64] or "unknown"
    if isinstance(data.get("fault"), str):  # the firmware's drivers: a part not to be trusted
        return f"{name.capitalize()} sensor fault ({data['fault'][:200]}) {where}"
    if sensor == "bp" and "sys" in data and "dia" in data:
        pulse = f", pulse {_num(data['pulse'])}" if "pulse" in data else ""
        return f"Blood pressure {_num(data['sys'])}/{_num(data['dia'])}{pulse} {where}"
    if sensor == "temperature":
        value = next((data[k] for k in ("value", "c", "celsius", "temp") if k in data), None)
        if value is not None:
            return f"Temperature {_num(value)} °C {where}"
    if sensor == "panic":
        return f"Panic button pressed {where}"
    if sensor == "door" and "open" in data:
        door = f"Door ({data['name']})" if isinstance(data.get("name"), str) else "Door"
        return f"{door} {'opened' if data['open'] else 'closed'} {where}"
    if sensor in ("bed", "chair") and "occupied" in data:
        return f"{sensor.capitalize()} {'occupied' if data['occupied'] else 'empty'} {where}"
    if sensor == "wellbeing" and isinstance(data.get("said"), str):  # fayd.service.wellbeing
        return f"Said feeling unwell ({data.get('symptom')}) on {device} at {moment:%H:%M}: " + (
            f"“{data['said'][:300]}”"
        )
    if sensor == "fall":
        impact = f" (impact {_num(data['impact_g'])} g)" if "impact_g" in data else ""
        return f"Fall detected {where}{impact}"
    if sensor == "motion":
        return f"Motion {where}" + (f" ({_fields(data)})" if data else "")
    if sensor == DROPPED and isinstance(data.get("events"), int):
        return _dropped(data, device, moment)
    return f"Sensor {name} {where}" + (f": {_fields(data)}" if data else "")
