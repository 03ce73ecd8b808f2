"""The care engine with real parts: a SQLite store fed by the daemon's own event writes,
Apprise delivering to an HTTP server and a real SMTP server on loopback, and a clock the
test moves (a day passes in no time; nothing sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fayd.care import admin
from fayd.care import records as rec
from fayd.care.engine import CareEngine
from fayd.testing.care import (
    Clock,
    Frames,
    Household,
    Mails,
    Posts,
    ScriptedAnswers,
    at,
    engine,
)


@pytest.fixture
def house(tmp_path: Path) -> Iterator[Household]:
    h = Household(tmp_path)
    h.device("cuff-1", "mum")
    h.device("kitchen-1", "mum")
    h.device("hall-1", "mum")
    h.device("panic-1", "mum")
    h.device("dad-watch", "dad")
    yield h
    h.close()


async def setup(eng: CareEngine, posts: Posts, *rules: dict[str, Any]) -> None:
    for who in ("anna", "ben"):
        await admin.handle(eng, "caregivers.add", {"name": who, "urls": [posts.url(who)]})
    for rule in rules:
        await admin.handle(eng, "rules.add", rule)
    await eng.store.run(lambda db: rec.set_state(db, "cursor", 0))


async def step(eng: CareEngine) -> list[dict[str, Any]]:
    """One pass and whatever it started (check-ins), then the alerts as stored."""
    await eng.step()
    await eng.effects.settle()
    await eng.step()
    return await eng.store.run(rec.alerts, ("open", "acknowledged", "resolved"))


BP = {
    "name": "bp-high",
    "user": "mum",
    "kind": "threshold",
    "spec": {"sensor": "bp", "above": {"sys": 150, "dia": 95}, "hysteresis": 5},
    "ladder": [["anna", 600], ["ben", 600]],
    "checkin": False,
}


async def test_threshold_fires_folds_and_clears_with_hysteresis(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock)
    await setup(eng, posts, BP)
    house.event("cuff-1", "bp", at(1, "07:59"), sys=138, dia=85)
    assert await step(eng) == []  # in range: quiet
    house.event("cuff-1", "bp", at(1, "08:01"), sys=162, dia=98)
    clock.now = at(1, "08:02")
    [alert] = await step(eng)
    assert alert["state"] == "open" and "sys 162 above 150" in alert["text"]
    assert len(posts.to("anna")) == 1 and posts.to("ben") == []
    house.event("cuff-1", "bp", at(1, "08:03"), sys=158, dia=90)
    house.event("cuff-1", "bp", at(1, "08:04"), sys=148, dia=90)  # under 150, not under 145
    [alert] = await step(eng)
    assert alert["count"] == 2 and alert["state"] == "open"
    house.event("cuff-1", "bp", at(1, "08:05"), sys=140, dia=85)
    [alert] = await step(eng)
    assert alert["state"] == "resolved" and "back in range" in alert["closed_by"]
    assert "All clear" in posts.to("anna")[-1]["message"]


async def test_missing_reading_fires_at_its_time_and_not_on_a_good_day(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "06:00"))
    eng = engine(house, clock)
    rule = {
        "name": "bp-by-9",
        "user": "mum",
        "kind": "missing",
        "spec": {"sensor": "bp", "by": "09:00"},
        "ladder": ["anna"],
        "checkin": False,
    }
    await setup(eng, posts, rule)
    clock.now = at(1, "08:59")
    assert await step(eng) == []
    clock.now = at(1, "09:00")
    [alert] = await step(eng)
    assert alert["text"] == "no blood pressure by 09:00"
    house.event("cuff-1", "bp", at(1, "09:40"), sys=130, dia=80)
    clock.now = at(1, "09:41")
    [alert] = await step(eng)
    assert alert["state"] == "resolved" and "09:40" in alert["closed_by"]
    house.event("cuff-1", "bp", at(2, "08:10"), sys=130, dia=80)  # day two: in time
    clock.now = at(2, "09:30")
    assert len(await step(eng)) == 1  # still only day one's


async def test_inactivity_in_its_window_only(house: Household, posts: Posts) -> None:
    clock = Clock(at(1, "07:00"))
    eng = engine(house, clock)
    rule = {
        "name": "still",
        "user": "mum",
        "kind": "inactivity",
        "spec": {"minutes": 180, "between": ["08:00", "22:00"]},
        "ladder": ["anna"],
        "checkin": False,
    }
    await setup(eng, posts, rule)
    house.event("hall-1", "motion", at(1, "08:10"))
    clock.now = at(1, "11:09")
    assert await step(eng) == []
    clock.now = at(1, "11:10")
    [alert] = await step(eng)
    assert "no movement since 08:10" in alert["text"]
    house.event("kitchen-1", "motion", at(1, "11:20"))
    clock.now = at(1, "11:21")
    [alert] = await step(eng)
    assert alert["state"] == "resolved"
    house.event("hall-1", "motion", at(1, "21:00"))
    clock.now = at(2, "07:59")  # a quiet night is outside the window
    assert len(await step(eng)) == 1


async def test_door_at_night_and_a_panic_flood_raise_one_alert_each(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "12:00"))
    eng = engine(house, clock)
    door = {
        "name": "door-night",
        "user": "mum",
        "kind": "event",
        "spec": {"sensor": "door", "match": {"open": True}, "between": ["22:00", "06:00"]},
        "ladder": ["anna"],
    }
    panic = {
        "name": "panic",
        "user": "mum",
        "kind": "event",
        "spec": {"sensor": "panic"},
        "ladder": ["anna", "ben"],
    }
    health = {
        "name": "panic-health",
        "user": "mum",
        "kind": "device",
        "spec": {"device": "panic-1", "flood_per_min": 30},
        "ladder": ["anna"],
    }
    await setup(eng, posts, door, panic, health)
    house.event("hall-1", "door", at(1, "15:00"), open=True)  # daytime: quiet
    house.event("hall-1", "door", at(1, "23:10"), open=False)  # closing: quiet
    clock.now = at(1, "23:00")
    assert await step(eng) == []
    house.event("hall-1", "door", at(1, "23:12"), open=True)
    # A faulty panic button: a thousand presses in a minute.
    house.events("panic-1", "panic", [at(1, "23:13") + i * 0.05 for i in range(1000)])
    clock.now = at(1, "23:14")
    alerts = await step(eng)
    by_rule = {a["rule"]: a for a in alerts}
    assert sorted(by_rule) == ["door-night", "panic", "panic-health"] and len(alerts) == 3
    assert by_rule["panic"]["count"] == 1000
    assert by_rule["panic"]["severity"] == "critical"
    assert "over 30 events a minute" in by_rule["panic-health"]["text"]


async def test_device_silent_and_battery_low(house: Household, posts: Posts) -> None:
    clock = Clock(at(1, "10:00"))
    eng = engine(house, clock)
    rule = {
        "name": "cuff-health",
        "user": "mum",
        "kind": "device",
        "spec": {"device": "cuff-1", "silent_min": 120, "battery_below": 20},
        "ladder": ["anna"],
    }
    await setup(eng, posts, rule)
    house.event("cuff-1", "bp", at(1, "10:05"), sys=120, dia=80, battery=50)
    clock.now = at(1, "12:05")
    assert await step(eng) == []
    clock.now = at(1, "12:06")
    [silent] = await step(eng)
    assert "silent since 10:05" in silent["text"]
    house.event("cuff-1", "battery", at(1, "12:30"), value=12)
    clock.now = at(1, "12:31")
    alerts = {a["detail"]["key"]: a for a in await step(eng)}
    assert alerts["silent"]["state"] == "resolved" and alerts["battery"]["state"] == "open"


async def test_check_in_answered_fine_resolves_and_tells_nobody(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "06:00"))
    asker = ScriptedAnswers("Oh yes, I'm fine, I slept in")
    eng = engine(house, clock, asker)
    rule = {
        "name": "kitchen-by-10",
        "user": "mum",
        "kind": "missing",
        "spec": {"sensor": "motion", "device": "kitchen-1", "by": "10:00"},
        "ladder": ["anna", "ben"],
    }
    await setup(eng, posts, rule)
    clock.now = at(1, "10:00")
    [alert] = await step(eng)
    assert asker.asked == [
        ("mum", "I haven't seen you in the kitchen this morning. Are you all right?")
    ]
    assert alert["state"] == "resolved" and "said they are fine" in alert["closed_by"]
    clock.now = at(1, "11:00")
    await step(eng)
    assert posts.bodies == []


async def test_silence_escalates_to_the_first_caregiver_then_the_second_until_acknowledged(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "06:00"))
    frames = Frames()
    asker = ScriptedAnswers(None)
    eng = engine(house, clock, asker, frames)
    rule = {**BP, "checkin": True, "ladder": [["anna", 600], ["ben", 300]]}
    await setup(eng, posts, rule)
    house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
    clock.now = at(1, "08:00")
    [alert] = await step(eng)
    # Asked; the Asker's silence (its own wait ran out) goes on to the first caregiver.
    assert asker.asked == [
        ("mum", "Your blood pressure reading was outside its usual range. Are you all right?")
    ]
    assert [len(posts.to("anna")), len(posts.to("ben"))] == [1, 0]
    assert "heard no answer" in posts.to("anna")[0]["message"]
    clock.now = at(1, "08:09")
    await step(eng)
    assert [len(posts.to("anna")), len(posts.to("ben"))] == [1, 0]
    clock.now = at(1, "08:10")
    await step(eng)
    assert [len(posts.to("anna")), len(posts.to("ben"))] == [1, 1]
    assert "Nobody has acknowledged it yet" in posts.to("ben")[0]["message"]
    done = await admin.handle(eng, "alerts.ack", {"id": alert["id"], "by": "ben"})
    assert done["alert"]["state"] == "acknowledged"
    clock.now = at(1, "09:00")
    await step(eng)
    # Each told once more (it is taken care of), nobody told again about the alert itself.
    assert [len(posts.to("anna")), len(posts.to("ben"))] == [2, 2]
    assert posts.to("anna")[-1]["message"].startswith("Taken care of — Mum:")
    assert "(acknowledged by ben)" in posts.to("anna")[-1]["message"]
    states = [f.state for f in frames.sent if f.id == alert["id"]]
    assert states[0] == "open" and states[-1] == "acknowledged"


async def test_a_check_in_answered_with_trouble_escalates_at_once(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock, ScriptedAnswers("no, I need help"))
    await setup(eng, posts, {**BP, "checkin": True})
    house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
    await step(eng)
    assert len(posts.to("anna")) == 1
    assert "not reassuring" in posts.to("anna")[0]["message"]


async def test_an_undeliverable_notification_is_retried_and_reported(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock)
    await setup(eng, posts, BP)
    posts.refuse = True
    house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
    await step(eng)
    status = await eng.status()
    [stuck] = status["undelivered"]
    assert stuck["caregiver"] == "anna" and stuck["attempts"] == 1
    assert stuck["last_error"].startswith(f"json://127.0.0.1:{posts.port}/anna: ")
    assert "503" in stuck["last_error"], stuck["last_error"]  # Apprise's own reason
    clock.now = at(1, "08:00") + 10  # before the back-off: not tried again
    await step(eng)
    assert (await eng.status())["undelivered"][0]["attempts"] == 1
    posts.refuse = False
    clock.now = at(1, "08:01")
    await step(eng)
    assert (await eng.status())["undelivered"] == [] and len(posts.to("anna")) == 1


async def test_a_notification_reaches_a_real_smtp_server(house: Household) -> None:
    mails = Mails()
    try:
        clock = Clock(at(1, "08:00"))
        eng = engine(house, clock)
        await admin.handle(
            eng, "caregivers.add", {"name": "anna", "urls": [mails.url("anna@home.lan")]}
        )
        await admin.handle(eng, "rules.add", {**BP, "ladder": ["anna"]})
        await eng.store.run(lambda db: rec.set_state(db, "cursor", 0))
        house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
        await step(eng)
        [mail] = mails.received
        assert mail["To"] == "anna@home.lan" and "alert for Mum" in mail["Subject"]
        text = "".join(
            part.get_payload(decode=True).decode()
            for part in mail.walk()
            if part.get_content_type() == "text/plain"
        )
        assert "sys 171 above 150" in text
    finally:
        mails.close()


async def test_a_check_in_nobody_answers_escalates_when_its_two_minutes_end(
    house: Household, posts: Posts
) -> None:
    class NeverAnswers:
        """Speech that hangs (a device gone): the rung's own deadline must escalate."""

        def __init__(self) -> None:
            self.asked = asyncio.Event()

        async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None:
            self.asked.set()
            await asyncio.Event().wait()
            return None

    clock = Clock(at(1, "08:00"))
    asker = NeverAnswers()
    eng = engine(house, clock, asker)
    await setup(eng, posts, {**BP, "checkin": True})
    house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
    await eng.step()
    async with asyncio.timeout(5):
        await asker.asked.wait()
    clock.now = at(1, "08:01")
    await eng.step()
    assert posts.bodies == []
    clock.now = at(1, "08:02")
    await eng.step()
    assert len(posts.to("anna")) == 1 and "heard no answer" in posts.to("anna")[0]["message"]
    eng.effects.cancel()


async def test_cooldown_after_an_alert_ends(house: Household, posts: Posts) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock)
    await setup(eng, posts, {**BP, "cooldown_s": 1800})
    for minute, (sys, dia) in enumerate([(171, 99), (130, 80), (172, 99), (130, 80)]):
        house.event("cuff-1", "bp", at(1, "08:00") + minute * 60, sys=sys, dia=dia)
    clock.now = at(1, "08:05")
    [alert] = await step(eng)  # high, normal, high again within 30 min: one alert
    assert alert["state"] == "resolved"
    house.event("cuff-1", "bp", at(1, "08:40"), sys=175, dia=99)
    clock.now = at(1, "08:41")
    alerts = await step(eng)
    assert len(alerts) == 2 and alerts[0]["state"] == "open"  # after the cooldown: a new one


async def test_on_start_open_alerts_are_published_again_and_recently_closed_ones_cleared(
    house: Household, posts: Posts
) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock)
    panic = {"name": "panic", "user": "mum", "kind": "event", "spec": {"sensor": "panic"},
             "ladder": ["anna"]}  # fmt: skip
    await setup(eng, posts, BP, panic)
    house.event("cuff-1", "bp", at(1, "08:00"), sys=171, dia=99)
    house.event("panic-1", "panic", at(1, "08:00"))
    alerts = await step(eng)
    acked = next(a for a in alerts if a["rule"] == "panic")
    await admin.handle(eng, "alerts.ack", {"id": acked["id"], "by": "anna"})  # fayd stopped
    frames = Frames()
    clock.now = at(1, "09:00")
    restarted = engine(house, clock, frames=frames)
    task = asyncio.create_task(restarted.run())
    async with asyncio.timeout(10):
        while len(frames.sent) < 2:
            await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    states = {f.id: f.state for f in frames.sent}
    assert states[acked["id"]] == "acknowledged"
    assert [s for i, s in states.items() if i != acked["id"]] == ["open"]


async def test_a_fall_and_a_call_for_help_are_one_incident(house: Household, posts: Posts) -> None:
    """The pendant's fall and "I've fallen and can't get up" a minute later: one alert,
    the caregiver told once and then what was said; the skill's own alert is joined to it.
    An hour later is a new one (and a rule that tells someone more stays its own alert:
    the door and panic test above)."""
    from fayd.protocol import Alert

    clock = Clock(at(1, "10:00"))
    frames = Frames()
    eng = engine(house, clock, frames=frames)
    fall = {"name": "fall", "user": "mum", "kind": "event", "spec": {"sensor": "fall"}}
    await setup(eng, posts, {**fall, "ladder": ["anna", "ben"]})
    # (mum's first rule brings mum-help: her calls for help go to anna and ben too)
    house.event("panic-1", "fall", at(1, "10:00"), impact_g=3.6)
    clock.now = at(1, "10:00") + 5
    [alert] = await step(eng)
    await eng.deliver_due()
    clock.now = at(1, "10:01")
    said = Alert("a-1", "emergency", "critical", "I've fallen and I can't get up", clock.now, "mum")
    eng.report(said)
    [alert] = await step(eng)
    assert alert["rule"] == "fall" and alert["count"] == 2
    assert alert["detail"]["also"] == ["I've fallen and I can't get up"]
    await eng.deliver_due()
    told = [b["message"] for b in posts.to("anna")]
    assert len(told) == 2 and told[1] == "Mum, also: I've fallen and I can't get up (10:01)."
    joined = [f for f in frames.sent if f.id == "a-1"]
    assert [f.state for f in joined] == ["resolved"]
    assert joined[0].detail["closed_by"] == f"the same incident as {alert['id']}"
    assert posts.to("ben") == []  # the ladder goes on at its own pace

    # An hour on, a call for help is an incident of its own.
    clock.now = at(1, "11:05")
    eng.report(Alert("a-2", "emergency", "critical", "help me", clock.now, "mum"))
    alerts = await step(eng)
    assert sorted(a["id"] for a in alerts) == sorted([alert["id"], "a-2"])
