"""Who is who in the household (docs/security.md, *Who is who*), attacked through the real
daemon and its embedded broker as household members and a stray device would: a device
speaking for another person, a hello that changes its owner, a stranger asking for someone's
day, a caregiver's authority claimed from a shared speaker, a device reading the alert
topics — each refused with nothing changed; and the allowed paths still work: two people
sharing a kitchen speaker, a caregiver asking from her own phone."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest

from fayd.protocol import Error, Topics
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import needs_mosquitto
from .test_firmware_mqtt import daemon_config

pytestmark = needs_mosquitto


def cli(daemon: DaemonProcess, *args: str) -> str:
    done = daemon.cli(*args, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def drain(sim: SimDevice) -> None:
    while not sim.received.empty():
        sim.received.get_nowait()


async def refused(sim: SimDevice, within_s: float = 10.0) -> Error:
    """The next error frame the device gets; nothing of a reply may come before it."""
    async with asyncio.timeout(within_s):
        while True:
            kind, frame, _ = await sim.received.get()
            assert not (kind == "human" and frame.key == "text" and frame.text), frame
            if kind == "error":
                return frame


async def answer(sim: SimDevice, text: str, user: str | None = None) -> str:
    await drain(sim)
    await sim.say_text(text, user)
    return (await sim.collect_reply(120)).text


def listed(daemon: DaemonProcess) -> dict[str, Any]:
    return {d["id"]: d for d in json.loads(cli(daemon, "devices", "list", "--json"))}


async def test_a_device_speaks_only_for_its_owner(daemon: DaemonProcess) -> None:
    said = cli(daemon, "say", "--user", "alice", "remember that my spare key is under the blue pot")
    assert said.strip()
    async with daemon.sim("bob-tablet") as bob:
        await bob.hello(user="bob")
        await asyncio.sleep(0.3)
        await drain(bob)
        await bob.say_text("what do you know about me?", "alice")
        error = await refused(bob)
        assert error.code == "user-claim" and "bob's" in error.message
        # Spoken as bob, it is bob's memory: alice's key is not in it.
        assert "blue pot" not in await answer(bob, "what do you know about me?")
        # A later hello cannot hand the device to someone else.
        await bob.hello(user="alice")
        error = await refused(bob)
        assert error.code == "user-claim"
    assert listed(daemon)["bob-tablet"]["user"] == "bob"
    # Alice still has her memory, asked by the administrator for her.
    assert "blue pot" in cli(daemon, "say", "--user", "alice", "what do you know about me?")


async def test_a_device_nobody_owns_names_no_one(daemon: DaemonProcess) -> None:
    async with daemon.sim("hall-stray") as stray:
        await stray.hello()
        await asyncio.sleep(0.3)
        await drain(stray)
        await stray.say_text("what do you know about me?", "alice")
        assert (await refused(stray)).code == "user-claim"


async def test_two_people_share_a_kitchen_speaker(daemon: DaemonProcess) -> None:
    daemon.add_device("kitchen-shared")
    cli(daemon, "devices", "set", "kitchen-shared", "shared=carol,dave", "--wait", "0")
    async with daemon.sim("kitchen-shared") as kitchen:
        await kitchen.hello()
        await asyncio.sleep(0.3)
        assert "Carol" in await answer(kitchen, "My name is Carol", "carol")
        assert "Dave" in await answer(kitchen, "My name is Dave", "dave")
        assert await answer(kitchen, "What's my name?", "carol") == "Your name is Carol."
        assert await answer(kitchen, "What's my name?", "dave") == "Your name is Dave."
        await kitchen.say_text("What's my name?", "erin")  # not a member of this device
        assert (await refused(kitchen)).code == "user-claim"


async def test_a_persons_day_is_theirs_and_their_caregivers(daemon: DaemonProcess) -> None:
    cli(daemon, "care", "caregivers", "add", "anya", "json://127.0.0.1:9/anya", "--for", "rosa")
    daemon.add_device("kitchen-rosa")
    cli(daemon, "devices", "set", "kitchen-rosa", "shared=rosa,anya", "--wait", "0")
    async with (
        daemon.sim("rosa-pendant") as rosa,
        daemon.sim("anya-phone") as anya,
        daemon.sim("bob-phone") as bob,
        daemon.sim("kitchen-rosa") as kitchen,
    ):
        for sim, user in ((rosa, "rosa"), (anya, "anya"), (bob, "bob"), (kitchen, None)):
            await sim.hello(user=user)
        await asyncio.sleep(0.3)
        refusal = "I'm sorry, I can only talk about Rosa's day with Rosa and the family"
        # A stranger's device, and a caregiver's authority claimed on a shared speaker.
        assert (await answer(bob, "How was Rosa today?")).startswith(refusal)
        assert (await answer(kitchen, "How was Rosa today?", "anya")).startswith(refusal)
        # Her caregiver from her own phone, and Rosa herself, hear it.
        assert (await answer(anya, "How was Rosa today?")).startswith("Rosa's day")
        assert (await answer(rosa, "How was Rosa today?")).startswith("Rosa's day")


async def test_alerts_reach_the_persons_and_caregivers_devices_only(
    daemon: DaemonProcess,
) -> None:
    cli(daemon, "care", "caregivers", "add", "tom", "json://127.0.0.1:9/tom", "--for", "gran")
    topics = Topics()
    async with (
        daemon.sim("gran-speaker") as gran,
        daemon.sim("tom-phone") as tom,
        daemon.sim("bob-laptop") as bob,
        daemon.mqtt_client("nosy-1", timeout=10) as nosy,
    ):
        for sim, user in ((gran, "gran"), (tom, "tom"), (bob, "bob")):
            await sim.hello(roles=("screen", "speaker"), user=user)
        # Another device account listens to every alert topic: the broker lets nothing in.
        await nosy.subscribe(topics.all_alerts, qos=1)
        await asyncio.sleep(0.3)
        for sim in (tom, bob):
            await drain(sim)
        reply = await answer(gran, "Help! I've fallen over and I can't get up")
        assert reply.startswith("I'm here with you.")

        async def alert_of(sim: SimDevice) -> Any:
            async with asyncio.timeout(10):
                while True:
                    kind, frame, _ = await sim.received.get()
                    if kind == "alert":
                        return frame

        shown = await alert_of(tom)
        assert (shown.user, shown.text) == ("gran", "Gran needs help")  # no words said
        with pytest.raises(TimeoutError):
            await alert_of(bob)
        heard = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                async for message in nosy.messages:
                    heard.append(message.topic.value)
        assert heard == []


def test_cli_is_not_a_device_id(daemon: DaemonProcess) -> None:
    done = daemon.cli("devices", "add", "cli", timeout=60)
    assert done.returncode != 0 and "cli" in done.stderr


def test_the_firmware_cannot_speak_for_someone_else(daemon: DaemonProcess, firmware) -> None:
    """The real firmware on MicroPython's unix port, its config naming alice, on a device the
    household gave to bob: its hello and its typed text are refused, and fayd says why."""
    config = daemon_config(daemon, "fw-bob", ["mic", "speaker", "screen"], user="alice")
    cli(daemon, "devices", "set", "fw-bob", "user=bob", "--wait", "0")
    fw = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "link" and r.get("up") for r in rows), 60, "up")
    fw.inject(text="what do you know about me?")
    deadline = time.monotonic() + 60
    while fw.log_text().count("fayd: user-claim") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert fw.log_text().count("fayd: user-claim") >= 2, fw.log_text()[-2000:]
    assert not any(r["hw"] == "rx" and r.get("key") == "text" for r in fw.records())
    assert listed(daemon)["fw-bob"]["user"] == "bob"
