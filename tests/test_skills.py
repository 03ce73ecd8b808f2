"""Skills through the agent's understanding, on real parts: a real SQLite store and memory
(the MiniLM embedder), the real device registry and DeviceActions whose frames are kept as
a transport would send them, the real router; the household's clock is fixed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time
from pathlib import Path

import pytest

from fayd.agent.features import all_skills
from fayd.agent.prefs import Preferences, QuietHours
from fayd.agent.understand.router import Router
from fayd.agent.understanding import Understanding
from fayd.devices.actions import DeviceActions
from fayd.devices.registry import DeviceRegistry
from fayd.memory import Memory
from fayd.protocol import Alert, Command, Hello, Human
from fayd.reminders import ReminderBook
from fayd.store import Store
from fayd.testing.clock import SimClock

from .conftest import Frames

pytestmark = pytest.mark.models
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # a Tuesday


class House:
    def __init__(self, store: Store, router: Router, embedder, robot: bool = True) -> None:
        self.store = store
        self.frames = Frames()
        self.announced: list[Alert] = []
        self.registry = DeviceRegistry(store, self.frames)
        self.devices = DeviceActions(self.registry, self.frames, self.announced.append)
        self.memory = Memory(store, embedder)
        self.prefs = Preferences(store)
        self.robot = robot
        self.clock = SimClock(NOW)
        self.book = ReminderBook(store, self.clock, "UTC")
        self.understanding = Understanding(
            router,
            all_skills(),
            self.devices,
            self.memory,
            self.prefs,
            UTC,
            clock=lambda: self.clock.now(),
            reminders=self.book,
        )

    async def chatted(self, exchange: str) -> None:
        """Small talk kept as its exchange, as the chat writes it (fayd.agent.chat)."""
        await asyncio.to_thread(
            self.memory.remember,
            exchange,
            "ann",
            "observation",
            "conversation",
            False,
            [],
            "conversation",
        )

    async def start(self) -> House:
        hellos = [Hello("kitchen-1", ("mic", "speaker", "screen"), user="ann")]
        if self.robot:
            hellos.append(Hello("robo-1", ("robot",), user="ann"))
        for hello in hellos:
            await self.registry.hello(self.registry.state(hello.device), hello)
        return self

    async def ask(self, text: str, user: str = "ann", device: str = "kitchen-1"):
        decision = self.understanding.decide(text, user, device)
        outcome = await self.understanding.act(decision, text, user, device)
        return decision, outcome


@pytest.fixture
async def house(tmp_path: Path, router, embedder):
    store = Store(tmp_path / "fayd.db")
    yield await House(store, router, embedder).start()
    await asyncio.sleep(0.05)  # the background settings writes
    store.close()


async def test_the_clock(house: House) -> None:
    _, said = await house.ask("what time is it?")
    assert said.say == "It's 10 o'clock in the morning."
    _, said = await house.ask("what's the date today")
    assert said.say == "Today is Tuesday 1st December 2026."
    _, said = await house.ask("how many days until christmas")
    assert said.say == "24 days until Christmas, on Friday 25th December 2026."
    _, said = await house.ask("现在几点了")
    assert said.say == "现在是上午10点。"


async def test_a_gesture_moves_the_users_robot(house: House) -> None:
    decision, said = await house.ask("could you give me a wave")
    assert decision.intent == "device.gesture" and said.say == "Here's a wave for you!"
    [moved] = [f for f in house.frames.of("robo-1", Human) if f.action]
    assert moved.action.behavior == "wave" and moved.text == ""  # a bare action
    # A gesture the robot does not know says which ones it does.
    done = await all_skills().run("gesture", {"gesture": "backflip"}, _ctx(house))
    assert done.say.startswith("I don't know how to backflip. I can look surprised, look sad")
    assert done.say.endswith("dance, bow, cheer, jump, laugh or give you a hug.")


async def test_no_robot_says_so(tmp_path: Path, router, embedder) -> None:
    store = Store(tmp_path / "fayd.db")
    house = await House(store, router, embedder, robot=False).start()
    _, said = await house.ask("could you give me a wave")
    assert said.say == "There's no robot here to do that."
    assert not [f for _, f in house.frames.sent if isinstance(f, Human) and f.action]
    store.close()


async def test_volume_up_and_down_is_kept(house: House) -> None:
    _, said = await house.ask("I can't hear you very well")
    assert said.say == "Volume set to 100." and house.devices.volume_of("kitchen-1") == 100
    _, said = await house.ask("turn the volume down a bit")
    assert said.say == "Volume set to 80."
    commands = house.frames.of("kitchen-1", Command)
    assert [c.args["volume"] for c in commands if c.name == "volume"] == [100, 80]


async def test_remembered_facts_are_recalled_and_nothing_is_invented(house: House) -> None:
    _, said = await house.ask("what's my granddaughter's name?")
    assert said.say.startswith("You haven't told me that yet")
    _, said = await house.ask("remember that my granddaughter is called Lily")
    assert said.say == "I'll remember that your granddaughter is called Lily."
    _, said = await house.ask("what's my granddaughter's name?")
    assert said.say == "Your granddaughter's name is Lily."
    _, said = await house.ask("remember that the plumber comes on Thursday morning")
    _, said = await house.ask("when does the plumber come?")
    assert said.say == "You told me the plumber comes on Thursday morning."
    _, said = await house.ask("The plumber is coming on Tuesday morning")  # told, not asked
    assert said.say == "I'll remember that the plumber is coming on Tuesday morning."


async def test_the_persons_own_name_is_remembered_and_said_back(house: House) -> None:
    decision, said = await house.ask("what's my name?")
    assert decision.intent == "memory.recall"
    assert said.say.startswith("You haven't told me that yet")
    decision, said = await house.ask("My name is margaret")
    assert decision.intent == "memory.remember"
    assert said.say == "Nice to meet you, Margaret. I'll remember your name."
    for question in ("What's my name?", "do you know who I am?", "who am I"):
        decision, said = await house.ask(question)
        assert (decision.intent, said.say) == ("memory.recall", "Your name is Margaret."), question
    # Greeted by name from now on; another person in the house has a name of their own.
    _, said = await house.ask("good morning")
    assert said.say.startswith(("Hello, Margaret!", "Hello Margaret!"))
    _, said = await house.ask("what's my name?", user="bob")
    assert said.say.startswith("You haven't told me that yet")
    _, said = await house.ask("good morning", user="bob")
    assert said.say.startswith("Hello") and "Margaret" not in said.say
    _, said = await house.ask("我叫小红", user="mei")
    assert said.say == "小红，很高兴认识你！我记住你的名字了。"
    decision, said = await house.ask("我叫什么名字", user="mei")
    assert (decision.intent, said.say) == ("memory.recall", "你叫小红。")


async def test_what_fayd_knows_about_the_person_is_what_they_said(house: House) -> None:
    _, said = await house.ask("what do you know about me?")
    assert said.say.startswith("I don't know much about you yet.")
    await house.ask("my name is Margaret")
    await house.ask("remember that my granddaughter is called Lily")
    await house.ask("please remember that I take my pills with breakfast")
    await house.ask("I've put my glasses on the hall table")  # said in passing: a fact
    _, said = await house.ask("What do you know about me?")
    assert said.say == (
        "You've told me that your glasses are on the hall table, your granddaughter's name is"
        " Lily, your name is Margaret and you take your pills with breakfast."
    )


async def test_a_name_told_without_its_role_is_asked_about_never_guessed(house: House) -> None:
    told = "ann：My Harold, God rest him, used to do the crossword with me.\nFay：How lovely."
    await house.chatted(told)
    decision, said = await house.ask("What was my husband's name again? I forget things.")
    assert decision.intent == "memory.recall"
    assert said.say == (
        "You haven't told me your husband's name. You have told me about Harold: is that him?"
    )
    decision, said = await house.ask("Yes, that's him")
    assert (decision.intent, said.say) == (
        "answer",
        "Thank you. I'll remember that your husband's name is Harold.",
    )
    _, said = await house.ask("What was my husband's name?")
    assert said.say == "Your husband's name is Harold."
    # Not asked again of a name now known, nor of another role; "no" keeps nothing.
    _, said = await house.ask("What's my son called?")
    assert said.say.startswith("You haven't told me")
    assert "Harold" not in said.say


async def test_no_to_is_that_him_keeps_nothing(house: House) -> None:
    told = "ann：My Harold used to do the crossword.\nFay：How lovely."
    await house.chatted(told)
    _, said = await house.ask("What was my brother's name?")
    assert said.say.endswith("You have told me about Harold: is that him?")
    _, said = await house.ask("No")
    assert said.say == "All right. Tell me your brother's name whenever you like."
    _, said = await house.ask("What was my brother's name?")
    assert "Harold" in said.say  # asked again, never taken for him


async def test_a_visit_told_in_passing_is_recalled(house: House) -> None:
    # Small talk is kept as the exchange, as the chat writes it (fayd.agent.chat).
    told = "ann：My daughter Susan is coming on Sunday\nFay：How lovely!"
    await house.chatted(told)
    _, said = await house.ask("Who is coming on Sunday?")
    assert said.say == "You told me your daughter Susan is coming on Sunday."
    told = "ann：I had porridge for breakfast\nFay：How nice."
    await house.chatted(told)
    decision, said = await house.ask("What did I have for breakfast?")
    assert decision.intent == "memory.recall"
    assert said.say == "You told me you had porridge for breakfast."
    # Not an answer to another day's question, nor to another person's.
    _, said = await house.ask("Who is coming on Tuesday?")
    assert said.say.startswith("You haven't told me that yet")
    _, said = await house.ask("Who is coming on Sunday?", user="bob")
    assert said.say.startswith("You haven't told me that yet")


async def test_an_emergency_raises_an_alert_before_anything_is_said(house: House) -> None:
    decision, said = await house.ask("I've fallen over and I can't get up")
    assert decision.intent == "emergency" and decision.slots == {"kind": "fall"}
    assert said.importance == 10 and said.action is not None
    # No care rule sends this person's calls to a caregiver: said plainly, not promised.
    assert said.say.startswith("I'm here with you. I've raised the alarm, but I have no one")
    [alert] = house.announced
    assert (alert.kind, alert.severity, alert.user, alert.device) == (
        "emergency",
        "critical",
        "ann",
        "kitchen-1",
    )
    assert alert.text == "I've fallen over and I can't get up"
    # Handed to the household (fayd.service.household_alerts.HouseholdAlerts picks the devices:
    # tests/test_household.py), not sent to every device by the skill itself.
    for device in ("kitchen-1", "robo-1"):
        assert house.frames.of(device, Alert) == []


async def test_quiet_hours_are_kept(house: House) -> None:
    _, said = await house.ask("please don't talk to me after ten at night")
    assert said.say == (
        "All right. I won't start talking to you between 10 o'clock at night"
        " and 7 o'clock in the morning."
    )
    assert await house.prefs.quiet_hours("ann") == QuietHours(time(22, 0), time(7, 0))


async def test_an_ambiguous_time_is_asked_and_the_answer_completes_it(house: House) -> None:
    decision, said = await house.ask("remind me to take my pills at eight")
    assert decision.intent == "reminder.set" and said.ask is not None
    assert said.say == "Eight in the morning or in the evening?"
    decision, said = await house.ask("in the evening")
    assert decision.via == "follow-up" and decision.intent == "reminder.set"
    assert said.say == "I'll remind you to take your pills today at 20:00."
    # Another user's answer does not complete it; nor does the next question.
    await house.ask("remind me to take my pills at eight")
    decision, _ = await house.ask("in the evening", user="bob")
    assert decision.via != "follow-up"


async def test_an_impossible_time_is_said_and_nothing_is_done(house: House) -> None:
    _, said = await house.ask("remind me to call the doctor at 25 o'clock")
    assert "25" in said.say and "remind you" not in said.say
    assert said.detail.get("impossible")


def _ctx(house: House):
    from fayd.agent.skills import Context

    return Context("ann", "kitchen-1", "en", NOW, house.devices, house.memory, house.prefs)


async def test_reminders_are_set_read_back_listed_cancelled_and_snoozed(house: House) -> None:
    _, said = await house.ask("remind me to call my son on Sunday at five")
    assert said.say == "I'll remind you to call your son on Sunday 6 December at 17:00."
    _, said = await house.ask("every weekday at 8 remind me to take my tablets")
    assert said.say == (
        "I'll remind you to take your tablets every weekday at 08:00, starting tomorrow,"
        " Wednesday 2 December, at 08:00."
    )
    _, said = await house.ask("remind me to call the doctor tomorrow at 9am")
    decision, said = await house.ask("what reminders do I have?")
    assert decision.intent == "reminder.list"
    assert said.say == (
        "You have 3 reminders: take your tablets every weekday at 08:00; call the doctor"
        " tomorrow, Wednesday 2 December, at 09:00; call your son on Sunday 6 December at 17:00."
    )
    # Two match "call": which one?
    decision, said = await house.ask("cancel the reminder to call")
    assert decision.intent == "reminder.cancel"
    assert said.say.startswith("Which reminder: the first, call the doctor")
    decision, said = await house.ask("the second one")
    assert decision.intent == "answer"
    assert said.say == "All right, I've cancelled it: call your son on Sunday 6 December at 17:00."
    _, said = await house.ask("what's on today?")
    assert said.say == "Nothing more for today."
    # Tomorrow's only, a weekday's recurring one at its time tomorrow.
    decision, said = await house.ask("what's on tomorrow?")
    assert (decision.intent, said.say) == (
        "reminder.list",
        "Tomorrow: at 08:00, take your tablets; at 09:00, call the doctor.",
    )
    house.clock.advance(hours=14)  # Wednesday, 00:00
    _, said = await house.ask("what's on today?")
    assert said.say == "Today: at 08:00, take your tablets; at 09:00, call the doctor."
    house.clock.set(NOW)
    rows = await house.book.list("ann")
    assert [r["text"] for r in rows] == ["take your tablets", "call the doctor"]
    # Snooze: the one that fired last comes back in ten minutes.
    _, said = await house.ask("snooze it")
    assert said.say == "There's no reminder to put off just now."


async def test_bad_times_are_refused_and_nothing_is_kept(house: House) -> None:
    for text, reply in [
        ("remind me to feed the cat today at 8 am", "That time has already passed."),
        ("remind me to pay the rent on the 30th of February", "There is no 30 February."),
        ("remind me to call Jim at 25 o'clock", "There is no 25 o'clock."),
    ]:
        _, said = await house.ask(text)
        assert said.say == reply, text
    assert await house.book.list(None, everything=True) == []


async def test_timers_run_side_by_side(house: House) -> None:
    _, said = await house.ask("set a timer for 6 minutes for the eggs")
    assert said.say == "The eggs timer is set for 6 minutes, until 10:06."
    _, said = await house.ask("set a timer for 20 minutes")
    assert said.say == "A timer is set for 20 minutes, until 10:20."
    house.clock.advance(minutes=2)
    decision, said = await house.ask("how long is left on the timer?")
    assert decision.intent == "timer.left"
    assert said.say == "4 minutes left on the eggs timer; 18 minutes left on the timer."
    decision, said = await house.ask("cancel the eggs timer")
    assert decision.intent == "timer.cancel"
    assert said.say == "All right, I've cancelled it: the eggs timer that would ring at 10:06."
    _, said = await house.ask("how long is left?")
    assert said.say == "18 minutes left on the timer."


async def test_did_i_take_my_medicine_is_answered_from_the_records(house: House) -> None:
    decision, said = await house.ask("did I take my medicine today?")
    assert decision.intent == "medication.taken"
    assert said.say.startswith("I have no record of your medicine today")


async def test_snooze_names_what_comes_back(house: House) -> None:
    from fayd.reminders import records

    await house.ask("remind me to check the oven in 5 minutes")
    house.clock.advance(minutes=5)
    house.store.call(records.take_due, house.clock.now().timestamp(), 10)  # the scheduler's
    decision, said = await house.ask("snooze it for a quarter of an hour")
    assert decision.intent == "reminder.snooze"
    assert said.say == ("All right, I'll remind you again in 15 minutes, at 10:20: check the oven.")


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Turn on the kitchen light", "I'm sorry, I can't switch the kitchen light on"),
        ("could you switch my lamp off please", "I'm sorry, I can't switch your lamp off"),
        ("close the curtains", "I'm sorry, I can't close the curtains"),
        ("Turn the heating up", "I'm sorry, I can't turn the heating up"),
        ("把客厅的灯打开", "对不起，我没有连接家里的灯和电器"),
    ],
)
async def test_lights_and_appliances_are_not_pretended(
    house: House, said: str, answer: str
) -> None:
    decision, outcome = await house.ask(said)
    assert decision.intent == "home.control" and outcome.say.startswith(answer)
    assert not house.frames.sent  # nothing was sent to any device


@pytest.mark.parametrize(
    "said",
    ["I turned the heating off last night", "my son switched the lights on", "turn the volume up"],
)
async def test_a_switch_told_of_is_not_a_request(house: House, said: str) -> None:
    decision, _ = await house.ask(said)
    assert decision.intent != "home.control"


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Can you play some music?", "I'm sorry, I can't play music"),
        ("play me a song", "I'm sorry, I can't play music"),
        ("Call my daughter", "I'm sorry, I can't make phone calls."),
        ("I'm not feeling well, can you call my daughter", "I'm sorry, I can't make phone calls."),
        ("给我女儿打电话", "对不起，我不会打电话。"),
    ],
)
async def test_music_and_calls_are_not_pretended(house: House, said: str, answer: str) -> None:
    decision, outcome = await house.ask(said)
    assert decision.intent == "info.cannot" and outcome.say.startswith(answer)


async def test_a_call_to_make_later_is_still_a_reminder(house: House) -> None:
    decision, _ = await house.ask("remind me to call my daughter at five")
    assert decision.intent == "reminder.set"
    decision, _ = await house.ask("call me back later")
    assert decision.intent != "info.cannot"
