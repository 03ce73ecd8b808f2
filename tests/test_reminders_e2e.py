"""Reminders through the real daemon (docs/reminders.md): its broker, simulated speaker
devices, the daemon's own clock moved by the test (``FAYD_TEST_CLOCK`` and ``POST
/api/test/clock``), so no test waits for real minutes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from datetime import UTC, datetime

import pytest

from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import frames_until, is_text_end

ENV = {"FAYD_TEST_CLOCK": "0", "FAYD_AGENT_TIMEZONE": "UTC", "FAYD_REMINDERS_ALARM_REPEAT_S": "5"}


def offset_of(daemon: DaemonProcess) -> float:
    return float(daemon.env.get("FAYD_TEST_CLOCK", "0"))


def move_to(daemon: DaemonProcess, at: float) -> None:
    """The daemon's clock reads ``at`` (Unix time) now."""
    offset = at - time.time()
    done = daemon.api("POST", "/api/test/clock", json={"offset_s": offset})
    assert done.status_code == 200, done.text
    daemon.env["FAYD_TEST_CLOCK"] = str(offset)  # kept for a restart


def reminders(daemon: DaemonProcess, user: str) -> list[dict]:
    done = daemon.api("GET", "/api/reminders", params={"user": user})
    assert done.status_code == 200, done.text
    return done.json()["reminders"]


async def said(device: SimDevice, within_s: float = 30.0) -> str:
    """The next thing fayd says on the device (its text, up to the closing frames)."""
    reply = await device.collect_reply(within_s)
    return reply.text


async def silent(device: SimDevice, for_s: float = 3.0) -> None:
    """Nothing said on the device for ``for_s`` seconds."""
    got = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(for_s):
            while True:
                kind, frame, _ = await device.received.get()
                if kind == "human" and frame.key == "text" and frame.text:
                    got.append(frame.text)
                    break
    assert not got, got


async def drain(device: SimDevice, quiet_s: float = 1.0) -> None:
    """Let go of what is left of the frames (a reply's audio) until ``quiet_s`` passes."""
    with contextlib.suppress(TimeoutError):
        while True:
            async with asyncio.timeout(quiet_s):
                await device.received.get()


async def typed(device: SimDevice, text: str) -> str:
    await device.say_text(text)
    return await said(device, 120)


async def test_fires_at_its_minute_only_for_its_user_and_timers_ring_in_order(
    make_daemon,
) -> None:
    daemon = make_daemon(ENV)
    async with daemon.sim("ann-1") as ann, daemon.sim("bob-1") as bob:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await bob.hello(roles=("mic", "speaker"), user="bob")
        await asyncio.sleep(0.5)
        reply = await typed(ann, "Remind me to call my son at 23:30")
        assert reply.startswith("I'll remind you to call your son ") and "at 23:30" in reply
        [row] = reminders(daemon, "ann")
        assert datetime.fromtimestamp(row["next_at"], UTC).strftime("%H:%M") == "23:30"
        assert row["source"] == "Remind me to call my son at 23:30"
        move_to(daemon, row["next_at"] - 61)  # the minute before: nothing
        await silent(ann, 3)
        move_to(daemon, row["next_at"] + 0.2)
        assert await said(ann, 10) == "A reminder: call your son."
        await silent(bob, 3)  # ann's reminder, never on bob's speaker
        assert reminders(daemon, "ann") == []  # a one-off: done

        # Two timers, the shorter set second: they ring in the order they end.
        eggs = await typed(ann, "Set a timer for 3 minutes for the eggs")
        assert eggs.startswith("The eggs timer is set for 3 minutes"), eggs
        assert (await typed(ann, "set a timer for one minute")).startswith("A timer is set")
        now = time.time() + offset_of(daemon)
        move_to(daemon, now + 65)
        assert await said(ann, 10) == "Your timer is done."
        assert await said(ann, 10) == "Your timer is done."  # said again (5 s) until answered
        assert await typed(ann, "thank you") != ""
        move_to(daemon, now + 185)
        assert await said(ann, 10) == "Your eggs timer is done."
        await ann.say_text("okay")  # answered: the alarm stops
        await said(ann, 60)
        await silent(ann, 7)


async def test_quiet_hours_hold_a_reminder_until_they_end(make_daemon) -> None:
    daemon = make_daemon(ENV)
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await asyncio.sleep(0.5)
        assert (await typed(ann, "Please don't talk to me after ten at night")).startswith(
            "All right. I won't start talking"
        )
        await typed(ann, "Remind me to lock the back door at 23:30")
        [row] = reminders(daemon, "ann")
        move_to(daemon, row["next_at"] + 30)
        await silent(ann, 4)  # 23:30 is in the quiet hours
        morning = row["next_at"] + 7.5 * 3600  # 07:00 the next day
        move_to(daemon, morning + 5)
        assert await said(ann, 10) == (
            "This was due at 23:30 yesterday, seven hours ago: lock the back door."
        )


async def test_late_once_after_a_kill_and_held_for_a_device_that_was_away(make_daemon) -> None:
    daemon = make_daemon(ENV)
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await asyncio.sleep(0.5)
        await typed(ann, "Remind me to call my son at 23:30")
        await typed(ann, "Remind me to water the plants at 23:31")
    rows = reminders(daemon, "ann")
    due = rows[0]["next_at"]
    assert daemon.proc is not None
    daemon.proc.kill()  # kill -9
    daemon.proc.wait(10)
    # Started again two hours after the first was due; the device comes back later.
    daemon.env["FAYD_TEST_CLOCK"] = str(due + 2 * 3600 - time.time())
    daemon.start()
    await asyncio.sleep(2)  # the scheduler fires both: no device is online
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        first, second = await said(ann, 30), await said(ann, 30)
        assert first == "This was due at 23:30 yesterday, two hours ago: call your son."
        assert second.startswith("This was due at 23:31 yesterday, ")
        assert second.endswith(" ago: water the plants.")
        await silent(ann, 4)  # once each
    db = sqlite3.connect(daemon.state / "fayd.db")
    waiting = db.execute("SELECT count(*) FROM announcements WHERE state = 'waiting'").fetchone()
    assert waiting == (0,)


async def test_medication_answered_yes_and_unanswered_becomes_a_care_event(make_daemon) -> None:
    daemon = make_daemon({**ENV, "FAYD_REMINDERS_CHECKIN_AFTER_MIN": "10"})
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await asyncio.sleep(0.5)
        reply = await typed(ann, "Remind me to take my pills at 23:30")
        assert reply.startswith("I'll remind you to take your pills")
        [row] = reminders(daemon, "ann")
        assert row["kind"] == "medication"
        move_to(daemon, row["next_at"] + 1)
        assert await said(ann, 10) == "It's time to take your pills. Did you take them?"
        assert await typed(ann, "Yes, I did") == "Well done. I've made a note of it."
        assert await typed(ann, "Did I take my medicine today?") == (
            "Today at 23:30 you told me you'd taken your pills."
        )
        # The next one goes unanswered: asked again after 10 minutes, then a care event.
        await typed(ann, "Remind me to take my tablets at 23:50")
        due = reminders(daemon, "ann")[0]["next_at"]
        move_to(daemon, due + 1)
        assert await said(ann, 10) == "It's time to take your tablets. Did you take them?"
        move_to(daemon, due + 601)
        assert await said(ann, 10) == "Just checking: did you take your tablets?"
        move_to(daemon, due + 1202)
        await asyncio.sleep(2)
    db = sqlite3.connect(daemon.state / "fayd.db")
    [(device, data)] = db.execute(
        "SELECT device, data FROM device_events WHERE sensor = 'unconfirmed_medication'"
    ).fetchall()
    assert device == "fayd" and json.loads(data)["what"] == "take your tablets"
    tags = {t for (t,) in db.execute("SELECT tag FROM memory_tags").fetchall()}
    assert {"domain:homecare", "kind:medication"} <= tags
    status = daemon.api("GET", "/api/status").json()
    assert status["reminders"]["unconfirmed"] == 1


async def test_a_reminder_set_by_voice_fires_at_its_minute(make_daemon, speak) -> None:
    daemon = make_daemon(ENV)
    # "Tonight" has passed after 23:30 UTC: the clock reads noon of the day the test runs.
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    move_to(daemon, today.timestamp())
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await asyncio.sleep(0.5)
        await ann.speak(speak("Remind me to call my son at half past eleven tonight."))
        reply = await said(ann, 120)
        assert reply.startswith("I'll remind you to call your son ") and "at 23:30" in reply
        [row] = reminders(daemon, "ann")
        move_to(daemon, row["next_at"] - 30)
        await silent(ann, 3)
        move_to(daemon, row["next_at"] + 0.2)
        assert await said(ann, 10) == "A reminder: call your son."


async def test_waits_for_a_gap_shows_on_the_robot_and_urgent_beats_quiet_hours(
    make_daemon,
) -> None:
    daemon = make_daemon(ENV)
    async with daemon.sim("ann-1") as ann, daemon.sim("robo-1") as robo:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await robo.hello(roles=("robot",), user="ann")
        await asyncio.sleep(0.5)
        await typed(ann, "Remind me to call my son at 23:30")
        [row] = reminders(daemon, "ann")
        # Mid-turn when it comes due: said after the reply, not over it.
        await ann.say_text("Tell me a long story about a sailor and his dog, please.")
        seen = await frames_until(
            ann, lambda got: any(k == "human" and f.key == "text" and f.text for k, f, _ in got)
        )
        move_to(daemon, row["next_at"] + 0.2)
        await frames_until(
            ann,
            lambda got: any(
                k == "human" and f.text == "A reminder: call your son." for k, f, _ in got
            ),
            60,
            seen,
        )
        texts = [(k, f) for k, f, _ in seen if k == "human" and f.key == "text"]
        story_end = next(i for i, (_, f) in enumerate(texts) if f.is_end)
        reminder = next(
            i for i, (_, f) in enumerate(texts) if f.text == "A reminder: call your son."
        )
        assert story_end < reminder
        await frames_until(ann, lambda got: sum(map(is_text_end, got)) >= 2, 30, seen)
        await drain(ann)
        # The robot is shown it: a bare Action.
        shown = await frames_until(
            robo, lambda got: any(k == "human" and f.action for k, f, _ in got), 10
        )
        [action] = [f.action for k, f, _ in shown if k == "human" and f.action]
        assert action.code == "guidance.remind"
        # Quiet hours now; an urgent reminder is said anyway, a plain one waits.
        await typed(ann, "Please don't talk to me after ten at night")
        now = time.time() + offset_of(daemon)
        for text, urgent in (("water the plants", False), ("take the heart tablet", True)):
            done = daemon.api("POST", "/api/reminders", json={
                "user": "ann", "text": text, "urgent": urgent,
                "at": datetime.fromtimestamp(now + 120, UTC).strftime("%Y-%m-%dT%H:%M"),
            })  # fmt: skip
            assert done.status_code == 200, done.text
        move_to(daemon, now + 181)
        assert await said(ann, 10) == "A reminder: take the heart tablet."
        await silent(ann, 4)


async def test_a_morning_greeting_with_the_days_reminders(make_daemon) -> None:
    daemon = make_daemon(ENV)
    async with daemon.sim("ann-1") as ann:
        await ann.hello(roles=("mic", "speaker"), user="ann")
        await asyncio.sleep(0.5)
        done = daemon.cli("reminders", "add", "good morning", "--user", "ann",
                          "--kind", "greeting", "--every", "day", "--time", "07:00")  # fmt: skip
        assert done.returncode == 0, done.stderr
        [greet] = reminders(daemon, "ann")
        day = datetime.fromtimestamp(greet["next_at"], UTC).strftime("%Y-%m-%d")
        done = daemon.cli("reminders", "add", "phone the chemist", "--user", "ann",
                          "--at", f"{day} 10:00")  # fmt: skip
        assert done.returncode == 0, done.stderr
        move_to(daemon, greet["next_at"] + 1)
        heard = await said(ann, 10)
        assert heard.startswith("Good morning, Ann! It's ")
        assert heard.endswith(" Today: at 10:00, phone the chemist.")
