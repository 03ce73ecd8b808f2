"""The care engine: one supervised task that feeds the rules (fayd.care.evaluate) from the
stored sensor events and a minute's tick, opens, folds and resolves alerts, climbs each
alert's escalation ladder and sends the notifications.

Durable by construction: a step's evaluation (event cursor, rule states, alerts opened or
resolved, the notifications they queue) is one transaction, and so is each rung of a
ladder; what leaves fayd afterwards (MQTT, speech, memory, Apprise) is driven from what was
committed. A kill -9 at any point resumes from the last commit: a rung is queued once
(``care_outbox`` is unique per alert, rung, caregiver and URL), and a notification is
marked sent right after Apprise took it. The one window left: a crash between Apprise's
answer and that commit sends that one notification again (at-least-once, never lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
import time
from collections.abc import Callable
from datetime import tzinfo
from typing import Any

import sqlite_utils

from fayd.beat import Pulse, until_beat
from fayd.care import ladder
from fayd.care import records as rec
from fayd.care.alerts import AlertBook
from fayd.care.early import Early, Memo, urgent
from fayd.care.effects import Effects
from fayd.care.evaluate import Clear, Decision, Event, Fire, on_event, on_tick
from fayd.care.household import Household
from fayd.care.household import load as load_household
from fayd.care.notify import DeliveryError, retry_after, shown
from fayd.care.ports import Deliver, Digests, Owners
from fayd.care.rules import CareError, Rule
from fayd.errors import StoreError
from fayd.protocol import Ack, Alert, Error, Hello, SensorEvent
from fayd.store import Store

log = logging.getLogger(__name__)


class NotOnLadder(CareError):
    """Someone not on an alert's ladder tried to acknowledge it."""


#: The sensor name of a spoken call for help (the emergency skill's alert, ``report``).
EMERGENCY = "emergency"

#: Stored events read per step at most.
EVENT_BATCH = 2000
#: The engine looks at the time at least this often (missing-by, inactivity, silence).
TICK_S = 60.0
#: Notifications sent at once at most.
SEND_BATCH = 8


class CareEngine:
    def __init__(
        self,
        store: Store,
        deliver: Deliver,
        effects: Effects,
        zone: tzinfo,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.deliver = deliver
        self.effects = effects
        self.zone = zone
        self.clock = clock
        self.pulse = Pulse(TICK_S)
        self._wake = asyncio.Event()
        #: Calls for help raised by the agent (not stored as device events).
        self._reports: list[Event] = []
        self._watching: set[str] = set()  # users whose calls for help reach a caregiver
        self.sent = 0
        self.send_failures = 0
        #: The clock's time at the last pass that finished: the rules are judged up to here.
        self.checked_at: float | None = None
        #: A check-in's answer → "fine" / "trouble" / "silence" (the service reads it with
        #: the agent's words; the ladder's own patterns stand in without one).
        self.understand: Callable[[str | None], str] = ladder.understood
        effects.on_answer = self.answered
        effects.on_unasked = lambda alert_id, why: self.answered(alert_id, why, unasked=True)
        self.book = AlertBook(zone, lambda: effects.can_speak)
        #: Urgent events judged on arrival; alerts raised from memory (fayd.care.early).
        self.early = Early(self.book, deliver, zone)
        self._acks: set[asyncio.Task[None]] = set()
        #: The daily digest (fayd.care.daily), when the daemon runs one.
        self.digest: Digests | None = None
        #: Who looks after whom, as of the last pass (fayd.care.household).
        self.household = Household()
        #: Whose each device is (the registry); without it no device may acknowledge.
        self.owners: Owners | None = None
        #: Tells a device why its ``ack`` was refused (an error frame), when wired.
        self.refuse: Callable[[str, str], None] | None = None

    # --- inputs ---------------------------------------------------------------------------

    def wake(self) -> None:
        """New events are stored, or an alert was acknowledged: look now."""
        self._wake.set()

    def will_tell(self, user: str) -> bool:
        """Whether a call for help from ``user`` goes to a caregiver: a rule with a ladder
        watches their ``emergency`` events, or a caregiver looks after them (as of the last
        pass; the first is at start)."""
        return user in self._watching or bool(self.household.watchers(user))

    def report(self, alert: Alert) -> None:
        """The emergency skill raised ``alert`` (someone asked for help aloud): an event of
        sensor ``emergency`` for event rules; the care alert keeps the skill's id."""
        data = {"said": alert.text, "alert_id": alert.id, **alert.detail}
        user = alert.user or self.effects.default_user
        self._reports.append(Event(0, alert.device or "voice", user, EMERGENCY, alert.at, data))
        self.wake()

    def arrived(self, device: str, event: SensorEvent) -> None:
        """A sensor event has just come (not yet stored): an urgent rule it fires on
        judges it in the next pass, now, and from memory if the disk refuses that pass."""
        now = self.clock()
        ts = event.ts
        at = ts if ts is not None and rec.EARLIEST_TS <= ts <= now + 86400 else now
        user = (self.owners.user_of(device) if self.owners is not None else None) or ""
        data = event.data if isinstance(event.data, dict) else {}
        key = rec.event_key(device, event.epoch, event.seq)
        report = self.early.judge(Event(0, device, user, event.sensor, at, data, key))
        if report is not None:
            self._reports.append(report)
            self.wake()

    async def tell_everyone(self, title: str, body: str) -> int:
        """A notice of the household's own (the disk is full) to every caregiver, at once
        and without the disk; how many it reached."""
        if not self.early.memo.caregivers:  # before the first pass (a notice at start)
            with contextlib.suppress(StoreError):
                self.early.memo.caregivers = await self.store.run(rec.caregivers)
        return await self.early.tell_everyone(title, body)

    def device_answered(self, device: str, ack: Ack | Error | Hello, payload: bytes) -> None:
        """A device's answer (the hub tells every one): an ``ack`` from a carer's screen
        or button that names an alert acknowledges it for the device's owner — only from a
        device of their own, and only when they are on the alert's ladder."""
        if not isinstance(ack, Ack) or not ack.ok or not ack.ref:
            return
        if not ack.ref.startswith(("care-", "a-")):
            return

        async def take() -> None:
            try:
                await self.acknowledge_as(ack.ref or "", owner or "", device)
            except LookupError:
                log.info("device %s acked %s: no such care alert", device, ack.ref)
            except NotOnLadder as exc:
                log.warning("device %s: ack of %s refused: %s", device, ack.ref, exc)
                if self.refuse is not None:
                    self.refuse(device, str(exc))
            except Exception as exc:
                log.error("device %s acked %s; not kept: %s", device, ack.ref, exc)

        owner = self.owners.personal_owner(device) if self.owners is not None else None
        task = asyncio.get_running_loop().create_task(take())
        self._acks.add(task)
        task.add_done_callback(self._acks.discard)

    async def refresh_household(self) -> None:
        """Read who looks after whom now (a caregiver or rule was added or removed)."""
        self.household = await self.store.run(load_household)

    async def acknowledge_as(self, alert_id: str, who: str, where: str) -> dict:
        """``who`` (a caregiver, from ``where``: their device, Home Assistant) takes the
        alert; NotOnLadder unless they are on its ladder. LookupError: no such alert."""
        alert = await self.store.run(rec.alert, alert_id)
        if alert is None:
            raise LookupError(f"no care alert {alert_id!r}")
        await self.refresh_household()
        if not who:  # a shared device, or one nobody owns
            raise NotOnLadder(f"{alert_id} is taken only from the own device of a caregiver")
        if not self.household.may_acknowledge(who, alert):
            raise NotOnLadder(f"{who} is not on the ladder of {alert_id}")
        log.info("care alert %s: taken by %s from %s", alert_id, who, where)
        return await self.acknowledge(alert_id, who)

    # --- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        await self.store.run(_start_cursor)
        await self.refresh_household()  # the open alerts below go to the caregivers' devices
        # Retained on MQTT again: a crash before publishing is made good; an alert closed
        # in the last day (perhaps by ``fayd care`` while fayd was stopped) is cleared.
        recent = self.clock() - 86400
        for alert in await self.store.run(rec.alerts, ("open", "acknowledged", "resolved")):
            if alert["state"] == "open" or (alert["closed_at"] or 0) > recent:
                self.effects.publish(alert)
        try:
            await self._loop()
        finally:
            self.effects.cancel()

    async def _loop(self) -> None:
        while True:
            self.pulse.beat()
            try:
                await self.step()
            except Exception as exc:  # the disk, a bug in one rule: logged, tried again
                log.error("care step failed (retrying): %s", exc, exc_info=True)
            wait = await self._until_next()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            self._wake.clear()

    async def step(self) -> None:
        """One pass: new events and the tick, due rungs, due notifications."""
        now = self.clock()
        reports, self._reports = self._reports, []
        judged, told = frozenset(self.early.judged), dict(self.early.told)
        try:
            changes = await self.store.run(self._evaluate, now, reports, judged, told)
        except StoreError:  # the disk: urgent alerts from memory, and every report kept
            self._reports[:0] = await self.early.raise_from_memory(
                reports, now, self.effects.changed
            )
            raise
        self.early.written({r.data["alert_id"] for r in reports if "alert_id" in r.data})
        changes += await self.store.run(self.book.escalate, now)
        for what, alert in changes:
            self.effects.changed(what, alert)
        await self._send_due(now)
        self.checked_at = now

    async def _until_next(self) -> float:
        now = self.clock()
        due = await self.store.run(_next_deadline)
        # The minute's tick on the daemon's shared beat (fayd.beat): one wake-up with the
        # other pollers; a rung or a retry due sooner wakes it sooner.
        tick = until_beat(TICK_S)
        return max(0.05, min(tick, (due - now) if due is not None else tick))

    # --- evaluation (one transaction) -----------------------------------------------------

    def _evaluate(
        self,
        db: sqlite_utils.Database,
        now: float,
        reports: list[Event],
        judged: frozenset[str] = frozenset(),
        told: dict[str, Any] | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        """``judged``: keys of events judged on arrival (their stored copies are not shown
        to the urgent rules again); ``told``: alerts raised from memory (fayd.care.early)."""
        rules = rec.rules(db)
        self.household = load_household(db, rules)
        watch = [r for r in rules if r.kind == "event" and r.spec.get("sensor") == EMERGENCY]
        self._watching = {r.user for r in watch if r.ladder}
        kept = rec.state(db)
        cursor = start = int(kept.get("cursor", 0))
        events = rec.new_events(db, cursor, EVENT_BATCH)
        if events:
            cursor = events[-1].id
        seen = rec.last_seen(db)
        # Copies: the evaluation changes them in place, and only changes are written.
        states = {
            r.name: copy.deepcopy(kept.get(f"rule:{r.name}")) or _first_state(r, seen)
            for r in rules
        }
        self.early.memo = Memo(rules, copy.deepcopy(states), rec.caregivers(db))
        events = [_with_user(self.owners, ev) for ev in events]
        reports = [r for r in reports if not _judged_before(db, r, start)]
        decisions: list[tuple[Rule, Decision]] = []
        unwatched: list[Event] = []  # calls for help no rule fired on
        for ev in [*reports, *events]:
            before = len(decisions)
            for rule in rules:
                if ev.id and ev.key in judged and urgent(rule):
                    continue  # judged on arrival, as a report
                decisions += [(rule, d) for d in on_event(rule, states[rule.name], ev, self.zone)]
            fired = any(isinstance(d, Fire) for _, d in decisions[before:])
            if ev.sensor == EMERGENCY and ev.data.get("alert_id") and not fired:
                unwatched.append(ev)
        for rule in rules:
            decisions += [(rule, d) for d in on_tick(rule, states[rule.name], now, self.zone)]
        changes = []
        for rule, decision in decisions:
            if isinstance(decision, Fire):
                changes += self.book.fire(db, rule, decision, now)
            elif isinstance(decision, Clear):
                changes += self.book.clear(db, rule, decision, now)
        for ev in unwatched:  # before any caregiver or rule: a care alert all the same
            changes += self.book.unwatched(db, ev, now, self.household.watchers(ev.user))
        # Only what changed is written: an idle minute writes nothing (an SD card's wear).
        if cursor != kept.get("cursor"):
            rec.set_state(db, "cursor", cursor)
        for name, value in states.items():
            if value != kept.get(f"rule:{name}"):
                rec.set_state(db, f"rule:{name}", value)
        if len(events) == EVENT_BATCH:
            self._wake.set()  # more to read
        return _kept_from_memory(db, changes, told or {})

    # --- answers and acknowledgements -----------------------------------------------------

    async def answered(self, alert_id: str, answer: str | None, unasked: bool = False) -> None:
        """The person's answer to a check-in: "fine" resolves, anything else escalates.
        ``unasked``: nothing could ask it (``answer`` says why: offline, busy, failed): the
        ladder goes on now, and the caregivers read that nothing was asked."""
        meaning = ladder.UNASKED if unasked else self.understand(answer)
        done = await self.store.run(self.book.answer, alert_id, meaning, answer, self.clock())
        for what, alert in done:
            self.effects.changed(what, alert)
        self.wake()

    async def acknowledge(self, alert_id: str, by: str, state: str = "acknowledged") -> dict:
        """A caregiver (the API, the CLI, an MQTT ``ack``) took the alert: the ladder stops.
        ``state`` "resolved" closes it for good. LookupError: no such alert."""
        before = await self.store.run(rec.alert, alert_id)
        done = await self.store.run(self.book.acknowledge, alert_id, by, state, self.clock())
        self.effects.changed(state, done)
        if before is not None and before["state"] == "open" and done["state"] != "open":
            caregivers = await self.store.run(rec.caregivers)
            self.effects.taken(done, ladder.named(by) if by in caregivers else "Your family")
        self.wake()
        return done

    # --- sending --------------------------------------------------------------------------

    async def deliver_due(self) -> None:
        """Send what is due now, without the loop (``fayd care digest --send`` with the
        daemon stopped). Not while the loop runs: it would send a row twice."""
        await self._send_due(self.clock())

    async def _send_due(self, now: float) -> None:
        rows = await self.store.run(rec.due, now, SEND_BATCH)
        await asyncio.gather(*(self._send(row) for row in rows))
        if len(rows) == SEND_BATCH:
            self._wake.set()

    async def _send(self, row: dict[str, Any]) -> None:
        try:
            await self.deliver.send(row["url"], row["title"], row["body"])
        except (DeliveryError, OSError) as exc:
            self.send_failures += 1
            attempts = row["attempts"] + 1
            later = self.clock() + retry_after(attempts)
            await self.store.run(rec.failed, row["id"], str(exc), later)
            if attempts in (1, 5) or attempts % 20 == 0:
                log.error(
                    "care: notification to %s (%s) not delivered, try %d, retrying: %s",
                    row["caregiver"],
                    (await shown([row["url"]]))[0],
                    attempts,
                    exc,
                )
            return
        await self.store.run(rec.sent, row["id"], self.clock())
        self.sent += 1

    async def status(self) -> dict[str, Any]:
        """For ``fayd status``: open alerts and notifications that have not gone yet."""
        open_alerts = await self.store.run(rec.alerts, ("open",))
        stuck = await self.store.run(rec.undelivered)
        for row, seen in zip(stuck, await shown([r["url"] for r in stuck]), strict=True):
            row["url"] = seen
        unsaved = [a for a in self.early.told if a not in {o["id"] for o in open_alerts}]
        return {
            "open": len(open_alerts) + len(unsaved),
            "raised_from_memory": unsaved,  # not written yet: the disk refuses writes
            "sent": self.sent,
            "undelivered": stuck,
            "checked_at": self.checked_at,
        }


def _start_cursor(db: sqlite_utils.Database) -> None:
    """A first start reads events from now on, not the whole history."""
    if "cursor" not in rec.state(db):
        rec.set_state(db, "cursor", rec.last_event_id(db))


def _with_user(owners: Owners | None, ev: Event) -> Event:
    """A device whose hello the disk refused is not in the database yet: its person is the
    one the registry holds in memory."""
    if ev.user or owners is None:
        return ev
    return dataclasses.replace(ev, user=owners.user_of(ev.device) or "")


def _judged_before(db: sqlite_utils.Database, report: Event, cursor: int) -> bool:
    """A report of an event a pass before this one read from the database (a device sent
    it again after a restart): judged already."""
    if not report.key:
        return False
    stored = rec.stored_event_id(db, report.key)
    return stored is not None and stored <= cursor


def _kept_from_memory(
    db: sqlite_utils.Database, changes: list[tuple[str, dict[str, Any]]], told: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Alerts raised from memory, now written: the notifications already sent are marked
    so, and the alert is not announced again (it is published and remembered: "kept")."""
    out = []
    for what, alert in changes:
        early = told.get(alert["id"])
        if early is None or what != "opened":
            out.append((what, alert))
            continue
        for row in rec.outbox(db, alert["id"]):
            if row["step"] == 0 and row["url"] in early.urls and row["sent_at"] is None:
                rec.sent(db, row["id"], alert["opened_at"])
        out.append(("kept", alert))
    return out


def _first_state(rule: Rule, seen: dict[str, float]) -> dict[str, Any]:
    device = rule.spec.get("device")
    if rule.kind == "device" and device in seen:
        return {"seen": seen[device]}
    return {}


def _next_deadline(db: sqlite_utils.Database) -> float | None:
    rung = db.execute("SELECT min(step_until) FROM care_alerts WHERE state = 'open'").fetchone()[0]
    send = rec.next_due(db)
    found = [t for t in (rung, send) if t is not None]
    return min(found) if found else None
