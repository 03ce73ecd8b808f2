"""The people in the room before the doors (fayd.precedence): a door's turn (an OpenAI
client, an avatar, ``fayd say``) does not start the model while a device's turn is in
progress, and a device's turn never waits for a door's that has not started."""

from __future__ import annotations

import contextvars
import threading

from fayd.llm.local import PriorityGate
from fayd.precedence import for_a_door, is_door_work


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
