"""The daily digest's sending: at each person's time (``[care] digest_time``, or their own in
``digest_times``), once a day, to their caregivers through the care engine's outbox (its
Apprise delivery, retry and "NOT DELIVERED" in ``fayd status``), and kept as a memory of
the person (``domain:homecare``, ``kind:digest``).

Once, durably: the day's mark (``care_state`` key ``digest:<user>:<date>``) and the queued
notifications are one transaction, so a restart after it sends nothing again, and a start
after the time the same evening sends the day's digest late. The memory follows the mark's
``remembered`` flag (written once, after the commit)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Protocol

import sqlite_utils

from fayd.beat import Pulse, until_beat
from fayd.care import records as rec
from fayd.care.digest import MedicationDay, compose
from fayd.care.effects import Effects
from fayd.care.gather import gather
from fayd.care.household import load as load_household
from fayd.care.household import person_called
from fayd.care.rules import clock as hhmm
from fayd.memory import NewNode, normalize_tags
from fayd.store import Store

log = logging.getLogger(__name__)

#: The scheduler looks at the clock this often.
CHECK_S = 60.0
#: Marks of days sent are kept this many days (then pruned).
KEEP_DAYS = 14
#: The outbox's rung of the day's scheduled digest (a manual ``--send`` uses its own).
SCHEDULED = 0


class CareEngine(Protocol):
    """What the digest uses of fayd.care.engine.CareEngine: its store, zone and clock, its
    memory (``effects.memory``), and a wake-up for its outbox after queueing."""

    store: Store
    zone: tzinfo
    clock: Callable[[], float]
    effects: Effects

    def wake(self) -> None: ...


def outbox_id(user: str, day: date) -> str:
    return f"digest-{user}-{day.isoformat()}"


def parse_times(default: str, each: tuple[str, ...]) -> dict[str, str | None]:
    """``digest_times`` ("dad=19:30", "ben=off") as user → "HH:MM" or None (off); the key
    "" holds ``digest_time`` (everyone else; None when empty)."""
    times: dict[str, str | None] = {"": default or None}
    for item in each:
        user, _, at = item.partition("=")
        times[user.strip()] = None if at.strip().lower() == "off" else at.strip()
    return times


def _people(db: sqlite_utils.Database, default_user: str) -> list[str]:
    """Everyone a care rule watches over (else the default user)."""
    return sorted({r.user for r in rec.rules(db)}) or [default_user]


def recipients(db: sqlite_utils.Database, user: str) -> dict[str, list[str]]:
    """The caregivers on the person's rules' ladders, else every caregiver."""
    everyone = rec.caregivers(db)
    named = {who for r in rec.rules(db) if r.user == user for who, _ in r.ladder}
    return {n: urls for n, urls in everyone.items() if n in named} or everyone


def _mark(db: sqlite_utils.Database, user: str, day: date) -> dict[str, Any] | None:
    row = db.execute(
        "SELECT value FROM care_state WHERE key = ?", [f"digest:{user}:{day.isoformat()}"]
    ).fetchone()
    return json.loads(row[0]) if row else None


def _queue(
    db: sqlite_utils.Database,
    user: str,
    day: date,
    step: int,
    title: str,
    text: str,
    now: float,
    mark: bool,
) -> list[str] | None:
    """Queue the digest to the person's caregivers (and, when ``mark``, keep the day's mark:
    None when it was there already, nothing queued). Returns who it was queued for."""
    if mark:
        if _mark(db, user, day) is not None:
            return None
        key = f"digest:{user}:{day.isoformat()}"
        rec.set_state(db, key, {"at": now, "remembered": False, "text": text})
        old = (day - timedelta(days=KEEP_DAYS)).isoformat()
        for (key,) in db.execute("SELECT key FROM care_state WHERE key LIKE 'digest:%'").fetchall():
            if key.rsplit(":", 1)[-1] < old:
                db.execute("DELETE FROM care_state WHERE key = ?", [key])
    people = recipients(db, user)
    rows = [
        {
            "alert": outbox_id(user, day),
            "step": step,
            "caregiver": who,
            "url": url,
            "title": title,
            "body": text,
            "at": now,
        }
        for who, urls in people.items()
        for url in urls
    ]
    rec.enqueue(db, rows)
    return sorted(people)


def _remembered(db: sqlite_utils.Database, user: str, day: date) -> None:
    mark = _mark(db, user, day) or {}
    rec.set_state(db, f"digest:{user}:{day.isoformat()}", {**mark, "remembered": True})


class DailyDigest:
    """The supervised ``digest`` task, and the digest on demand (``fayd care digest``)."""

    def __init__(
        self,
        engine: CareEngine,
        times: dict[str, str | None],
        medication: MedicationDay | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.engine = engine
        self.times = times
        #: The reminders' medication records (None: "no medication records").
        self.medication = medication
        self.clock = clock or engine.clock
        self.pulse = Pulse(CHECK_S)
        self.sent = 0

    @property
    def enabled(self) -> bool:
        return any(t is not None for t in self.times.values())

    def time_for(self, user: str) -> str | None:
        return self.times.get(user, self.times.get(""))

    def today(self) -> date:
        return datetime.fromtimestamp(self.clock(), self.engine.zone).date()

    async def text(self, user: str, day: date) -> str:
        facts = await gather(self.engine.store, user, day, self.engine.zone, self.medication)
        return compose(facts, self.engine.zone, self.today())

    async def about(self, who: str, day: date) -> str | None:
        """For the agent's "how was Mum today?" (fayd.agent.ports.CareDays): the digest of
        ``who``'s day, None when no household member is called that (in any case: the
        digest's "Mum" is the household's "mum")."""
        person = await self._person(who)
        return None if person is None else await self.text(person, day)

    async def watches(self, caregiver: str, person: str) -> bool:
        """Whether ``caregiver`` looks after ``person`` (fayd.care.household)."""
        household = await self.engine.store.run(load_household)
        return household.watches(caregiver, await self._person(person) or person)

    async def person(self, word: str) -> str | None:
        """The household member ``word`` names, or None."""
        return await self._person(word)

    async def looked_after(self, caregiver: str) -> list[str]:
        """Who ``caregiver`` looks after in particular (fayd.care.household)."""
        household = await self.engine.store.run(load_household)
        return sorted(household.looked_after(caregiver))

    async def _person(self, who: str) -> str | None:
        known = await self.engine.store.run(rec.known, self.engine.effects.default_user)
        return person_called([who], known.users)

    async def send(self, user: str, day: date, scheduled: bool = False) -> dict[str, Any]:
        """Compose and queue the digest; ``scheduled``: once for the day (None queued when
        it was sent already). The engine's loop delivers it."""
        text = await self.text(user, day)
        now = self.clock()
        step = SCHEDULED if scheduled else int(now)
        title = f"fayd: {user[:1].upper() + user[1:]}'s day"
        queued = await self.engine.store.run(_queue, user, day, step, title, text, now, scheduled)
        if queued is not None:
            self.sent += 1
            self.engine.wake()
            log.info("daily digest for %s (%s) queued for %s", user, day, queued or "nobody")
            if scheduled:
                await self._remember(user, day, text)
        return {"user": user, "date": day.isoformat(), "text": text, "to": queued}

    async def _remember(self, user: str, day: date, text: str) -> None:
        memory = self.engine.effects.memory
        if memory is None or not text:
            return
        tags = normalize_tags(
            "observation",
            "care",
            extra_tags=["domain:homecare", "kind:digest", f"date:{day.isoformat()}"],
        )
        node = NewNode(
            content=text,
            username=user,
            tags=tags,
            importance=5.0,
            datetime=datetime.fromtimestamp(self.clock()).strftime("%Y/%m/%d %H:%M:%S"),
        )
        try:
            await asyncio.to_thread(memory.add, [node])
        except Exception as exc:  # tried again at the next look
            log.error("daily digest for %s (%s) not remembered: %s", user, day, exc)
            return
        await self.engine.store.run(_remembered, user, day)

    async def status(self) -> dict[str, Any]:
        """For ``fayd status``: the times, and when each person's last digest was queued."""

        def last(db: sqlite_utils.Database) -> dict[str, str]:
            rows = db.execute(
                "SELECT key, value FROM care_state WHERE key LIKE 'digest:%' ORDER BY key"
            ).fetchall()
            out = {}
            for key, value in rows:
                user, day = key.split(":", 1)[1].rsplit(":", 1)
                at = datetime.fromtimestamp(json.loads(value)["at"], self.engine.zone)
                out[user] = f"{day} {at:%H:%M}"
            return out

        times = {user or "everyone": at for user, at in self.times.items() if at}
        return {"times": times, "last": await self.engine.store.run(last)}

    async def check(self) -> None:
        """Send each person's digest whose time has come today and has not gone yet."""
        now = datetime.fromtimestamp(self.clock(), self.engine.zone)
        default_user = self.engine.effects.default_user
        for user in await self.engine.store.run(_people, default_user):
            at = self.time_for(user)
            if at is None:
                continue
            slot = hhmm(at, "care.digest_time")
            if now.time() < slot:
                continue
            mark = await self.engine.store.run(_mark, user, now.date())
            if mark is None:
                await self.send(user, now.date(), scheduled=True)
            elif not mark.get("remembered") and self.engine.effects.memory is not None:
                await self._remember(user, now.date(), mark.get("text") or "")

    async def run(self) -> None:
        while True:
            self.pulse.beat()
            try:
                await self.check()
            except Exception as exc:  # the disk, a bug: logged, tried again next minute
                log.error("daily digest check failed (retrying): %s", exc, exc_info=True)
            await asyncio.sleep(until_beat(CHECK_S))
