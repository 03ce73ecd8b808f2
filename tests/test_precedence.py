"""The people in the room before the doors (fayd.precedence): a door's turn (an OpenAI
client, an avatar, ``fayd say``) does not start the model while a device's turn is in
progress, and a device's turn never waits for a door's that has not started."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from fayd.llm.local import PriorityGate
from fayd.precedence import BusyStretch, for_a_door, is_door_work

from .conftest import needs_mosquitto


def as_a_door(gate: PriorityGate, entered: threading.Event) -> threading.Thread:
    def run() -> None:
        for_a_door()
        leave = gate.enter(False)
        entered.set()
        leave()

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,))
    thread.start()
    return thread


def test_a_doors_generation_waits_for_a_devices_turn() -> None:
    gate = PriorityGate(exclusive=True)
    entered = threading.Event()
    with gate.hold():  # a device's turn: hearing, answering, speaking
        door = as_a_door(gate, entered)
        assert not entered.wait(0.3)
        leave = gate.enter(False)  # the device's own model call runs at once
        leave()
        assert not entered.is_set()
    door.join(10)
    assert entered.is_set()  # the device's turn is over: the door's runs


def test_a_doors_turn_does_not_hold_another_door_back() -> None:
    gate = PriorityGate(exclusive=True)
    entered = threading.Event()

    def door_turn() -> None:
        for_a_door()
        with gate.hold():  # a door's own turn holds background work, not other doors
            as_a_door(gate, entered).join(10)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(door_turn,))
    thread.start()
    thread.join(10)
    assert entered.is_set()


def test_the_mark_stays_with_the_doors_task() -> None:
    seen: list[bool] = []

    def door() -> None:
        for_a_door()
        seen.append(is_door_work())

    contextvars.copy_context().run(door)
    seen.append(is_door_work())
    assert seen == [True, False]


@needs_mosquitto
async def test_a_doors_turn_waits_for_the_devices_turn_in_progress(daemon) -> None:
    """A device's chit-chat (the model answers) is running; ``fayd say`` asks the time
    meanwhile. Its turn starts only once the device's is done, and says how long it waited."""
    daemon.add_device("room-1")
    async with daemon.sim("room-1") as device:
        await device.hello(roles=("mic",))
        await device.say_text("Tell me about your favourite season of the year.")
        async with asyncio.timeout(120):
            while True:
                kind, frame, _ = await device.received.get()
                if kind == "human" and frame.key == "log" and frame.value == "thinking":
                    break
        asked = asyncio.create_task(
            asyncio.to_thread(
                daemon.api, "POST", "/api/say", json={"text": "what time is it"}, timeout=60
            )
        )
        await device.collect_reply(120)
        answered = (await asked).json()
    assert answered["timings"].get("room_wait_ms", 0) > 0, answered["timings"]
    assert answered["reply"].startswith("It's")


def test_a_room_busy_too_long_holds_the_doors_once() -> None:
    stretch = BusyStretch()
    assert not stretch.wait(False, 0.0)
    assert stretch.wait(True, 100.0) and stretch.wait(True, 104.9)
    assert not stretch.wait(True, 105.0)  # busy for ROOM_WAIT_S: doors go on
    assert not stretch.wait(True, 130.0)  # and are not held again while it stays busy
    assert not stretch.wait(False, 131.0)
    assert stretch.wait(True, 132.0)  # a new stretch: they wait again
