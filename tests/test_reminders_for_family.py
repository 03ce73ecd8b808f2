"""A reminder said for someone else ("remind Mum to drink some water at three"): kept as
hers, said on her own devices, and only when the speaker looks after her and speaks from
their own device. Through the real router, skills, care engine and a real SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fayd.agent.understand.slots import extract_slots
from fayd.care import admin
from fayd.care.daily import DailyDigest
from fayd.reminders import ReminderBook
from fayd.testing.care import Household
from fayd.testing.clock import SimClock

from .test_care_rules_said import Exchange

NOW = datetime(2026, 6, 1, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "lang", "slots"),
    [
        (
            "remind Mum to drink some water at three",
            "en",
            {"for": "mum", "what": "drink some water"},
        ),
        (
            "can you remind dad to take his tablets at 6pm",
            "en",
            {"for": "dad", "what": "take my tablets"},
        ),
        ("提醒妈妈三点喝水", "zh", {"for": "妈妈", "what": "喝水"}),
        ("remind me to call mum at 10", "en", {"what": "call mum"}),
    ],
)
def test_whom_a_reminder_is_for(text: str, lang: str, slots: dict[str, str]) -> None:
    found = extract_slots("reminder.set", text, NOW, lang)
    assert {k: found.get(k) for k in slots} == slots
    assert "when" in found
    assert "for" in found or "for" not in slots


class Family(Exchange):
    """The care rules' exchange, with the reminder book and the care digest's port."""

    def __init__(self, house: Any, router: Any) -> None:
        super().__init__(house, router)
        self.book = ReminderBook(house.store, SimClock(NOW), "UTC")
        self.understanding.reminders = self.book
        self.understanding.days = DailyDigest(self.engine, {})
        self.understanding.clock = lambda: NOW

    async def kept(self, user: str) -> list[dict[str, Any]]:
        return await self.book.list(user)


@pytest.fixture
async def family(tmp_path: Path, router: Any) -> AsyncIterator[Family]:
    house = Household(tmp_path / "state")
    house.device("kitchen-1", "mum")
    house.device("dad-watch", "dad")
    ex = Family(house, router)
    await admin.caregivers_add(ex.engine, {"name": "anna", "urls": ["json://127.0.0.1:9/a"]})
    await admin.caregivers_add(
        ex.engine, {"name": "ben", "urls": ["json://127.0.0.1:9/b"], "for": ["dad"]}
    )
    yield ex
    house.close()


@pytest.mark.models
async def test_a_caregiver_sets_a_reminder_for_mum(family: Family) -> None:
    intent, said = await family.say("Can you remind Mum to take her tablets at 3pm?")
    assert intent == "reminder.set"
    assert said == "I'll remind Mum to take her tablets today at 15:00."
    [row] = await family.kept("mum")
    assert row["text"] == "take your tablets"  # as it will be said to her
    assert row["kind"] == "medication"
    assert await family.kept("anna") == []


@pytest.mark.models
async def test_not_for_someone_they_do_not_look_after(family: Family) -> None:
    _, said = await family.say("remind mum to drink some water at three", user="ben")
    assert said == (
        "I'm sorry, you aren't down as one of the people who look after Mum, so I can't set a"
        " reminder for them."
    )
    _, said = await family.say("remind dad to drink some water at three", user="ben")
    assert said == "I'll remind Dad to drink some water today at 15:00."
    assert await family.kept("mum") == []
    assert [r["text"] for r in await family.kept("dad")] == ["drink some water"]


@pytest.mark.models
async def test_not_for_a_stranger_nor_from_a_shared_device(family: Family) -> None:
    _, said = await family.say("remind Gertrude to water the plants at 3pm")
    assert said == "I have no one called Gertrude in the household to remind."
    from fayd.protocol import Hello
    from fayd.store import devices_records

    await family.engine.store.run(
        devices_records.set_settings, "kitchen-1", {"shared": ("anna", "mum")}
    )
    await family.registry.reload_settings()
    await family.registry.hello(family.registry.state("kitchen-1"), Hello("kitchen-1", ("mic",)))
    _, said = await family.say("remind mum to drink some water at 3pm", device="kitchen-1")
    assert said.startswith("I can only set a reminder for Mum from your own device")
    assert await family.kept("mum") == []


@pytest.mark.models
async def test_said_in_chinese(family: Family) -> None:
    _, said = await family.say("提醒妈妈下午三点喝水")
    assert said == "好的，我会今天6月1日（星期一）15:00提醒妈妈喝水。"
    assert [r["text"] for r in await family.kept("mum")] == ["喝水"]
