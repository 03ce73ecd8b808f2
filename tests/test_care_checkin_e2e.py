"""A care rule's spoken check-in through the real daemon (issue 16, item 2): the question
is said on the person's speaker by the reminders' speech, and their next words are the
answer — "I'm fine" resolves the alert with no caregiver told; trouble tells the first
caregiver at once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fayd.protocol import SensorEvent, encode
from fayd.testing.care import Posts, wait_for
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import needs_mosquitto
from .test_care_e2e import alerts, cli

pytestmark = needs_mosquitto


async def heard(device: SimDevice, within_s: float = 60.0) -> str:
    """The text of the next thing fayd says on ``device`` (its text frames to the end)."""
    said: list[str] = []
    async with asyncio.timeout(within_s):
        while True:
            kind, frame, _ = await device.received.get()
            if kind == "human" and frame.key == "text":
                said += [frame.text] if frame.text else []
                if frame.is_end and said:
                    return " ".join(said)


async def mums(speaker: SimDevice, sensor: SimDevice) -> None:
    """Mum's kitchen speaker and one of her sensors say hello (she is a household member)."""
    await speaker.hello(roles=("mic", "speaker"), user="mum")
    await sensor.hello(roles=("sensor",), user="mum")
    await asyncio.sleep(0.5)


async def reading_then_answer(daemon: DaemonProcess, answer: str) -> tuple[str, str]:
    """Mum's cuff sends 171/99; what her kitchen speaker asks, and fayd's reply to
    ``answer``."""
    async with daemon.sim("kitchen-1") as kitchen, daemon.sim("cuff-1") as cuff:
        await mums(kitchen, cuff)
        await asyncio.to_thread(add_rule, daemon)  # mum is a household member now
        reading = SensorEvent(1, "bp", time.time(), {"sys": 171, "dia": 99})
        await cuff.publish("event", encode(reading))
        question = await heard(kitchen)
        await kitchen.say_text(answer)
        reply = await heard(kitchen)
    return question, reply


def daemon_with_rule(make_daemon: Any, posts: Posts) -> DaemonProcess:
    daemon = make_daemon()
    cli(daemon, "caregivers", "add", "anna", posts.url("anna"))
    return daemon


def add_rule(daemon: DaemonProcess) -> None:
    cli(daemon, "rules", "add", "bp-high", "--user", "mum", "--kind", "threshold", "--sensor",
        "bp", "--above", "sys=150,dia=95", "--ladder", "anna:10")  # fmt: skip


def test_im_fine_resolves_the_alert_and_no_caregiver_is_told(make_daemon, posts) -> None:
    daemon = daemon_with_rule(make_daemon, posts)
    question, reply = asyncio.run(reading_then_answer(daemon, "I'm fine, thank you"))
    assert "blood pressure" in question and "Are you all right?" in question, question
    assert "glad" in reply, reply
    wait_for(lambda: alerts(daemon) and alerts(daemon)[0]["state"] == "resolved", 20)
    time.sleep(1)
    assert posts.to("anna") == []


def test_trouble_tells_the_first_caregiver_at_once(make_daemon, posts) -> None:
    daemon = daemon_with_rule(make_daemon, posts)
    _, reply = asyncio.run(reading_then_answer(daemon, "No, I feel dizzy"))
    assert "family" in reply, reply
    wait_for(lambda: len(posts.to("anna")) == 1, 30)
    [alert] = alerts(daemon)
    assert alert["state"] == "open"


def test_the_person_hears_when_a_caregiver_has_taken_the_alert(make_daemon, posts) -> None:
    """After "No, I feel dizzy" anna is told; when she acknowledges, mum hears it."""
    daemon = daemon_with_rule(make_daemon, posts)

    async def story() -> str:
        async with daemon.sim("kitchen-1") as kitchen, daemon.sim("cuff-1") as cuff:
            await mums(kitchen, cuff)
            await asyncio.to_thread(add_rule, daemon)
            await cuff.publish("event", encode(SensorEvent(1, "bp", time.time(), {"sys": 171})))
            await heard(kitchen)  # the check-in
            await kitchen.say_text("No, I feel dizzy")
            await heard(kitchen)  # "I'm letting your family know right now."
            await asyncio.to_thread(wait_for, lambda: len(posts.to("anna")) == 1, 30)
            [alert] = await asyncio.to_thread(alerts, daemon)
            await asyncio.to_thread(cli, daemon, "alerts", "ack", alert["id"], "--by", "anna")
            return await heard(kitchen)

    assert asyncio.run(story()) == "Anna has seen your alert."


def test_a_fall_from_the_pendant_is_said_to_the_person_as_the_family_is_told(
    make_daemon, posts
) -> None:
    daemon = daemon_with_rule(make_daemon, posts)

    async def story() -> str:
        async with daemon.sim("kitchen-1") as kitchen, daemon.sim("pendant-1") as pendant:
            await mums(kitchen, pendant)
            rule = ("fall", "--user", "mum", "--kind", "event", "--sensor", "fall")
            rule += ("--ladder", "anna")
            await asyncio.to_thread(cli, daemon, "rules", "add", *rule)
            fall = SensorEvent(1, "fall", time.time(), {"impact_g": 3.6})
            await pendant.publish("event", encode(fall))
            return await heard(kitchen)

    said = asyncio.run(story())
    assert said == (
        "It looks as if you've had a fall. I'm letting your family know now. "
        "Try not to get up too quickly."
    )
    wait_for(lambda: len(posts.to("anna")) == 1, 30)
