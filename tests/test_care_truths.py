"""Care that says only what happened (issue 21, item 5), on the daemon's own parts built in
the process (``fayd.service.wiring.build``: a real SQLite store, the device registry, the
care engine, the dialogue, the reminders' speaker), with devices saying hello as they would
and Apprise posting to a server on loopback. No model is loaded: nothing here needs one.

- A check-in is answered only on a device where it was said; with no speaker of the person
  online nothing is asked, and the caregiver reads exactly that.
- Words waiting to be said that are no longer true are dropped; each notice is said once,
  with the name capitalised.
- A call for help before any caregiver or rule is a care alert like any other.
- A timer with no speaker of the person's keeps its label, is shown by ``fayd status`` and
  is said where the person last spoke; never on another person's device.
- The household's kin words name its people, for the digest and the care rules alike."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fayd.care import admin
from fayd.care import records as rec
from fayd.care.household import person_called
from fayd.cli.main import _unheard_line
from fayd.config import AgentConfig, Config, PathsConfig
from fayd.protocol import Alert, Hello, Human, SensorEvent
from fayd.reminders.say import late
from fayd.service.engines import Engines
from fayd.service.wiring import Parts, build
from fayd.store import Store, devices_records
from fayd.testing.care import Posts


@dataclass
class Sent:
    """The frames fayd sends to devices (the transport's Sender), and the alerts it keeps
    retained on MQTT (``announce``) or clears there (``conclude``), as Home Assistant sees."""

    frames: list[tuple[str, object]] = field(default_factory=list)
    retained: dict[str, Alert] = field(default_factory=dict)

    def send(self, device: str, frame: object) -> bool:
        self.frames.append((device, frame))
        return True

    def said(self, device: str) -> str:
        """Everything said on ``device``, its text frames joined."""
        texts = [
            f.text
            for d, f in self.frames
            if d == device and isinstance(f, Human) and f.key == "text" and f.text
        ]
        return " ".join(texts)

    def announce(self, alert: Alert) -> None:
        self.retained[alert.id] = alert

    def conclude(self, alert: Alert) -> None:
        self.retained.pop(alert.id, None)


@dataclass
class Home:
    parts: Parts
    sent: Sent
    posts: Posts
    store: Store

    async def device(self, device: str, roles: tuple[str, ...], user: str | None) -> None:
        registry = self.parts.registry
        await registry.hello(registry.state(device), Hello(device, roles, user=user))

    async def say(self, text: str, device: str | None, user: str | None = None) -> str:
        """A typed turn on ``device`` (None: the command line, as ``fayd say``)."""
        turn = await self.parts.dialogue.say(text, user, device)
        return turn.answer if turn is not None else ""

    async def reading(self, device: str, sensor: str, at: float | None = None, **data: Any) -> None:
        event = SensorEvent(int(time.time() * 1000) % 10**9, sensor, at or time.time(), data)
        await self.store.run(devices_records.record_events, [(device, event)])

    async def step(self) -> list[dict[str, Any]]:
        """A pass of the care engine, then its notifications sent; the alerts as stored."""
        care = self.parts.care
        await care.step()
        await asyncio.sleep(0.05)  # the check-in or the line to the person gets going
        await care.step()
        await care.deliver_due()
        return await self.store.run(rec.alerts, ("open", "acknowledged", "resolved"))

    async def rule(self, **rule: Any) -> None:
        await admin.handle(self.parts.care, "rules.add", {"ladder": [["anna", 600]], **rule})


@pytest.fixture
async def home(tmp_path: Path, posts: Posts) -> AsyncIterator[Home]:
    cfg = Config(paths=PathsConfig(state_dir=str(tmp_path)), agent=AgentConfig(default_user="User"))
    store = Store(tmp_path / "fayd.db")
    sent = Sent()
    parts = build(cfg, store, Engines(), sent, sent.announce, sent.conclude)
    yield Home(parts, sent, posts, store)
    parts.care.effects.cancel()
    await parts.dialogue.close()
    store.close()


async def caregiver(home: Home, *names: str) -> None:
    for name in names:
        await admin.handle(
            home.parts.care, "caregivers.add", {"name": name, "urls": [home.posts.url(name)]}
        )


async def until(check: Callable[[], bool], within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, "not true in time"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def speaking(home: Home) -> AsyncIterator[None]:
    """The reminders' speaker running, as the daemon's ``announcer`` component."""
    task = asyncio.get_running_loop().create_task(home.parts.reminders.speaker.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


BP_CHECKIN = {
    "name": "bp-high",
    "user": "mum",
    "kind": "threshold",
    "spec": {"sensor": "bp", "above": {"sys": 150, "dia": 95}},
    "checkin": True,
}


# --- 1. A check-in is answered only where it was said -------------------------------------


async def test_a_check_in_is_answered_only_on_the_device_it_was_said_on(home: Home) -> None:
    await home.device("cuff-1", ("sensor",), "mum")
    await home.device("kitchen-1", ("mic", "speaker"), "mum")
    await home.device("mum-tablet", ("mic", "screen"), "mum")  # hers, but it has no speaker
    await caregiver(home, "anna")
    await home.rule(**BP_CHECKIN)
    await home.reading("cuff-1", "bp", sys=168, dia=97)
    await home.parts.care.step()
    await until(lambda: "Are you all right?" in home.sent.said("kitchen-1"))
    assert "blood pressure" in home.sent.said("kitchen-1")
    assert home.sent.said("mum-tablet") == ""

    # Typed on the command line, or on her tablet where nothing was asked: no answer.
    await home.say("I'm fine, thank you", None, "mum")
    await home.say("oh I'm fine", "mum-tablet")
    [alert] = await home.store.run(rec.alerts, ("open", "resolved"))
    assert alert["state"] == "open"

    reply = await home.say("Yes I'm all right, thanks", "kitchen-1")
    assert "glad" in reply
    await home.parts.care.effects.settle()
    [alert] = await home.step()
    assert alert["state"] == "resolved" and "said they are fine" in alert["closed_by"]
    assert home.posts.to("anna") == []


async def test_with_no_speaker_online_nothing_is_asked_and_the_caregiver_reads_so(
    home: Home,
) -> None:
    await home.device("cuff-1", ("sensor",), "mum")
    await caregiver(home, "anna")
    await home.rule(**BP_CHECKIN)
    await home.reading("cuff-1", "bp", sys=171, dia=99)
    await home.step()
    await home.parts.care.effects.settle()
    await home.step()
    [told] = home.posts.to("anna")
    assert "Mum has no speaker online, so I could not ask if all was well." in told["message"]
    assert "I asked" not in told["message"]

    # "I'm fine" typed to a question never asked resolves nothing.
    await home.say("I'm fine, thank you", None, "mum")
    [alert] = await home.store.run(rec.alerts, ("open", "resolved"))
    assert alert["state"] == "open" and alert["detail"]["answer"] == "unasked"

    # Her speaker comes later: the question was never kept, so it is not asked late.
    async with speaking(home):
        await home.device("kitchen-1", ("mic", "speaker"), "mum")
        await asyncio.sleep(1.5)
    assert home.sent.said("kitchen-1") == ""


# --- 2, 3. Dropped when no longer true; said once; names capitalised ------------------------


async def test_a_late_speaker_hears_only_what_is_still_true_and_each_notice_once(
    home: Home,
) -> None:
    await home.device("pendant-1", ("sensor",), "mum")
    await caregiver(home, "anna")
    await home.rule(name="fall", user="mum", kind="event", spec={"sensor": "fall"})
    for _ in range(2):  # a fall, taken by Anna; another fall: two alerts
        await home.reading("pendant-1", "fall", impact_g=3.1)
        opened = [a for a in await home.step() if a["state"] == "open"]
        await home.parts.care.acknowledge(opened[0]["id"], "anna")
        await home.parts.care.effects.settle()
    alerts = await home.store.run(rec.alerts, ("acknowledged",))
    assert len(alerts) == 2

    async with speaking(home):  # her speaker connects after both were taken
        await home.device("kitchen-1", ("mic", "speaker"), "mum")
        await until(lambda: "seen your alert" in home.sent.said("kitchen-1"))
        await asyncio.sleep(1.5)
    said = home.sent.said("kitchen-1")
    assert said.startswith("Anna has seen your alert.")  # capitalised …
    assert said.count("seen your alert") == 1  # … once, for the two alerts …
    assert "fall" not in said and "letting your family know" not in said  # … nothing stale
    assert home.parts.reminders.speaker.dropped == 2


def test_a_late_care_notice_keeps_its_name_and_says_when() -> None:
    due = datetime(2026, 6, 1, 14, 10, tzinfo=UTC)
    now = datetime(2026, 6, 1, 15, 0, tzinfo=UTC)
    said = late("Anna has seen your alert.", "care", due, now, "en")
    assert said == "Earlier, at 14:10: Anna has seen your alert."
    timer = late("Your oven timer is done.", "timer", due, now, "en")
    assert timer == "This was due at 14:10, 50 minutes ago: your oven timer is done."


# --- 4. A call for help before any caregiver -------------------------------------------------


async def test_a_call_for_help_before_any_caregiver_is_a_care_alert(home: Home) -> None:
    await home.device("mum-tablet", ("mic", "screen"), "mum")
    reply = await home.say("I've fallen and I can't get up", "mum-tablet")
    assert "no one to call" in reply  # true: nobody is set up
    [alert] = await home.step()
    assert alert["id"].startswith("a-") and alert["state"] == "open"
    assert alert["kind"] == "emergency" and alert["user"] == "mum"
    assert alert["id"] in home.sent.retained  # open in Home Assistant

    day = datetime.fromtimestamp(alert["opened_at"], home.parts.care.zone).date()
    digest = await home.parts.digest.text("mum", day)
    assert "I've fallen and I can't get up" in digest and "still open" in digest

    said_again = await home.say("help me, I've fallen", "mum-tablet")
    assert said_again
    alerts = await home.step()
    assert [a["state"] for a in alerts].count("open") == 1  # the same incident
    assert next(a for a in alerts if a["state"] == "open")["count"] == 2

    done = await admin.handle(home.parts.care, "alerts.ack", {"id": alert["id"], "by": "admin"})
    assert done["alert"]["state"] == "acknowledged"
    assert not home.sent.retained  # cleared in Home Assistant
    digest = await home.parts.digest.text("mum", day)
    assert "acknowledged by admin" in digest


# --- 5. Timers and reminders with nowhere to ring ---------------------------------------------


async def test_a_timer_with_no_speaker_of_hers_is_shown_then_said_where_she_last_spoke(
    home: Home,
) -> None:
    await home.device("mum-tablet", ("mic", "screen"), "mum")
    await home.device("dad-radio", ("mic", "speaker"), "dad")  # another person's
    await home.device("hall-1", ("mic", "speaker"), None)  # nobody's: the default user's
    reply = await home.say("set a timer for 1 minute for the oven", "mum-tablet")
    assert "oven" in reply
    reminding = home.parts.reminders
    async with speaking(home):
        reminding.clock.move(90)
        assert await reminding.scheduler.round() == 1
        await asyncio.sleep(1.5)
        assert home.sent.said("dad-radio") == "" and home.sent.said("hall-1") == ""
        status = reminding.speaker.status()
        [unheard] = status["unheard"]
        assert unheard["user"] == "mum" and unheard["text"] == "Your oven timer is done."
        line = _unheard_line(unheard)  # as ``fayd status`` prints it
        assert line.startswith("NOT SAID to mum") and "Your oven timer is done." in line

        # She speaks in the hall (fayd say --device hall-1 --user mum): it rings there.
        await home.say("what a day", "hall-1", "mum")
        await until(lambda: "oven timer is done" in home.sent.said("hall-1"))
        assert reminding.speaker.status()["unheard"] == []
    assert home.sent.said("dad-radio") == ""


async def test_a_persons_words_are_never_said_on_another_persons_speaker(home: Home) -> None:
    await home.device("mum-radio", ("mic", "speaker"), "mum")
    await home.device("dad-radio", ("mic", "speaker"), "dad")
    speaker = home.parts.reminders.speaker
    assert speaker.targets("mum") == ["mum-radio"]
    assert speaker.targets("dad") == ["dad-radio"]
    async with speaking(home):
        assert await speaker.announce("dad", "A reminder: the bins.")
        await asyncio.sleep(0.3)
    assert "bins" in home.sent.said("dad-radio") and home.sent.said("mum-radio") == ""


# --- 6. Kin words ---------------------------------------------------------------------------


def test_one_resolver_finds_a_person_in_any_case() -> None:
    members = {"Mum", "dad", "Nana"}
    assert person_called(["mum", "mom", "mother"], members) == "Mum"
    assert person_called(["gran", "granny", "nan", "nana"], members) == "Nana"
    assert person_called(["DAD"], members) == "dad"
    assert person_called(["auntie"], members) is None


async def test_kin_words_find_the_person_the_digest_names(home: Home) -> None:
    await home.device("mum-tablet", ("mic", "screen"), "Mum")  # kept as "Mum"
    await home.device("nan-radio", ("mic", "speaker"), "nana")
    await home.device("anna-phone", ("mic", "screen"), "anna")
    await caregiver(home, "anna")
    readback = await home.say("Let me know if mum's oxygen goes under 92", "anna-phone")
    assert "no one called" not in readback and "Mum" in readback and "92" in readback
    kept = await home.say("yes please", "anna-phone")
    assert "Mum-spo2" in kept
    readback = await home.say("tell me if my nan hasn't moved by 10", "anna-phone")
    assert "no one called" not in readback and "10:00" in readback, readback
    day = await home.say("how was mum today?", "anna-phone")
    assert day.startswith("Mum's day")


async def test_mum_said_by_a_caregiver_of_one_person_is_that_person(home: Home) -> None:
    # The household keeps her as "margaret"; Anna, added for her, calls her Mum.
    await home.device("margaret-kitchen", ("mic", "speaker"), "margaret")
    await home.device("anna-phone", ("mic", "screen"), "anna")
    await home.device("bob-phone", ("mic", "screen"), "bob")
    await admin.handle(
        home.parts.care,
        "caregivers.add",
        {"name": "anna", "urls": [home.posts.url("anna")], "for": ["margaret"]},
    )
    readback = await home.say("Tell me if Mum's oxygen drops below 92.", "anna-phone")
    assert "no one called" not in readback and "Mum" in readback and "92" in readback
    assert "margaret-spo2" in await home.say("Yes please, keep it.", "anna-phone")
    day = await home.say("How did Mum get on today?", "anna-phone")
    assert day.startswith("Margaret's day"), day
    # Someone who looks after no one in particular has no "Mum" here.
    assert "no one called" in await home.say("How was Mum today?", "bob-phone")


async def test_a_call_for_help_reaches_the_caregiver_added_for_her_with_no_rule(home: Home) -> None:
    # Anna was added for Margaret and no rule was ever written: a stroke said aloud must
    # still reach her, and Margaret must hear that her family is being told.
    await home.device("margaret-kitchen", ("mic", "speaker"), "margaret")
    await admin.handle(
        home.parts.care,
        "caregivers.add",
        {"name": "anna", "urls": [home.posts.url("anna")], "for": ["margaret"]},
    )
    await home.step()  # the household as the engine knows it
    said = "My left arm's gone numb and my face feels all droopy on one side."
    reply = await home.say(said, "margaret-kitchen")
    assert "letting your family know" in reply and "no one to call" not in reply
    [alert] = await home.step()
    assert alert["kind"] == "emergency" and alert["user"] == "margaret"
    await until(lambda: bool(home.posts.to("anna")))
    [told] = home.posts.to("anna")
    assert "Margaret" in told["title"] and "droopy" in told["message"]
