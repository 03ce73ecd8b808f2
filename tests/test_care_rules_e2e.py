"""Each kind of care rule through the real daemon: rules added with ``fayd care rules add``,
sensor events from simulated devices on the embedded broker, the daemon's own clock moved by
the test (``FAYD_TEST_CLOCK``), and the caregiver's notifications on an Apprise JSON target on
loopback. Each rule stays quiet while its condition is not met and alerts once when it is.

A quiet moment is proven, not waited out: the engine reports the clock time up to which it
has judged the rules (``checked_at`` in the status), and the alert that comes later must be
the one the firing input caused (its text and time)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from fayd.protocol import SensorEvent, encode
from fayd.testing.care import Posts, wait_for
from fayd.testing.harness import DaemonProcess
from tests.conftest import needs_mosquitto

pytestmark = needs_mosquitto
ENV = {"FAYD_TEST_CLOCK": "0", "FAYD_AGENT_TIMEZONE": "UTC"}


class House:
    """One daemon, mum's devices, anna as her caregiver, the daemon's clock in hand."""

    def __init__(self, daemon: DaemonProcess, posts: Posts) -> None:
        self.daemon, self.posts = daemon, posts
        self.seq: dict[str, int] = {}
        self.cli("caregivers", "add", "anna", posts.url("anna"))

    def cli(self, *args: str) -> str:
        done = self.daemon.cli("care", *args, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def rule(self, name: str, *spec: str) -> None:
        """A rule on mum, told straight to anna (the check-in is tested elsewhere)."""
        self.cli("rules", "add", name, "--user", "mum", "--ladder", "anna", "--no-checkin", *spec)

    def now(self) -> float:
        return time.time() + float(self.daemon.env["FAYD_TEST_CLOCK"])

    def move_to(self, at: float) -> None:
        """The daemon's clock reads ``at`` now; returns once the engine has judged the rules
        at that time (or later)."""
        offset = at - time.time()
        done = self.daemon.api("POST", "/api/test/clock", json={"offset_s": offset})
        assert done.status_code == 200, done.text
        self.daemon.env["FAYD_TEST_CLOCK"] = str(offset)
        wait_for(lambda: (self.checked_at() or 0) >= at, 30)

    def checked_at(self) -> float | None:
        status = self.daemon.api("GET", "/api/status", timeout=30).json()
        return status["care"]["checked_at"]

    def send(self, device: str, *events: tuple[str, dict[str, Any]], at: float | None = None):
        """``device`` (mum's) says hello and sends ``events``, each timed ``at`` (default: the
        daemon's now); returns once the engine has judged them."""
        when = self.now() if at is None else at

        async def go() -> None:
            async with self.daemon.sim(device) as sim:
                await sim.hello(roles=("sensor",), user="mum")
                for sensor, data in events:
                    self.seq[device] = self.seq.get(device, 0) + 1
                    frame = SensorEvent(self.seq[device], sensor, when, data)
                    await sim.publish("event", encode(frame))
                await asyncio.sleep(0.3)

        stored = self.stored()
        asyncio.run(go())
        wait_for(lambda: self.stored() >= stored + len(events), 30)
        self.settle()

    def stored(self) -> int:
        with sqlite3.connect(self.daemon.state / "fayd.db") as conn:
            return conn.execute("SELECT count(*) FROM device_events").fetchone()[0]

    def settle(self) -> None:
        """Until the engine has finished a pass that began after this call (setting the
        clock where it is wakes the engine)."""
        self.move_to(self.now())

    def alerts(self) -> list[dict[str, Any]]:
        sent = self.daemon.api("POST", "/api/care/alerts.list", json={"all": True}, timeout=30)
        assert sent.status_code == 200, sent.text
        return sent.json()["alerts"]

    def told(self) -> list[str]:
        return [body["message"] for body in self.posts.to("anna")]


def start(make_daemon: Any, posts: Posts, *devices: str) -> House:
    """The daemon, and mum's devices said hello (a rule names only a known person and
    device)."""
    house = House(make_daemon(dict(ENV)), posts)
    for device in ("cuff-1", *devices):
        house.send(device)
    return house


def hhmm(at: float) -> str:
    return f"{datetime.fromtimestamp(at, UTC):%H:%M}"


def next_hour(at: float, hours: int) -> float:
    """A whole hour at least ``hours`` after ``at``, not midnight (a day's by-time)."""
    t = datetime.fromtimestamp(at, UTC).replace(minute=0, second=0, microsecond=0)
    t += timedelta(hours=hours + 1)
    return (t + timedelta(hours=1) if t.hour == 0 else t).timestamp()


def test_a_threshold_rule_alerts_on_a_high_reading_and_clears_with_hysteresis(
    make_daemon: Any, posts: Posts
) -> None:
    house = start(make_daemon, posts)
    house.rule("bp-high", "--kind", "threshold", "--sensor", "bp", "--above", "sys=150,dia=95",
               "--hysteresis", "5")  # fmt: skip
    house.send("cuff-1", ("bp", {"sys": 132, "dia": 84}))  # in range
    house.send("cuff-1", ("bp", {"sys": 150, "dia": 95}))  # at the limit: not above it
    assert house.alerts() == [] and house.told() == []

    house.send("cuff-1", ("bp", {"sys": 162, "dia": 98}))
    wait_for(lambda: len(house.told()) == 1, 20)
    [alert] = house.alerts()
    assert alert["state"] == "open" and alert["rule"] == "bp-high"
    assert "sys 162 above 150" in alert["text"] and "dia 98 above 95" in alert["text"]
    assert "Mum" in house.told()[0] and "162" in house.told()[0]

    house.send("cuff-1", ("bp", {"sys": 148, "dia": 92}))  # under, but inside the hysteresis
    house.send("cuff-1", ("bp", {"sys": 158, "dia": 90}))  # high again: the same alert
    [alert] = house.alerts()
    assert alert["state"] == "open" and alert["count"] == 2
    house.send("cuff-1", ("bp", {"sys": 138, "dia": 86}))  # settled: all clear
    wait_for(lambda: len(house.told()) == 2, 20)
    [alert] = house.alerts()
    assert alert["state"] == "resolved"
    assert "back in range" in house.told()[1]


def test_a_missing_reading_alerts_at_its_time_and_not_when_it_came(
    make_daemon: Any, posts: Posts
) -> None:
    house = start(make_daemon, posts, "kitchen-1")
    due = next_hour(house.now(), 2)
    since = hhmm(due - 3600)
    # Two rules due at the same time: the blood pressure never comes; the kitchen's motion
    # comes half an hour before.
    house.rule("bp-by", "--kind", "missing", "--sensor", "bp", "--since", since, "--by", hhmm(due))
    house.rule("kitchen-by", "--kind", "missing", "--sensor", "motion", "--device", "kitchen-1",
               "--since", since, "--by", hhmm(due))  # fmt: skip
    house.move_to(due - 1800)
    house.send("kitchen-1", ("motion", {}))
    house.move_to(due - 60)
    assert house.alerts() == []

    house.move_to(due + 60)
    wait_for(lambda: len(house.told()) == 1, 20)
    [alert] = house.alerts()
    assert alert["rule"] == "bp-by" and alert["text"] == f"no blood pressure by {hhmm(due)}"
    assert alert["opened_at"] >= due

    house.send("cuff-1", ("bp", {"sys": 128, "dia": 80}))  # late, but it came
    wait_for(lambda: len(house.told()) == 2, 20)
    assert [a["state"] for a in house.alerts()] == ["resolved"]
    assert "it came at" in house.told()[1]


def test_inactivity_alerts_after_its_minutes_without_movement(
    make_daemon: Any, posts: Posts
) -> None:
    house = start(make_daemon, posts, "hall-1")
    now = house.now()
    window = f"{hhmm(now - 3600)}-{hhmm(now + 4 * 3600)}"
    house.rule("still", "--kind", "inactivity", "--minutes", "60", "--between", window)
    moved = now + 600
    house.move_to(moved)
    house.send("hall-1", ("motion", {}))
    house.move_to(moved + 59 * 60)
    assert house.alerts() == []

    house.move_to(moved + 61 * 60)
    wait_for(lambda: len(house.told()) == 1, 20)
    [alert] = house.alerts()
    assert alert["text"] == f"no movement since {hhmm(moved)} (60 min)"
    house.send("hall-1", ("door", {"open": True}))  # she is up: all clear
    wait_for(lambda: len(house.told()) == 2, 20)
    assert house.alerts()[0]["state"] == "resolved"


def test_an_event_rule_fires_only_on_its_match_inside_its_window(
    make_daemon: Any, posts: Posts
) -> None:
    house = start(make_daemon, posts, "door-1")
    night = next_hour(house.now(), 1)
    window = f"{hhmm(night)}-{hhmm(night + 2 * 3600)}"
    house.rule("door-night", "--kind", "event", "--sensor", "door", "--match", "open=true",
               "--between", window)  # fmt: skip
    house.send("door-1", ("door", {"open": True}))  # in the day: nothing
    house.move_to(night + 1800)
    house.send("door-1", ("door", {"open": False}))  # shut at night: nothing
    house.send("door-1", ("motion", {}))  # another sensor: nothing
    assert house.alerts() == []

    house.send("door-1", ("door", {"open": True}))
    wait_for(lambda: len(house.told()) == 1, 20)
    [alert] = house.alerts()
    assert alert["severity"] == "critical"
    assert alert["text"] == f"the door (door-1) at {hhmm(night + 1800)}"
    assert "the door (door-1)" in house.told()[0]


def test_device_health_a_low_battery_a_silence_and_a_flood_are_one_alert_each(
    make_daemon: Any, posts: Posts
) -> None:
    house = start(make_daemon, posts)
    house.rule("cuff-health", "--kind", "device", "--device", "cuff-1", "--silent-min", "30",
               "--battery-below", "20", "--flood-per-min", "60")  # fmt: skip
    house.send("cuff-1", ("battery", {"value": 55}))
    house.send("cuff-1", ("bp", {"sys": 120, "dia": 80, "battery": 35}))
    assert house.alerts() == []
    heard = house.now()
    house.send("cuff-1", ("battery", {"value": 15}), at=heard)
    wait_for(lambda: len(house.told()) == 1, 20)
    assert [a["text"] for a in house.alerts()] == ["cuff-1's battery is low (15%)"]

    house.move_to(heard + 29 * 60)
    assert len(house.alerts()) == 1
    house.move_to(heard + 31 * 60)
    wait_for(lambda: len(house.told()) == 2, 20)
    silent = [a for a in house.alerts() if "silent" in a["text"]]
    assert [a["state"] for a in silent] == ["open"]
    assert silent[0]["text"] == f"cuff-1 has been silent since {hhmm(heard)}"

    # A faulty cuff: 200 events in one minute. Its first one says it is back (the silence
    # clears); the flood is one alert, not 140.
    house.send("cuff-1", *[("bp", {"sys": 120, "dia": 80})] * 200)
    wait_for(lambda: any("events a minute" in a["text"] for a in house.alerts()), 20)
    texts = [a["text"] for a in house.alerts()]
    assert texts.count("cuff-1 sends over 60 events a minute: is it faulty?") == 1
    assert [a["state"] for a in house.alerts() if "silent" in a["text"]] == ["resolved"]
    assert len(house.alerts()) == 3
