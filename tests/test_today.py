"""``fayd today`` and ``fayd memory search`` by tags alone, on the database the real daemon
wrote: sensor events from a simulated cuff, an emergency said on a simulated hall device, a
typed question; read back in time order, in local time, also with the daemon's API out of
reach and from a folder the reader may not write."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from fayd.cli.today import parse_day
from fayd.protocol import SensorEvent, encode

from .conftest import DaemonProcess

USER = "tess"
BP = {"sys": 152, "dia": 96}
#: Whole-hour zones around the world: the test reads the day in one where it is midday
#: now, so no midnight falls between the writes and the reads.
ZONES = ("Pacific/Kiritimati", "Asia/Tokyo", "Asia/Dubai", "Europe/London",
         "America/New_York", "America/Los_Angeles", "Pacific/Honolulu")  # fmt: skip


def midday_zone() -> str:
    return min(ZONES, key=lambda z: abs(datetime.now(ZoneInfo(z)).hour + 0.5 - 12))


def run(daemon: DaemonProcess, *args: str, env: dict[str, str] | None = None,
        prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [*prefix, sys.executable, "-m", "fayd", *args],
        env={**daemon.env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


async def next_acks(device: Any, n: int, within_s: float = 30) -> list[Any]:
    acks = []
    async with asyncio.timeout(within_s):
        while len(acks) < n:
            kind, frame, _ = await device.received.get()
            if kind == "ack":
                acks.append(frame)
    return acks


@pytest.fixture(scope="module")
def day(daemon: DaemonProcess) -> dict[str, Any]:
    """One day of tess's: her cuff sends a reading of yesterday (its clock says so), one a
    minute ago, and a motion event with no clock; she falls in the hall; she types a
    question. All written by the daemon."""
    for device in ("today-cuff", "today-hall"):
        daemon.add_device(device)
        assert run(daemon, "devices", "set", device, f"user={USER}").returncode == 0
    now = time.time()
    asyncio.run(_live(daemon, now))
    said = run(daemon, "say", "--user", USER, "what time is it?")
    assert said.returncode == 0, said.stderr
    return {"now": now, "zone": midday_zone()}


async def _live(daemon: DaemonProcess, now: float) -> None:
    async with daemon.sim("today-cuff") as cuff:
        await cuff.hello(roles=("sensor",))
        for event in (
            SensorEvent(seq=1, sensor="bp", ts=now - 86400, data=BP),
            SensorEvent(seq=2, sensor="bp", ts=now - 60, data={"sys": 128, "dia": 82}),
            SensorEvent(seq=3, sensor="motion", data={"room": "hall"}),  # no clock
        ):
            await cuff.publish("event", encode(event))
        await next_acks(cuff, 3)
    async with daemon.sim("today-hall") as hall:
        await hall.hello()
        await hall.say_text("I've fallen and can't get up")
        await hall.collect_reply(120)


def today_json(daemon: DaemonProcess, zone: str, *args: str, **kw: Any) -> dict[str, Any]:
    done = run(daemon, "today", "--user", USER, "--json", *args,
               env={"FAYD_AGENT_TIMEZONE": zone, **kw.pop("env", {})}, **kw)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_today_in_time_order_and_local_time(daemon: DaemonProcess, day: dict[str, Any]) -> None:
    zone = day["zone"]
    out = today_json(daemon, zone)
    assert out["date"] == datetime.now(ZoneInfo(zone)).date().isoformat()
    assert out["timezone"] == zone and out["user"] == USER
    items = out["items"]
    assert [i["type"] for i in items] == ["event", "event", "alert", "turn", "turn"]
    assert [i["at"] for i in items] == sorted(i["at"] for i in items)
    for item in items:  # local time of the household's zone
        local = datetime.fromtimestamp(item["at"], ZoneInfo(zone))
        assert item["time"] == local.isoformat(timespec="seconds")
    bp, motion, alert, fall, typed = items
    assert (bp["sensor"], bp["data"], bp["device"], bp["user"]) == (
        "bp", {"sys": 128, "dia": 82}, "today-cuff", USER)  # fmt: skip
    assert bp["at"] == pytest.approx(day["now"] - 60)  # the device's clock, not the receipt
    assert motion["sensor"] == "motion" and motion["at"] >= day["now"]  # when received
    assert (alert["kind"], alert["device"], alert["user"]) == ("fall", "today-hall", USER)
    assert alert["alert"].startswith("a-") and alert["said"] == "I've fallen and can't get up"
    assert (fall["intent"], fall["device"], fall["source"]) == ("emergency", "today-hall", "text")
    # The emergency skill's words (whether a caregiver is told depends on other tests'
    # caregivers in this shared daemon).
    assert fall["answer"].startswith("I'm here with you.")
    assert (typed["device"], typed["question"]) == ("cli", "what time is it?")

    text = run(daemon, "today", "--user", USER, env={"FAYD_AGENT_TIMEZONE": zone})
    lines = text.stdout.splitlines()
    assert lines[0].endswith(f"({zone}), for {USER}: 2 events, 2 turns, 1 alert"), lines[0]
    assert "  event  today-cuff (tess): bp sys=128 dia=82" in lines[1]
    assert "  event  today-cuff (tess): motion room=hall" in lines[2]
    assert "  ALERT  fall: tess on today-hall said \"I've fallen and can't get up\"" in lines[3]
    assert "  turn   tess on today-hall: \"I've fallen and can't get up\" [emergency]" in lines[4]
    assert lines[5].strip().startswith("Fay: ")
    assert "  turn   tess (typed): 'what time is it?'" in lines[6]


def test_another_day_by_name_or_date(daemon: DaemonProcess, day: dict[str, Any]) -> None:
    zone = day["zone"]
    yesterday = today_json(daemon, zone, "--date", "yesterday")
    [reading] = yesterday["items"]
    assert reading["data"] == BP and reading["at"] == pytest.approx(day["now"] - 86400)
    iso = (datetime.now(ZoneInfo(zone)).date() - timedelta(1)).isoformat()
    assert today_json(daemon, zone, "--date", iso)["items"] == yesterday["items"]
    assert today_json(daemon, zone, "--date", "2001-01-01")["items"] == []


def test_today_reads_a_database_it_may_not_write_with_no_daemon(
    daemon: DaemonProcess, day: dict[str, Any], tmp_path: Path
) -> None:
    """As the fayd group reads a stopped service's database: the folder and file are
    read-only to the reader, and there is no runtime file (no API to ask)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    source = sqlite3.connect(daemon.state / "fayd.db")
    copy = sqlite3.connect(folder / "fayd.db")
    with copy:
        source.backup(copy)
    source.close()
    copy.close()
    (folder / "fayd.db").chmod(0o444)
    folder.chmod(0o555)
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:  # root reads and writes anything, unless it drops that power
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to drop root's file access override")
        prefix = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")
    elsewhere = {"FAYD_PATHS_STATE_DIR": str(tmp_path / "no-daemon-here")}
    out = today_json(daemon, day["zone"], "--db", str(folder / "fayd.db"), env=elsewhere,
                     prefix=prefix)  # fmt: skip
    assert out["items"] == today_json(daemon, day["zone"])["items"]
    assert sorted(p.name for p in folder.iterdir()) == ["fayd.db"]  # nothing written there
    folder.chmod(0o755)


def test_an_unknown_user_is_refused_with_the_users(daemon: DaemonProcess, day: dict) -> None:
    done = run(daemon, "today", "--user", "tes")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert "no user 'tes'" in line and "'tess'" in line


def test_memory_search_by_tags_alone_is_newest_first(daemon: DaemonProcess, day: dict) -> None:
    """The cuff's events become memories tagged domain:homecare (in the background)."""
    deadline = time.monotonic() + 90
    while True:
        done = run(daemon, "memory", "search", "--tags-all", "domain:homecare", "--user", USER,
                   "--json")  # fmt: skip
        assert done.returncode == 0, done.stderr
        nodes = json.loads(done.stdout)
        events = [n for n in nodes if any(t.startswith("sensor:") for t in n["tags"])]
        if len(events) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(events) == 3
    assert all("domain:homecare" in n["tags"] and "score" not in n for n in nodes)
    # Newest first, not by relevance (by time: an hour's fold of events may be made first).
    times = [n["datetime"] for n in nodes]
    assert times == sorted(times, reverse=True)
    motion = run(daemon, "memory", "search", "--tags-all", "domain:homecare", "--tags-any",
                 "sensor:motion", "--user", USER, "--json")  # fmt: skip
    [node] = json.loads(motion.stdout)
    assert "sensor:motion" in node["tags"]
    newest = run(daemon, "memory", "search", "--tags-all", "domain:homecare", "--user", USER,
                 "-n", "1")  # fmt: skip
    first = newest.stdout.splitlines()[0]
    assert first.startswith("[") and f"#{nodes[0]['node_id']} " in first  # no score column


def test_parse_day() -> None:
    today = date(2026, 3, 1)
    assert parse_day("today", today) == today
    assert parse_day(" Yesterday ", today) == date(2026, 2, 28)
    assert parse_day("2025-12-24", today) == date(2025, 12, 24)
    with pytest.raises(ValueError, match="YYYY-MM-DD, today or yesterday"):
        parse_day("tomorow", today)
