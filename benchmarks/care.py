"""Care rules over a simulated week of a two-person household (issue 16).

    .venv/bin/python benchmarks/care.py [--days 7] [--seed 1]

Mum and dad live together; their devices send what such a home sends: motion in the rooms
they use from about 07:00 to 22:00 (every 5-40 minutes), mum's blood pressure each morning
(07:30-08:30) and her cuff's battery every hour, dad's heart rate every hour, the front door
in the day. The real care engine (fayd.care) runs on a real SQLite store on an injectable
clock, a step every simulated minute and after each stored event (as the daemon wakes it);
its notifications go through Apprise to a real HTTP server on loopback (json://), and each
alert is acknowledged by the first caregiver five minutes after it was told.

Scripted incidents, each with the moment its condition becomes true and the rules that may
report it: a medication not confirmed, dad's fall, mum's door at night, a quiet morning
(nobody in the kitchen, no movement at all until 11:30), the blood-pressure cuff going
silent (and so no reading the next morning), a high blood pressure. An alert that matches no
incident is a false alert. ``detect_delay_s`` is simulated time from the condition to the
step that opened the alert. ``events_per_s`` is wall-clock throughput of the engine reading
and evaluating stored events (all rules), measured on a burst of 20,000 motion events.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fayd.care import admin
from fayd.care import records as rec
from fayd.testing.care import DAY_ONE, Clock, Household, Posts, at, engine


@dataclass
class Incident:
    name: str
    starts: float  # the condition becomes true
    rules: tuple[str, ...]
    until: float  # alerts of these rules before this belong to it


RULES: list[dict[str, Any]] = [
    {"name": "bp-high", "user": "mum", "kind": "threshold",
     "spec": {"sensor": "bp", "above": {"sys": 150, "dia": 95}, "hysteresis": 5}},
    {"name": "bp-by-9", "user": "mum", "kind": "missing", "spec": {"sensor": "bp", "by": "09:00"}},
    {"name": "kitchen-by-10", "user": "mum", "kind": "missing",
     "spec": {"sensor": "motion", "device": "kitchen-1", "by": "10:00"}},
    {"name": "mum-still", "user": "mum", "kind": "inactivity",
     "spec": {"minutes": 180, "between": ["08:00", "22:00"]}},
    {"name": "dad-still", "user": "dad", "kind": "inactivity",
     "spec": {"minutes": 180, "between": ["08:00", "22:00"]}},
    {"name": "mum-panic", "user": "mum", "kind": "event", "spec": {"sensor": "panic"}},
    {"name": "dad-fall", "user": "dad", "kind": "event", "spec": {"sensor": "fall"}},
    {"name": "door-night", "user": "mum", "kind": "event",
     "spec": {"sensor": "door", "match": {"open": True}, "between": ["23:00", "06:00"]}},
    {"name": "meds", "user": "mum", "kind": "event", "spec": {"sensor": "unconfirmed_medication"}},
    {"name": "dad-hr", "user": "dad", "kind": "threshold",
     "spec": {"sensor": "heart_rate", "above": {"value": 120}, "hysteresis": 10}},
    {"name": "cuff-health", "user": "mum", "kind": "device",
     "spec": {"device": "cuff-1", "silent_min": 120, "battery_below": 15}},
]  # fmt: skip
ROOMS = {"mum": ["kitchen-1", "hall-1", "living-1"], "dad": ["den-1", "hall-2"]}


def normal_week(days: int, rng: random.Random) -> list[tuple[float, str, str, dict[str, Any]]]:
    events = []
    for day in range(1, days + 1):
        for user, rooms in ROOMS.items():
            t = at(day, "07:00") + rng.uniform(0, 1800)
            first = True
            while t < at(day, "22:00"):
                room = "kitchen-1" if user == "mum" and first else rng.choice(rooms)
                events.append((t, room, "motion", {}))
                first = False
                t += rng.uniform(300, 2400)
        events.append((at(day, "07:30") + rng.uniform(0, 3600), "cuff-1", "bp",
                       {"sys": rng.randint(118, 142), "dia": rng.randint(70, 88)}))  # fmt: skip
        for hour in range(24):
            events.append((at(day, f"{hour:02d}:10"), "cuff-1", "battery", {"value": 80}))
            events.append((at(day, f"{hour:02d}:20"), "watch-1", "heart_rate",
                           {"value": rng.randint(58, 92)}))  # fmt: skip
        for _ in range(rng.randint(2, 5)):
            events.append((at(day, "09:00") + rng.uniform(0, 10 * 3600), "hall-1", "door",
                           {"open": True}))  # fmt: skip
    return events


def script(days: int, events: list[tuple[float, str, str, dict[str, Any]]]) -> list[Incident]:
    """Put the incidents into the week (and take out what they silence)."""
    incidents = []

    def add(name: str, starts: float, rules: tuple[str, ...], until: float) -> None:
        incidents.append(Incident(name, starts, rules, until))

    events.append((at(2, "09:30"), "pill-1", "unconfirmed_medication", {"dose": "08:00"}))
    add("missed medication", at(2, "09:30"), ("meds",), at(2, "23:59"))
    events.append((at(3, "15:20"), "watch-1", "fall", {}))
    add("dad's fall", at(3, "15:20"), ("dad-fall",), at(3, "23:59"))
    events.append((at(4, "02:10"), "hall-1", "door", {"open": True}))
    add("door at night", at(4, "02:10"), ("door-night",), at(4, "06:00"))
    # A quiet morning: mum not up until 11:30 (nothing from her rooms before).
    events[:] = [
        e for e in events
        if not (e[1] in ROOMS["mum"] and at(5, "00:00") <= e[0] < at(5, "11:30"))
    ]  # fmt: skip
    events.append((at(5, "11:30"), "kitchen-1", "motion", {}))
    add("a quiet morning", at(5, "10:00"), ("kitchen-by-10", "mum-still"), at(5, "12:00"))
    # The cuff goes silent on day 6 at 11:00: no battery beats, no reading on day 7.
    dead = at(6, "11:00")
    events[:] = [e for e in events if not (e[1] == "cuff-1" and e[0] >= dead)]
    last = max(e[0] for e in events if e[1] == "cuff-1")
    add("cuff silent", last + 120 * 60, ("cuff-health",), DAY_ONE + days * 86400)
    if days >= 7:
        add("no reading (cuff dead)", at(7, "09:00"), ("bp-by-9",), at(7, "23:59"))
    events.append((at(4, "08:05"), "cuff-1", "bp", {"sys": 168, "dia": 99}))
    add("high blood pressure", at(4, "08:05"), ("bp-high",), at(4, "23:59"))
    return incidents


async def week(days: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    posts = Posts()
    with tempfile.TemporaryDirectory(prefix="fayd-care-bench-") as tmp:
        house = Household(Path(tmp))
        for device, user in (("cuff-1", "mum"), ("pill-1", "mum"), ("watch-1", "dad"),
                             *((r, u) for u, rooms in ROOMS.items() for r in rooms)):  # fmt: skip
            house.device(device, user, DAY_ONE)
        clock = Clock(DAY_ONE)
        eng = engine(house, clock)
        for who in ("anna", "ben"):
            await admin.handle(eng, "caregivers.add", {"name": who, "urls": [posts.url(who)]})
        for rule in RULES:
            await admin.handle(eng, "rules.add", {**rule, "ladder": [["anna", 600], ["ben", 600]]})
        await eng.store.run(lambda db: rec.set_state(db, "cursor", 0))
        events = normal_week(days, rng)
        incidents = script(days, events)
        events.sort()
        seen: dict[str, float] = {}  # alert id → the step that opened it
        acks: dict[str, float] = {}
        i, end = 0, DAY_ONE + days * 86400
        minute = DAY_ONE
        while minute < end:
            batch = []
            while i < len(events) and events[i][0] < minute + 60:
                batch.append(events[i])
                i += 1
            for when, device, sensor, data in batch:  # each stored event wakes the engine
                clock.now = when
                house.event(device, sensor, when, **data)
                await eng.step()
                await note(eng, seen, acks, clock.now)
            clock.now = minute + 60
            await eng.step()
            await note(eng, seen, acks, clock.now)
            for alert_id, due in list(acks.items()):
                if due <= clock.now:
                    await admin.handle(eng, "alerts.ack", {"id": alert_id, "by": "anna"})
                    del acks[alert_id]
            minute += 60
        clock.now = end + 86400  # let every retry come due
        await eng.step()
        alerts = await eng.store.run(rec.alerts, ("open", "acknowledged", "resolved"), 10_000)
        outbox = await eng.store.run(rec.outbox)
        result = score(incidents, alerts, seen)
        result["notifications_sent"] = sum(1 for r in outbox if r["sent_at"])
        received = len(posts.bodies)
        result["notifications_lost"] = len(outbox) - received
        result["events"] = len(events)
        result["events_per_s"] = await throughput(house, eng, clock)
        house.close()
    posts.close()
    return result


async def note(eng: Any, seen: dict[str, float], acks: dict[str, float], now: float) -> None:
    for alert in await eng.store.run(rec.alerts, ("open",)):
        if alert["id"] not in seen:
            seen[alert["id"]] = now
            acks[alert["id"]] = now + 300


def score(incidents: list[Incident], alerts: list[dict], seen: dict[str, float]) -> dict:
    delays, missed, matched = [], [], set()
    for inc in incidents:
        mine = [
            a for a in alerts
            if a["rule"] in inc.rules and inc.starts - 60 <= seen.get(a["id"], 0) <= inc.until
        ]  # fmt: skip
        if not mine:
            missed.append(inc.name)
            continue
        matched.update(a["id"] for a in mine)
        delays.append(min(seen[a["id"]] for a in mine) - inc.starts)
    false = [f"{a['rule']}: {a['text']}" for a in alerts if a["id"] not in matched]
    return {
        "incidents": len(incidents),
        "detected": len(incidents) - len(missed),
        "missed": len(missed),
        "missed_names": missed,
        "false_alerts": len(false),
        "false_alert_texts": false,
        "detect_delay_s_p50": statistics.median(delays) if delays else None,
        "detect_delay_s_max": max(delays) if delays else None,
    }


async def throughput(house: Household, eng: Any, clock: Clock) -> float:
    """A burst of 20,000 motion events stored, then read and evaluated by the engine."""
    start = clock.now
    house.events("kitchen-1", "motion", [start + i * 0.01 for i in range(20_000)])
    began = time.perf_counter()
    while True:
        before = (await eng.store.run(rec.state))["cursor"]
        await eng.step()
        if (await eng.store.run(rec.state))["cursor"] == before:
            break
    return round(20_000 / (time.perf_counter() - began))


def main() -> None:
    logging.basicConfig(level=logging.ERROR)  # the engine logs every alert as a warning
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(week(args.days, args.seed)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
