"""Who is who (docs/security.md, *Who is who*) with real parts and no daemon: whom a device's
frames speak for, who looks after whom, who may acknowledge an alert (a press and a
threshold rule that asks the person first), and which devices an alert reaches — on a real
SQLite store, the real device registry and the real care engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fayd.care import admin
from fayd.care import records as rec
from fayd.care.household import Household as Watchers
from fayd.devices.owners import ClaimRefused, Ownership
from fayd.devices.registry import DeviceRegistry
from fayd.protocol import Ack, Alert, Error, Hello
from fayd.service.household_alerts import HouseholdAlerts
from fayd.store import devices_records
from fayd.testing.care import Clock, Household, Posts, ScriptedAnswers, at, engine

from .conftest import Frames


def test_a_personal_device_speaks_for_its_owner_only() -> None:
    mine = Ownership("mum")
    assert mine.speaker(None) == mine.speaker("mum") == "mum"
    with pytest.raises(ClaimRefused, match="mum's"):
        mine.speaker("bob")
    assert mine.vouches("mum", "User") and not mine.vouches("bob", "User")


def test_a_shared_device_names_its_members_and_vouches_for_no_one() -> None:
    kitchen = Ownership("alice", ("alice", "bob"))
    assert (kitchen.speaker(None), kitchen.speaker("bob")) == ("alice", "bob")
    with pytest.raises(ClaimRefused, match="alice, bob only"):
        kitchen.speaker("carol")
    assert not kitchen.vouches("alice", "User") and not kitchen.vouches("bob", "User")
    assert kitchen.serves("bob", "User") and not kitchen.serves("carol", "User")


def test_a_device_nobody_owns_is_the_default_users() -> None:
    stray = Ownership()
    assert stray.speaker(None) is None  # the default user
    with pytest.raises(ClaimRefused, match="belongs to nobody"):
        stray.speaker("alice")
    assert stray.vouches("User", "User") and not stray.vouches("alice", "User")
    assert stray.serves("User", "User") and not stray.serves("alice", "User")


def test_who_looks_after_whom() -> None:
    house = Watchers(
        caregivers={"anna": frozenset(), "ben": frozenset({"dad"}), "cal": frozenset({"x"})},
        ladders={"mum": frozenset({"cal"})},
        rule_ladders={"mum-bp": frozenset({"cal"})},
    )
    assert house.watches("anna", "mum") and house.watches("anna", "dad")  # everyone
    assert house.watches("ben", "dad") and not house.watches("ben", "mum")
    assert house.watches("cal", "mum")  # on mum's ladder
    assert not house.watches("bob", "mum")  # not a caregiver at all
    assert house.may_acknowledge("cal", {"rule": "mum-bp", "user": "mum"})
    assert not house.may_acknowledge("anna", {"rule": "mum-bp", "user": "mum"})
    # A rule since removed: whoever looks after the person.
    assert house.may_acknowledge("anna", {"rule": "gone", "user": "mum"})
    assert not house.may_acknowledge("ben", {"rule": "gone", "user": "mum"})


@pytest.fixture
def house(tmp_path: Path) -> Iterator[Household]:
    h = Household(tmp_path)
    h.device("cuff-1", "mum")
    h.device("panic-1", "mum")
    yield h
    h.close()


async def devices(house: Household, owners: dict[str, str | None]) -> DeviceRegistry:
    registry = DeviceRegistry(house.store, Frames(), "mum")
    for device, user in owners.items():
        await registry.hello(registry.state(device), Hello(device, ("screen",), user=user))
    return registry


BP = {
    "name": "bp-high",
    "user": "mum",
    "kind": "threshold",
    "spec": {"sensor": "bp", "above": {"sys": 150, "dia": 95}, "hysteresis": 5},
    "ladder": [["anna", 600]],
    "checkin": True,
}
PANIC = {
    "name": "panic",
    "user": "mum",
    "kind": "event",
    "spec": {"sensor": "panic"},
    "ladder": [["anna", 600]],
}


@pytest.mark.parametrize(("rule", "sensor", "data"), [(BP, "bp", {"sys": 171, "dia": 99}),
                                                      (PANIC, "panic", {})])  # fmt: skip
async def test_only_a_caregiver_on_the_ladder_acknowledges_from_her_own_device(
    house: Household, posts: Posts, rule: dict[str, Any], sensor: str, data: dict[str, Any]
) -> None:
    clock = Clock(at(1, "08:00"))
    eng = engine(house, clock, ScriptedAnswers(None))  # the check-in goes unanswered
    for who in ("anna", "ben"):
        await admin.handle(eng, "caregivers.add", {"name": who, "urls": [posts.url(who)]})
    await admin.handle(eng, "rules.add", rule)
    await eng.store.run(lambda db: rec.set_state(db, "cursor", 0))
    owners = {"anna-phone": "anna", "ben-phone": "ben", "bob-tab": "bob", "kitchen": None}
    registry = await devices(house, owners)
    await house.store.run(devices_records.set_settings, "kitchen", {"shared": ("anna", "mum")})
    await registry.reload_settings()
    refused: list[tuple[str, str]] = []
    eng.owners, eng.refuse = registry, lambda device, why: refused.append((device, why))
    house.event("cuff-1" if sensor == "bp" else "panic-1", sensor, clock.now, **data)
    await eng.step()
    await eng.effects.settle()
    [alert] = await eng.store.run(rec.alerts, ("open",))

    async def ack(device: str) -> str:
        eng.device_answered(device, Ack(alert["id"]), b"")
        for task in list(eng._acks):
            await task
        return (await eng.store.run(rec.alert, alert["id"]))["state"]

    # Another member's device, a caregiver not on this ladder, Anna on a shared speaker.
    for device in ("bob-tab", "ben-phone", "kitchen"):
        assert await ack(device) == "open", device
    assert [d for d, _ in refused] == ["bob-tab", "ben-phone", "kitchen"]
    assert "bob is not on the ladder" in refused[0][1]
    assert await ack("anna-phone") == "acknowledged"
    assert (await eng.store.run(rec.alert, alert["id"]))["closed_by"] == "acknowledged by anna"


async def test_an_alert_reaches_its_persons_and_her_caregivers_devices(
    house: Household,
) -> None:
    owners = {
        "mum-speaker": "mum",
        "anna-phone": "anna",
        "ben-phone": "ben",
        "bob-tab": "bob",
        "hall": None,
    }
    registry = await devices(house, owners)
    sent = Frames()
    alerts = HouseholdAlerts(registry, sent, None, None)
    registry.on_hello = alerts.said_hello  # as fayd.service.wiring.build wires it
    alerts.household = lambda: Watchers({"anna": frozenset({"mum"}), "ben": frozenset({"dad"})})
    alert = Alert("a-1", "emergency", "critical", "I've fallen and my hip hurts", 1.0, "mum")
    alerts.publish(alert)
    told = {device for device, frame in sent.sent if isinstance(frame, Alert)}
    # hall is nobody's: the default user's (mum here), so hers too.
    assert told == {"mum-speaker", "anna-phone", "hall"}
    shown = {frame.text for _, frame in sent.sent if isinstance(frame, Alert)}
    assert shown == {"Mum needs help"}  # never the words said
    # A device of hers that says hello later is told of the open alert.
    sent.sent.clear()
    await registry.hello(registry.state("mum-watch"), Hello("mum-watch", ("screen",), user="mum"))
    assert [d for d, f in sent.sent if isinstance(f, Alert)] == ["mum-watch"]


async def test_a_hello_cannot_change_a_devices_owner(house: Household) -> None:
    registry = await devices(house, {"bob-tab": "bob"})
    await registry.hello(registry.state("bob-tab"), Hello("bob-tab", ("mic",), user="alice"))
    assert registry.user_of("bob-tab") == "bob"
    [(device, error)] = [(d, f) for d, f in registry.sender.sent if isinstance(f, Error)]
    assert (device, error.code) == ("bob-tab", "user-claim")
    # The household changes it.
    await house.store.run(devices_records.set_settings, "bob-tab", {"user": "alice"})
    await registry.reload_settings()
    assert registry.user_of("bob-tab") == "alice"
