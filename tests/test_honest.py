"""The honest skills behind the gate (issue 21) through the agent's understanding, on real
parts: a SQLite store whose sensor events are written by the daemon's own function, the
readings read back by the service's ``StoredReadings``, memory with the MiniLM embedder,
the reminder book, the real router. A reading is said only when it is in the records."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fayd.agent.expect import Expectations
from fayd.agent.features import all_skills
from fayd.agent.prefs import Preferences
from fayd.agent.understanding import Understanding
from fayd.devices.actions import DeviceActions
from fayd.devices.registry import DeviceRegistry
from fayd.memory import Memory
from fayd.protocol import Hello
from fayd.reminders import ReminderBook
from fayd.service.readings import StoredReadings
from fayd.testing.care import Household
from fayd.testing.clock import SimClock

from .conftest import Frames

pytestmark = pytest.mark.models
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # a Tuesday


def at(hours_ago: float) -> float:
    return (NOW - timedelta(hours=hours_ago)).timestamp()


class Home:
    def __init__(self, folder: Path, router, embedder) -> None:
        self.house = Household(folder)
        self.store = self.house.store
        self.frames = Frames()
        self.registry = DeviceRegistry(self.store, self.frames)
        self.devices = DeviceActions(self.registry, self.frames, lambda alert: False)
        self.memory = Memory(self.store, embedder)
        self.clock = SimClock(NOW)
        self.book = ReminderBook(self.store, self.clock, "UTC")
        self.understanding = Understanding(
            router,
            all_skills(),
            self.devices,
            self.memory,
            Preferences(self.store),
            UTC,
            clock=lambda: self.clock.now(),
            reminders=self.book,
            expectations=Expectations(),
            readings=StoredReadings(self.store),
        )

    async def start(self) -> Home:
        hello = Hello("kitchen-1", ("mic", "speaker"), user="ann")
        await self.registry.hello(self.registry.state(hello.device), hello)
        for device, user in (("cuff-1", "ann"), ("clip-1", "ann"), ("cuff-2", "bob")):
            self.house.device(device, user)
        return self

    async def ask(self, text: str, user: str = "ann") -> str:
        decision = self.understanding.decide(text, user, "kitchen-1")
        outcome = await self.understanding.act(decision, text, user, "kitchen-1")
        assert outcome is not None, f"{text!r} went to the model ({decision.intent})"
        return outcome.say


@pytest.fixture
async def home(tmp_path: Path, router, embedder) -> AsyncIterator[Home]:
    h = await Home(tmp_path, router, embedder).start()
    yield h
    await asyncio.sleep(0.05)
    h.house.close()


async def test_no_reading_is_said_when_none_was_taken(home: Home) -> None:
    said = await home.ask("what was my blood pressure this morning?")
    assert (
        said
        == "I have no blood pressure reading for you. If you take one with the cuff, I'll keep it."
    )
    said = await home.ask("what's my oxygen level?")
    assert said.startswith("I have no oxygen reading for you")
    assert not any(c.isdigit() for c in said)
    said = await home.ask("我血压多少？")
    assert "没有" in said and not any(c.isdigit() for c in said)


async def test_the_latest_reading_is_said_with_its_time(home: Home) -> None:
    home.house.event("cuff-1", "bp", at(26), sys=131, dia=84)  # yesterday 08:00
    home.house.event("cuff-1", "bp", at(1 + 50 / 60), sys=152, dia=96, pulse=70)  # 08:10
    home.house.event("cuff-2", "bp", at(0.5), sys=170, dia=100)  # bob's, not ann's
    home.house.event("clip-1", "spo2", at(3), value=95)
    said = await home.ask("how was my blood pressure?")
    assert said == "Your last blood pressure reading was 152 over 96, this morning at 8:10."
    said = await home.ask("and what was my blood pressure yesterday?")
    assert said == "Your last blood pressure reading was 131 over 84, yesterday morning at 8:00."
    said = await home.ask("was my pressure ok today?")
    assert said.startswith("Your last blood pressure reading was 152 over 96")
    assert said.endswith("is for your nurse or doctor to say.")
    said = await home.ask("what are my sats?")
    assert said == "Your last oxygen reading was 95 percent, this morning at 7:00."
    said = await home.ask("我今天血压多少？")
    assert said == "你最近一次血压是152/96，今天8:10量的。"


async def test_a_reading_from_another_day_is_said_as_such(home: Home) -> None:
    home.house.event("cuff-1", "bp", at(50), sys=140, dia=90)  # Sunday 08:00
    said = await home.ask("what was my blood pressure today?")
    assert said == (
        "I have no blood pressure reading from today. The last one was 140 over 90, on"
        " Sunday 29 November at 8:00."
    )


async def test_a_reading_is_compared_with_a_named_days_side_by_side(home: Home) -> None:
    home.house.event("cuff-1", "bp", at(26 + 24), sys=142, dia=88)  # Sunday 08:00
    home.house.event("cuff-1", "bp", at(26), sys=139, dia=85)  # Monday 08:00
    home.house.event("cuff-1", "bp", at(2), sys=151, dia=93)  # this morning
    said = await home.ask("Is that higher than Sunday's?")
    assert said == (
        "Your last blood pressure reading was 151 over 93, this morning at 8:00. The one from"
        " Sunday was 142 over 88, on Sunday 29 November at 8:00."
    )
    said = await home.ask("what was my blood pressure on Monday?")
    assert said == "Your last blood pressure reading was 139 over 85, yesterday morning at 8:00."
    said = await home.ask("Is it lower than Friday's?")  # none that day: said so
    assert said == (
        "Your last blood pressure reading was 151 over 93, this morning at 8:00. I have none"
        " from Friday 27 November."
    )
    said = await home.ask("我今天血压比星期天的高吗？")
    assert said == "你最近一次血压是151/93，今天8:00量的；星期日那次是142/88，11月29日8:00量的。"


async def test_someone_elses_reading_is_not_told_to_anyone(home: Home) -> None:
    home.house.event("cuff-2", "bp", at(0.5), sys=170, dia=100)
    said = await home.ask("what's bob's blood pressure?")
    assert "170" not in said and said.startswith("I'm sorry, I can only talk about Bob's")
    said = await home.ask("what's my blood pressure?", user="bob")
    assert said.startswith("Your last blood pressure reading was 170 over 100")


async def test_a_dose_is_never_advised_and_a_reminder_to_ask_is_kept_on_yes(home: Home) -> None:
    said = await home.ask("I missed my morning tablet, should I take two at lunch?")
    assert said == (
        "I can't advise on doses: the packet or your pharmacist can tell you."
        " Shall I remind you to ask them?"
    )
    assert await home.book.list("ann") == []
    said = await home.ask("yes please")
    assert said == (
        "I'll remind you to ask the pharmacist about your dose tomorrow at 10:00 in the morning."
    )
    [kept] = await home.book.list("ann")
    assert kept["text"] == "ask the pharmacist about your dose"
    assert kept["next_at"] == datetime(2026, 12, 2, 10, 0, tzinfo=UTC).timestamp()


async def test_no_to_the_offer_keeps_nothing(home: Home) -> None:
    said = await home.ask("can I take ibuprofen with my blood pressure pills?")
    assert said.startswith("I can't advise on medicines: your pharmacist or doctor can tell you.")
    assert await home.ask("no thanks") == "All right."
    assert await home.book.list("ann") == []
    said = await home.ask("do I need to see a doctor about this rash?")
    assert said.startswith("I can't judge that for you: your doctor or nurse can.")
    said = await home.ask("我可以多吃一片药吗？")
    assert said.startswith("药该吃多少我不能给建议")


async def test_the_persons_past_is_answered_only_from_what_they_told(home: Home) -> None:
    said = await home.ask("what was the name of my first dog?")
    assert said == "You haven't told me that. Would you like to tell me?"
    said = await home.ask("我小时候在哪里长大的？")
    assert said.startswith("这个你还没告诉过我") and not any(c.isdigit() for c in said)
    await home.ask("remember that my first dog was a collie called Patch")
    said = await home.ask("what was the name of my first dog?")
    assert "Patch" in said and said.startswith("You told me")


async def test_the_world_today_is_declined_honestly(home: Home) -> None:
    said = await home.ask("is Strictly on tonight?")
    assert said.startswith("I can't see what's on television")
    said = await home.ask("did England win the rugby?")
    assert said.startswith("I don't know the results")
    said = await home.ask("how much is a pint of milk now?")
    assert said.startswith("I don't know today's prices")
