"""A care rule said by a caregiver (docs/care.md, "Rules in words"): the cue phrases and slots
on many phrasings (and ones that must stay what they are), then the whole exchange through
the real router, the skills and a real SQLite store with the care engine's admin — read back,
kept on "yes" through check_rule, nothing kept on "no" or when refused."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fayd.agent.care.rules import keep_or_not
from fayd.agent.clock.pending import slots_json
from fayd.agent.language.text import language, normalize
from fayd.agent.understand.cues import cue
from fayd.agent.understand.slots import extract_slots
from fayd.care import admin
from fayd.service.care_rules import RulesInWords, room_device
from fayd.testing.care import Clock, Household, at, engine

NOW = datetime(2026, 6, 1, 19, 0, tzinfo=UTC)


def heard(text: str) -> tuple[str | None, dict[str, Any]]:
    """The cue's intent and, for a care rule, its slots in the evaluation data's form."""
    intent = cue(normalize(text))
    slots = extract_slots("care.rule", text, NOW, language(text)) if intent == "care.rule" else {}
    return intent, slots_json(slots)


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        (
            "Tell me if Mum hasn't moved by 10",
            {"who": "mum", "kind": "missing", "sensor": "motion", "by": "10:00"},
        ),
        (
            "let me know if dad isn't up by 9",
            {"who": "dad", "kind": "missing", "sensor": "motion", "by": "09:00"},
        ),
        (
            "Tell me if Mum hasn't been in the kitchen by ten",
            {"who": "mum", "kind": "missing", "sensor": "motion", "by": "10:00", "room": "kitchen"},
        ),
        (
            "If dad hasn't got up by half past eight, let me know",
            {"who": "dad", "kind": "missing", "sensor": "motion", "by": "08:30"},
        ),
        (
            "text me if Rose hasn't moved by 11 am",
            {"who": "rose", "kind": "missing", "sensor": "motion", "by": "11:00"},
        ),
        (
            "message me if mum hasn't had her blood pressure taken by 9",
            {"who": "mum", "kind": "missing", "sensor": "bp", "by": "09:00"},
        ),
        (
            "let me know if mum's blood pressure is over 150/95",
            {"who": "mum", "kind": "threshold", "sensor": "bp", "above": {"sys": 150, "dia": 95}},
        ),
        (
            "warn me if grandma's oxygen drops below 92",
            {"who": "grandma", "kind": "threshold", "sensor": "spo2", "below": {"value": 92}},
        ),
        (
            "tell me if dad's pulse goes over 120",
            {"who": "dad", "kind": "threshold", "sensor": "heart_rate", "above": {"value": 120}},
        ),
        (
            "tell me if the living room gets colder than 16 degrees",
            {
                "kind": "threshold",
                "sensor": "room_temperature",
                "below": {"value": 16},
                "room": "living room",
            },
        ),
        (
            "let me know if it gets colder than 15 in mum's bedroom",
            {
                "who": "mum",
                "kind": "threshold",
                "sensor": "room_temperature",
                "below": {"value": 15},
                "room": "bedroom",
            },
        ),
        (
            "tell me straight away if mum presses her alarm",
            {"who": "mum", "kind": "event", "sensor": "panic"},
        ),
        ("Tell me at once if dad falls", {"who": "dad", "kind": "event", "sensor": "fall"}),
        ("let me know if nan has a fall", {"who": "nan", "kind": "event", "sensor": "fall"}),
        (
            "tell me if mum calls for help",
            {"who": "mum", "kind": "event", "sensor": "emergency"},
        ),
        (
            "妈妈十点还没起床就告诉我",
            {"who": "妈妈", "kind": "missing", "sensor": "motion", "by": "10:00"},
        ),
        (
            "妈妈血压超过150/95就告诉我",
            {"who": "妈妈", "kind": "threshold", "sensor": "bp", "above": {"sys": 150, "dia": 95}},
        ),
        ("奶奶按了紧急按钮就通知我", {"who": "奶奶", "kind": "event", "sensor": "panic"}),
        (
            "tell me if mum hasn't moved for 3 hours",
            {"who": "mum", "kind": "inactivity", "minutes": 180},
        ),
        (
            "let me know if dad has been still for over an hour",
            {"who": "dad", "kind": "inactivity", "minutes": 60},
        ),
        (
            "tell me if there's no movement from gran for 90 minutes",
            {"who": "gran", "kind": "inactivity", "minutes": 90},
        ),
        ("妈妈三个小时没动就告诉我", {"who": "妈妈", "kind": "inactivity", "minutes": 180}),
    ],
)
def test_a_rule_said_fills_its_slots(text: str, slots: dict[str, Any]) -> None:
    assert heard(text) == ("care.rule", slots)


def test_a_limit_not_said_is_not_guessed() -> None:
    intent, slots = heard("let me know if mum's blood pressure gets too high")
    assert intent == "care.rule"
    assert slots == {"who": "mum", "kind": "threshold", "sensor": "bp"}


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("remind me to call mum at 10", "reminder.set"),
        ("tell me at six to ring dad", "reminder.set"),
        ("let me know in half an hour", "timer.set"),
        ("tell me when 10 minutes are up", "timer.set"),
        ("tell me if it's going to rain", "info.offline"),
        ("how was mum today", "care.day"),
        ("提醒我十点给妈妈打电话", "reminder.set"),
        ("can you tell me if mum called", None),
        ("mum hasn't moved much today", None),
        ("my blood pressure was over 150 this morning", None),
    ],
)
def test_what_is_no_rule_stays_what_it_is(text: str, intent: str | None) -> None:
    assert cue(normalize(text)) == intent


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("yes", "yes"),
        ("yes please", "yes"),
        ("keep it", "yes"),
        ("go ahead", "yes"),
        ("好的", "yes"),
        ("是的", "yes"),
        ("no", "no"),
        ("don't keep it", "no"),
        ("不要", "no"),
        ("not now", "later"),
        ("what's the time", None),
    ],
)
def test_the_answer_to_shall_i_keep_that(said: str, answer: str | None) -> None:
    assert keep_or_not(said) == answer


def test_a_room_is_its_sensor_the_persons_first() -> None:
    devices = frozenset({"kitchen-1", "kitchen-2", "hall-1", "living-room-1"})
    owners = {"kitchen-1": "dad", "kitchen-2": "mum", "living-room-1": "mum"}
    assert room_device(devices, owners, "kitchen", "mum") == "kitchen-2"
    assert room_device(devices, owners, "kitchen", "ben") == "kitchen-1"
    assert room_device(devices, owners, "living room", None) == "living-room-1"
    assert room_device(devices, owners, "bathroom", "mum") is None


# --- the whole exchange: real router, skills, store and care engine ------------------------


@pytest.fixture
def house(tmp_path: Path) -> Iterator[Household]:
    h = Household(tmp_path / "state")
    for device in ("kitchen-1", "living-room-1", "panic-1"):
        h.device(device, "mum")
    h.device("dad-watch", "dad")
    yield h
    h.close()


class Exchange:
    """Understanding as the daemon builds it, with the care rules' port on a real engine."""

    def __init__(self, house: Household, router: Any) -> None:
        from fayd.agent.expect import Expectations
        from fayd.agent.features import all_skills
        from fayd.agent.prefs import Preferences
        from fayd.agent.understanding import Understanding
        from fayd.devices.actions import DeviceActions
        from fayd.devices.registry import DeviceRegistry
        from fayd.testing.care import Frames

        self.clock = Clock(at(1, "19:00"))
        self.engine = engine(house, self.clock)
        frames = Frames()
        self.registry = DeviceRegistry(house.store, frames)
        devices = DeviceActions(self.registry, frames, lambda alert: None)
        now = datetime.fromtimestamp(self.clock.now, UTC)
        self.understanding = Understanding(
            router,
            all_skills(),
            devices,
            None,
            Preferences(house.store),
            UTC,
            lambda: now,
            expectations=Expectations(),
            rules=RulesInWords(self.engine),
        )

    async def say(
        self, text: str, user: str = "anna", device: str | None = None
    ) -> tuple[str, str]:
        """``user`` says ``text`` on their own phone (``{user}-phone``), or on ``device``."""
        from fayd.protocol import Hello

        if device is None:
            device = f"{user}-phone"
            if device not in self.registry.states:
                hello = Hello(device, ("mic", "speaker"), user=user)
                await self.registry.hello(self.registry.state(device), hello)
        decision = self.understanding.decide(text, user, device)
        outcome = await self.understanding.act(decision, text, user, device)
        return decision.intent, outcome.say if outcome else ""

    async def rules(self) -> list[dict[str, Any]]:
        return (await admin.rules_list(self.engine, {}))["rules"]


@pytest.fixture
async def talk(house: Household, router: Any) -> Exchange:
    ex = Exchange(house, router)
    await admin.caregivers_add(ex.engine, {"name": "anna", "urls": ["json://127.0.0.1:9/anna"]})
    return ex


@pytest.mark.models
async def test_read_back_then_kept_on_yes(talk: Exchange) -> None:
    intent, said = await talk.say("Tell me if Mum hasn't moved by 10")
    assert intent == "care.rule"
    assert said == (
        "I'll tell you, Anna, if Mum hasn't moved by 10:00 in the morning. "
        "I'll check with Mum first. Shall I keep that?"
    )
    assert await talk.rules() == []  # nothing until "yes"
    intent, said = await talk.say("yes")
    assert intent == "answer"
    assert said == (
        "Done: I'll tell you if Mum hasn't moved by 10:00 in the morning. It's kept as the "
        "care rule mum-motion-by-1000. If Mum calls to me for help, I'll tell you too."
    )
    assert await talk.rules() == [
        {
            "name": "mum-motion-by-1000",
            "user": "mum",
            "kind": "missing",
            "text": "mum: no motion by 10:00; warning; check-in → anna (10 min)",
        },
        {  # mum's first rule: her calls for help go to anna too
            "name": "mum-help",
            "user": "mum",
            "kind": "event",
            "text": "mum: emergency; critical; anna (10 min)",
        },
    ]
    talk.clock.now = at(2, "10:30")  # the next morning, no movement: it would alert
    tried = await admin.rules_test(talk.engine, {"name": "mum-motion-by-1000"})
    assert tried["would_alert"] == ["no motion by 10:00"]


@pytest.mark.models
async def test_no_keeps_nothing(talk: Exchange) -> None:
    _, said = await talk.say("let me know if dad isn't up by 9")
    assert said.startswith("I'll tell you, Anna, if Dad hasn't moved by 09:00 in the morning.")
    assert (await talk.say("no"))[1] == "All right, I haven't kept it."
    assert await talk.rules() == []


@pytest.mark.models
async def test_each_kind_with_its_sensor(talk: Exchange) -> None:
    _, said = await talk.say("tell me if mum hasn't been in the kitchen by ten")
    assert "if Mum hasn't been in the kitchen by 10:00 in the morning" in said
    await talk.say("yes")
    _, said = await talk.say("let me know if mum's blood pressure is over 150/95")
    assert "if Mum's blood pressure is above 150/95." in said
    await talk.say("yes please")
    _, said = await talk.say("tell me if the living room gets colder than 16 degrees")
    assert "if the living room temperature is below 16 degrees. I'll check with Mum" in said
    await talk.say("yes")
    _, said = await talk.say("tell me straight away if mum presses her alarm")
    assert said == (
        "I'll tell you, Anna, straight away if Mum presses the alarm button. Shall I keep that?"
    )
    await talk.say("yes")
    assert [r["text"] for r in await talk.rules()] == [
        "mum: no motion from kitchen-1 by 10:00; warning; check-in → anna (10 min)",
        "mum: emergency; critical; anna (10 min)",  # with her first rule, once
        "mum: bp sys above 150 or dia above 95; warning; check-in → anna (10 min)",
        "mum: room_temperature value below 16; warning; check-in → anna (10 min)",
        "mum: panic; critical; anna (10 min)",
    ]


@pytest.mark.models
async def test_what_cannot_be_kept_is_said_and_nothing_is_stored(talk: Exchange) -> None:
    _, said = await talk.say("tell me if mum hasn't moved by 10", user="ben")
    assert "you aren't one yet, Ben" in said
    assert "fayd care caregivers add ben URL" in said
    _, said = await talk.say("tell me if grandma hasn't moved by 10")
    assert said == "I have no one called Grandma in the household, so I can't watch over them."
    _, said = await talk.say("let me know if mum's blood pressure is over 350")
    assert said == (
        "I'm sorry, I can't keep that rule: spec.above.sys: bp sys is never above 300; "
        "this rule could never fire."
    )
    _, said = await talk.say("let me know if mum's blood pressure gets too high")
    assert "but not the limit, as a number" in said
    _, said = await talk.say("tell me if mum hasn't been in the bathroom by 9am")
    assert "I have no sensor in the bathroom, so any movement of Mum's counts." in said
    assert (await talk.say("no"))[1] == "All right, I haven't kept it."
    assert await talk.rules() == []


@pytest.mark.models
async def test_a_rule_that_became_wrong_before_yes_is_refused_whole(talk: Exchange) -> None:
    _, said = await talk.say("tell me if mum hasn't moved by 10")
    assert said.endswith("Shall I keep that?")
    body = {"name": "mine", "user": "mum", "kind": "missing", "spec": {"sensor": "motion"}}
    body["spec"]["by"] = "11:00"
    await admin.rules_add(talk.engine, {**body, "ladder": ["anna"]})  # said another way
    _, said = await talk.say("yes")
    assert said == (
        "I'm sorry, I couldn't keep it: overlaps rule 'mine': both watch motion for mum; "
        "change or remove 'mine' first."
    )
    assert [r["name"] for r in await talk.rules()] == ["mine", "mum-help"]


@pytest.mark.models
async def test_a_reminder_about_mum_stays_a_reminder(talk: Exchange) -> None:
    intent, _ = await talk.say("remind me to call mum at 10")
    assert intent == "reminder.set"
    assert await talk.rules() == []


@pytest.mark.models
async def test_said_in_chinese(talk: Exchange) -> None:
    intent, said = await talk.say("妈妈血压超过150/95就告诉我")
    assert intent == "care.rule"
    assert said == "Anna，如果妈妈的血压高于150/95，我会告诉你。我会先问问妈妈好不好。要保存吗？"
    intent, said = await talk.say("好的")
    assert intent == "answer" and said.startswith("好了：如果妈妈的血压高于150/95")
    assert [r["text"] for r in await talk.rules()] == [
        "mum: bp sys above 150 or dia above 95; warning; check-in → anna (10 min)",
        "mum: emergency; critical; anna (10 min)",
    ]


@pytest.mark.models
async def test_no_movement_for_hours_is_an_inactivity_rule_in_the_day(talk: Exchange) -> None:
    _, said = await talk.say("tell me if mum hasn't moved for 3 hours")
    assert said == (
        "I'll tell you, Anna, if Mum hasn't moved for 3 hours during the day "
        "(from 8 o'clock in the morning to 10 o'clock at night). "
        "I'll check with Mum first. Shall I keep that?"
    )
    await talk.say("yes")
    rule, _ = await talk.rules()
    assert rule["kind"] == "inactivity" and rule["name"] == "mum-inactivity"
    assert "180" in rule["text"] and "08:00-22:00" in rule["text"]
    _, said = await talk.say("let me know if mum has been still for an hour")
    assert said == (
        "There's already a rule watching that for Mum: mum-inactivity. To change it, remove "
        "that one first with: fayd care rules remove mum-inactivity."
    )
    assert len(await talk.rules()) == 2


# --- who is who (docs/security.md): only a caregiver of the person, on their own device ----


@pytest.mark.models
async def test_a_rule_is_not_said_from_a_shared_device(talk: Exchange) -> None:
    from fayd.protocol import Hello
    from fayd.store import devices_records

    await talk.engine.store.run(
        devices_records.set_settings, "kitchen-1", {"shared": ("anna", "mum")}
    )
    await talk.registry.reload_settings()
    hello = Hello("kitchen-1", ("mic", "speaker"))
    await talk.registry.hello(talk.registry.state("kitchen-1"), hello)
    _, said = await talk.say("tell me if mum hasn't moved by 10", device="kitchen-1")
    assert said.startswith("I can only set up care rules from your own device")
    assert (await talk.say("yes", device="kitchen-1"))[0] != "answer"
    assert [r["name"] for r in await talk.rules()] == []


@pytest.mark.models
async def test_a_caregiver_of_dad_only_sets_no_rule_for_mum(talk: Exchange) -> None:
    await admin.caregivers_add(
        talk.engine, {"name": "ben", "urls": ["json://127.0.0.1:9/ben"], "for": ["dad"]}
    )
    _, said = await talk.say("tell me if mum hasn't moved by 10", user="ben")
    assert said == (
        "I'm sorry, you aren't down as one of the people who look after Mum, so I can't set "
        "that up for you."
    )
    _, said = await talk.say("tell me if dad hasn't moved by 10", user="ben")
    assert said.endswith("Shall I keep that?")
    # The confirmation must come from ben's own device too: anna's "yes" keeps nothing.
    await talk.say("yes", user="anna")
    assert [r["name"] for r in await talk.rules()] == []
    await talk.say("yes", user="ben")
    assert [r["user"] for r in await talk.rules()] == ["dad", "dad"]
