"""The composition root: builds the agent and the device side from the loaded models and
wires their ports — the agent hears through the devices' Listener port and answers through
the Sender; it sees and acts on devices through ``DeviceActions``. Nothing below
``fayd.service`` builds another package's objects or imports this."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fayd.agent import Chat, Dialogue
from fayd.agent.announce import AnnounceSettings, Speaker
from fayd.agent.care.answers import yes_no
from fayd.agent.clock import days
from fayd.agent.expect import AskYesNo, Expectations
from fayd.agent.expression import load_rules
from fayd.agent.features import all_skills
from fayd.agent.language.intents import IntentClassifier, load_examples
from fayd.agent.ports import CareDays, CareRules, Readings
from fayd.agent.prefs import Preferences
from fayd.agent.understand.qa import DEFAULT_QA, HouseholdQa, QaTable
from fayd.agent.understand.router import Router
from fayd.agent.understanding import Understanding
from fayd.beat import Pulse
from fayd.care import AppriseDeliver, CareEngine, Effects
from fayd.care.daily import DailyDigest, parse_times
from fayd.care.ports import Announcer, Asker
from fayd.config import Config
from fayd.devices.actions import DeviceActions
from fayd.devices.hub import DeviceHub
from fayd.devices.microphones import Microphones
from fayd.devices.ota import OtaManager
from fayd.devices.registry import DeviceRegistry
from fayd.devices.sensors import EventMemory, EventWriter
from fayd.embedding.remembered import RememberedVectors
from fayd.errors import ConfigError
from fayd.memory import ImportanceScorer, Memory, MemoryConfig
from fayd.memory.jobs import run_jobs_forever
from fayd.memory.reembed import reembed_in_background
from fayd.protocol import Alert, Error, Sender
from fayd.reminders import ReminderBook, Scheduler, SystemClock
from fayd.reminders.queue import Settings as CheckSettings
from fayd.service.care_rules import RulesInWords
from fayd.service.checkins import CareCheckIns, MedicationFromCheckIns
from fayd.service.checkins import meaning as checkin_meaning
from fayd.service.engines import Engines
from fayd.service.household_alerts import HouseholdAlerts
from fayd.service.household_tools import HouseholdTools, give_tools
from fayd.service.readings import StoredReadings
from fayd.service.wellbeing import SaidWellbeing
from fayd.store import Store
from fayd.zone import household_zone, zone_name

#: The router's example phrases, embedded (fayd.embedding.remembered), in state_dir/cache.
EXAMPLE_VECTORS = "example-vectors.npz"

#: Set by the test harness only: the daemon's clock runs this many seconds ahead, and
#: ``POST /test/clock`` may move it (docs/reminders.md).
TEST_CLOCK = "FAYD_TEST_CLOCK"


@dataclass
class Parts:
    """Everything between the transports and the API, built once per start."""

    memory: Memory | None
    dialogue: Dialogue
    registry: DeviceRegistry
    microphones: Microphones
    events: EventWriter
    event_memory: EventMemory | None
    hub: DeviceHub
    ota: OtaManager
    care: CareEngine
    reminders: Reminding
    #: The daily digest (``[care] digest_time``); its task runs only when a time is set.
    digest: DailyDigest | None = None
    #: The household's documents and MCP servers, for the model's look-ups.
    tools: HouseholdTools | None = None

    def tasks(self, cfg: Config, engines: Engines) -> dict[str, Callable[[], Awaitable[None]]]:
        """The long-lived tasks, by component name, for the supervisor (each restarted
        and reported on its own when it fails)."""
        found: dict[str, Callable[[], Awaitable[None]]] = {
            "hub": self.hub.run,
            "settings": self.registry.poll_settings,
            "events": self.events.run,
            "care": self.care.run,
            "reminders": self.reminders.scheduler.run,
            "announcer": self.reminders.speaker.run,
        }
        if self.tools is not None:
            found["tools"] = self.tools.run
        if self.digest is not None and self.digest.enabled:
            found["digest"] = self.digest.run
        memory, event_memory = self.memory, self.event_memory
        if event_memory is not None:
            found["event_memory"] = event_memory.run
        if memory is not None:  # reflection (23:00) and portrait (11:30), once when overdue
            llm, name = engines.llm, cfg.agent.agent_name
            found["memory_jobs"] = lambda: run_jobs_forever(memory, llm, agent_name=name)
            # Nodes without a vector of the current embedding model (it changed): embedded
            # again in the background, once; the task returns when they are done.
            found["memory_reembed"] = lambda: reembed_in_background(memory)
        return found

    def pulses(self) -> dict[str, Pulse]:
        """The components that beat (fayd.beat.Pulse), by component name."""
        found = {
            "hub": self.hub.pulse,
            "events": self.events.pulse,
            "care": self.care.pulse,
            "reminders": self.reminders.scheduler.pulse,
            "announcer": self.reminders.speaker.pulse,
        }
        if self.event_memory is not None:
            found["event_memory"] = self.event_memory.pulse
        if self.digest is not None and self.digest.enabled:
            found["digest"] = self.digest.pulse
        return found

    def device_status(self, device: str) -> dict[str, Any]:
        """What ``fayd status`` adds to a device's stored row: live state and counters."""
        return {
            **self.registry.live_status(device),
            **self.microphones.status(device),
            **self.dialogue.status(device),
        }

    def frame_stats(self) -> dict[str, Any]:
        event_memory = self.event_memory
        return {
            **self.hub.stats(),
            "events_stored": self.events.stored,
            "events_replayed": self.events.replays,
            "events_remembered": event_memory.remembered if event_memory else 0,
        }


@dataclass
class Reminding:
    """Reminders and what fayd says first: the clock, the book, the scheduler, the speaker."""

    clock: SystemClock
    book: ReminderBook
    scheduler: Scheduler
    speaker: Speaker
    expectations: Expectations

    @property
    def clock_movable(self) -> bool:
        return TEST_CLOCK in os.environ

    @property
    def yes_no(self) -> AskYesNo:
        """The YesNo port (fayd.agent.expect) for the care engine's check-ins."""
        return AskYesNo(self.speaker, self.expectations, yes_no)

    def status(self) -> dict[str, Any]:
        return {**self.scheduler.status(), **self.speaker.status()}


def test_clock() -> SystemClock:
    """The real clock; under the test harness only (``FAYD_TEST_CLOCK`` = an offset in
    seconds), moved by that much and by ``POST /test/clock`` (docs/reminders.md)."""
    offset = os.environ.get(TEST_CLOCK)
    if offset is None:
        return SystemClock()
    try:
        return SystemClock(float(offset))
    except ValueError as exc:
        raise ConfigError(f"{TEST_CLOCK}={offset!r}: an offset in seconds") from exc


def understanding(
    cfg: Config,
    store: Store,
    engines: Engines,
    devices: DeviceActions,
    memory: Memory | None,
    clock: SystemClock | None = None,
    reminders: ReminderBook | None = None,
    expectations: Expectations | None = None,
    days: CareDays | None = None,
    rules: CareRules | None = None,
    readings: Readings | None = None,
) -> Understanding:
    """The router (its intents embedded once, now) and the skills. A broken qa.csv or
    intents file stops the start with the file, line and reason (a ConfigError)."""
    skills = all_skills()
    extra = [Path(cfg.agent.intents)] if cfg.agent.intents else []
    examples = load_examples(extra)
    embedder = engines.embedder
    if embedder is not None:
        embedder = RememberedVectors(embedder, cfg.state_dir / "cache" / EXAMPLE_VECTORS)
    intents = IntentClassifier(embedder, examples) if embedder is not None else None
    # The household's rows before the shipped ones, read again when the file changes.
    qa = HouseholdQa(cfg.agent.qa_csv, skills.names) if cfg.agent.qa_csv else None
    qa = qa or QaTable.load(DEFAULT_QA, skills.names)
    router = Router(embedder, intents, qa)
    if isinstance(embedder, RememberedVectors):
        embedder.save()  # the examples' vectors, for the next start
    tz = household_zone(cfg)
    now = (lambda: clock.now().astimezone(tz)) if clock is not None else None
    prefs = Preferences(store)
    return Understanding(
        router,
        skills,
        devices,
        memory,
        prefs,
        tz,
        now,
        reminders,
        expectations,
        days,
        rules,
        readings if readings is not None else StoredReadings(store),
    )


def build(
    cfg: Config,
    store: Store,
    engines: Engines,
    sender: Sender,
    announce: Callable[[Alert], None] | None = None,
    conclude: Callable[[Alert], None] | None = None,
    speech: tuple[Announcer | None, Asker | None] = (None, None),
) -> Parts:
    """``announce``: an alert retained on MQTT; ``conclude``: its retained message cleared
    and its end told; ``speech``: the care check-ins' ports (by default the reminders'
    speaker and the user's next words: fayd.service.checkins)."""
    memory = _memory(cfg, store, engines)
    registry = DeviceRegistry(store, sender, cfg.agent.default_user)
    alerts = HouseholdAlerts(registry, sender, announce, conclude)
    registry.on_hello = alerts.said_hello
    effects = Effects(cfg.agent.default_user, alerts, memory, *speech)
    clock = test_clock()
    # A moved test clock moves the open questions' lifetimes too (a day later, "yes" is no
    # answer to the morning's offer).
    expectations = Expectations(lambda: time.monotonic() + clock.offset_s)
    care, digest = _care(cfg, store, sender, registry, alerts, effects, clock)

    def call_for_help(alert: Alert) -> bool:  # the emergency skill's: published, cared for
        alerts.publish(alert)
        care.report(alert)
        return care.will_tell(alert.user or cfg.agent.default_user)

    devices = DeviceActions(registry, sender, call_for_help)
    book = ReminderBook(store, clock, zone_name(cfg))
    tools = HouseholdTools(cfg, engines.embedder)
    dialogue = _dialogue(
        cfg, store, engines, sender, devices, memory, clock, book, expectations, digest, care
    )
    if dialogue.understanding is not None:
        give_tools(dialogue.chat, cfg, dialogue.understanding, [tools])
    reminding = _reminding(cfg, store, dialogue, devices, memory, book, expectations, clock)
    if speech == (None, None):  # the care check-ins speak through the reminders' speaker
        effects.announcer = reminding.speaker
        effects.asker = CareCheckIns(reminding.speaker, expectations)
    care.understand = checkin_meaning  # "right as rain" is fine; "no, I've fallen" no answer
    # A care line waiting to be said: is its alert still open (docs/reminders.md)?
    reminding.speaker.truths["care"] = lambda about: store.run(care.book.still_true, about)
    microphones = Microphones(engines.for_devices(), cfg.speech, dialogue)
    registry.on_settings = microphones.settings_changed
    event_memory = EventMemory(store, memory, cfg.agent.default_user) if memory else None

    def stored() -> None:
        care.wake()
        if event_memory is not None:
            event_memory.wake()

    events = EventWriter(store, sender, stored)
    if dialogue.understanding is not None:  # feeling unwell, kept as a care event
        now = lambda: clock.now().timestamp()  # noqa: E731
        dialogue.understanding.wellbeing = SaidWellbeing(store, stored, now)
    events.on_arrival = care.arrived
    hub = DeviceHub(store, registry, microphones, dialogue, events, sender)
    ota = OtaManager(sender)
    hub.answers += [ota, care]  # a firmware update's steps; a carer taking an alert
    return Parts(
        memory,
        dialogue,
        registry,
        microphones,
        events,
        event_memory,
        hub,
        ota,
        care,
        reminding,
        digest,
        tools,
    )


def _memory(cfg: Config, store: Store, engines: Engines) -> Memory | None:
    """Long-term memory, when an embedder loaded (without one, fayd runs without it)."""
    if engines.embedder is None:
        return None
    return Memory(
        store,
        engines.embedder,
        ImportanceScorer(engines.llm),
        MemoryConfig(default_user=cfg.agent.default_user),
        days.named,
    )


def _care(
    cfg: Config,
    store: Store,
    sender: Sender,
    registry: DeviceRegistry,
    alerts: HouseholdAlerts,
    effects: Effects,
    clock: SystemClock,
) -> tuple[CareEngine, DailyDigest]:
    """The care engine, told whose each device is, and its daily digest."""
    care = CareEngine(
        store, AppriseDeliver(), effects, household_zone(cfg), lambda: clock.now().timestamp()
    )
    care.owners, alerts.household = registry, lambda: care.household
    care.refuse = lambda device, why: sender.send(device, Error("not-allowed", why))
    clock.on_move(care.wake)
    digest = DailyDigest(
        care,
        parse_times(cfg.care.digest_time, cfg.care.digest_times),
        medication=MedicationFromCheckIns(store, household_zone(cfg)),
    )
    care.digest = digest
    return care, digest


def _dialogue(
    cfg: Config,
    store: Store,
    engines: Engines,
    sender: Sender,
    devices: DeviceActions,
    memory: Memory | None,
    clock: SystemClock,
    book: ReminderBook,
    expectations: Expectations,
    digest: DailyDigest,
    care: CareEngine,
) -> Dialogue:
    """The agent: the model's chat and the understanding (router and skills) before it."""
    chat = Chat(
        engines.llm,
        store,
        cfg.agent,
        cfg.llm,
        memory,
        cfg.state_dir / "playbooks",
        lambda: clock.now().timestamp(),
    )
    understood = understanding(
        cfg, store, engines, devices, memory, clock, book, expectations, digest, RulesInWords(care)
    )
    rules = load_rules(cfg.agent.action_rules or None)
    return Dialogue(
        chat, engines.for_agent(), sender, devices, rules, cfg.agent.default_user, understood
    )


def _reminding(
    cfg: Config,
    store: Store,
    dialogue: Dialogue,
    devices: DeviceActions,
    memory: Memory | None,
    book: ReminderBook,
    expectations: Expectations,
    clock: SystemClock,
) -> Reminding:
    """What fayd says first: the speaker (reminders, alarms, check-ins) and its scheduler."""
    rem = cfg.reminders
    speaker = Speaker(
        dialogue,
        devices,
        Preferences(store),
        book,
        expectations,
        memory,
        AnnounceSettings(rem.alarm_repeat_s, rem.alarm_max_s, rem.checkin_after_min * 60),
    )
    checks = CheckSettings(rem.checkin_after_min * 60.0, rem.checkin_tries)
    scheduler = Scheduler(store, clock, speaker.deliver, checks)
    book.wake = scheduler.wake
    return Reminding(clock, book, scheduler, speaker, expectations)
