"""The reminders a household keeps: set (checked: nothing half-stored, one clear line for
bad input), listed, found by their words, cancelled, snoozed; medication check-ins answered.
The skills, ``fayd reminders`` and the control API all come here; the scheduler fires them."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from typing import Any
from zoneinfo import ZoneInfo

from fayd.errors import FaydError
from fayd.protocol.text import BadText, check_name, check_text
from fayd.reminders import queue, records
from fayd.reminders.clock import Clock
from fayd.reminders.rules import BadRule, Rule, next_occurrence, zone
from fayd.reminders.say import spoken_text
from fayd.store import Store

MAX_TEXT = 500
#: What "snooze" means without a length.
SNOOZE_S = 600


class BadReminder(FaydError):
    """A reminder that cannot be kept (a time passed, no such date, a rule that never
    fires, a field missing): the message says which, in words a person can hear."""


def _unwritable(user: str, text: str, name: str) -> str | None:
    """Why the reminder cannot be stored (None: it can): a lone surrogate (not UTF-8: the
    write failed as a bug) anywhere, or a control character in the user's name."""
    try:
        check_name("user", user, blank=True)
        check_text("text", text, blank=True)
        check_text("name", name, blank=True)
    except BadText as exc:
        return str(exc)
    return None


class ReminderBook:
    def __init__(
        self, store: Store, clock: Clock, zone_name: str, wake: Callable[[], None] | None = None
    ) -> None:
        """``zone_name``: the household's zone (agent.timezone, or the system's);
        ``wake``: the scheduler's, told of every change."""
        self.store = store
        self.clock = clock
        self.zone_name = zone_name
        self.wake = wake or (lambda: None)

    @property
    def tz(self) -> ZoneInfo:
        return zone(self.zone_name)

    async def add(
        self,
        user: str,
        text: str,
        *,
        at: datetime | None = None,
        rule: Rule | None = None,
        kind: str = "reminder",
        urgent: bool = False,
        name: str = "",
        lang: str = "en",
        source: str = "",
        device: str = "",
    ) -> dict[str, Any]:
        """A one-off at ``at`` (aware) or a recurring ``rule``; returns the stored row."""
        text, name = spoken_text(text), spoken_text(name)
        if problem := _unwritable(user, text, name):
            raise BadReminder(problem)
        if not text and kind != "timer":
            raise BadReminder("text: what should I remind you of?")
        if len(text) > MAX_TEXT:
            raise BadReminder(f"text: at most {MAX_TEXT} characters")
        if kind not in records.KINDS:
            raise BadReminder(f"kind: {kind!r} is not one of {', '.join(records.KINDS)}")
        if not user:
            raise BadReminder("user: whose reminder is it?")
        now = self.clock.now()
        rule = rule or Rule()
        if rule.every == "once":
            if at is None or at.tzinfo is None:
                raise BadReminder("at: a one-off reminder needs a time (with its zone)")
            if at <= now:
                raise BadReminder("at: that time has already passed")
            first = at
        else:
            start = now.replace(second=0, microsecond=0)
            # "every 2 hours" counts from now; "every 2 hours between 9 and 9" keeps its window
            elapsed = rule.every == "hours" and rule.between is None
            first = start + timedelta(hours=rule.hours or 0) if elapsed else now
        due = next_occurrence(rule, first, now, self.tz)
        if due is None:
            raise BadReminder("rule: that would never come round")
        row = {
            "user": user,
            "text": text,
            "kind": kind,
            "name": name,
            "urgent": urgent,
            "lang": lang,
            "tz": self.zone_name,
            "rule": rule.to_json(),
            "first_at": first.timestamp(),
            "due_at": due.timestamp(),
            "source": source[:MAX_TEXT],
            "device": device,
        }
        reminder = await self.store.run(records.add, row)
        self.wake()
        found = await self.store.run(records.get, reminder)
        assert found is not None
        return found

    async def add_request(self, body: dict[str, Any], source: str) -> dict[str, Any]:
        """A reminder from plain data (the API, ``fayd reminders add``): ``user``, ``text``,
        ``at`` (ISO local time, the household's zone unless it names one) or ``rule``
        ({"every", "at", "days", "hours", "between"}), ``kind``, ``urgent``, ``name``."""
        for key, typ in (
            ("user", str),
            ("text", str),
            ("kind", str),
            ("name", str),
            ("at", str),
            ("urgent", bool),
            ("rule", dict),
            ("lang", str),
        ):
            if body.get(key) is not None and not isinstance(body[key], typ):
                raise BadReminder(f"{key}: must be {typ.__name__}")
        at = None
        if body.get("at") is not None:
            try:
                at = datetime.fromisoformat(body["at"])
            except ValueError as exc:
                raise BadReminder(
                    f"at: {body['at']!r} is no date and time (YYYY-MM-DDTHH:MM)"
                ) from exc
            at = at if at.tzinfo else at.replace(tzinfo=self.tz)
        rule = rule_of(body["rule"]) if body.get("rule") is not None else None
        if (at is None) == (rule is None or rule.every == "once"):
            raise BadReminder("at, rule: give a time (at) or a recurring rule, not both")
        return await self.add(
            str(body.get("user") or ""),
            str(body.get("text") or ""),
            at=at,
            rule=rule,
            kind=str(body.get("kind") or "reminder"),
            urgent=bool(body.get("urgent")),
            name=str(body.get("name") or ""),
            lang=str(body.get("lang") or "en"),
            source=source,
        )

    async def list(self, user: str | None, *, everything: bool = False) -> list[dict[str, Any]]:
        states = ("active", "done", "cancelled", "broken") if everything else ("active",)
        return await self.store.run(records.of_user, user, states)

    async def today(self, user: str) -> list[dict[str, Any]]:
        """The user's reminders still to fire today (their zone)."""
        now = self.clock.now().astimezone(self.tz)
        end = datetime.combine(now.date() + timedelta(days=1), dtime(0), self.tz).timestamp()
        return [r for r in await self.list(user) if r["next_at"] is not None and r["next_at"] < end]

    async def tomorrow(self, user: str) -> list[dict[str, Any]]:
        """The user's reminders that come round tomorrow (their zone), soonest first, each
        with ``next_at`` set to that time (a daily one also rings today)."""
        day = self.clock.now().astimezone(self.tz).date() + timedelta(days=1)
        start = datetime.combine(day, dtime(0), self.tz)
        end = (start + timedelta(days=1)).timestamp()
        found = []
        for row in await self.list(user):
            at = row["next_at"]
            if row["rule"] and (at is None or at < start.timestamp()):
                first = datetime.fromtimestamp(float(row["first_at"]), UTC)
                rule = Rule.from_json(row["rule"])
                later = next_occurrence(rule, first, start - timedelta(microseconds=1), self.tz)
                at = later.timestamp() if later else None
            if at is not None and start.timestamp() <= at < end:
                found.append(row | {"next_at": at})
        return sorted(found, key=lambda r: r["next_at"])

    async def find(self, user: str, words: str, kind: str | None = None) -> list[dict[str, Any]]:
        """Active reminders of ``user`` whose text or name shares the content words said
        (all of them when nothing is said)."""
        rows = [r for r in await self.list(user) if kind is None or r["kind"] == kind]
        wanted = content_words(words)
        if not wanted:
            return rows
        return [r for r in rows if wanted & content_words(f"{r['text']} {r['name']}")]

    async def cancel(self, reminder: int) -> bool:
        done = await self.store.run(records.cancel, reminder)
        self.wake()
        return done

    async def snooze(self, reminder: int, seconds: float = SNOOZE_S) -> datetime | None:
        """Fire again ``seconds`` from now; the moment, or None (no such reminder)."""
        until = self.clock.now() + timedelta(seconds=seconds)
        ok = await self.store.run(records.snooze, reminder, until.timestamp())
        self.wake()
        return until if ok else None

    async def last_fired(self, user: str) -> dict[str, Any] | None:
        return await self.store.run(records.last_fired, user)

    async def answer_checkin(self, checkin: int, answer: str, later_s: float = SNOOZE_S) -> None:
        now = self.clock.now().timestamp()
        if answer == "later":
            await self.store.run(queue.put_off, checkin, now + later_s)
            self.wake()
        else:
            await self.store.run(queue.answer_checkin, checkin, answer, now)

    async def keep(self, item: dict[str, Any]) -> dict[str, Any]:
        """Something to say as soon as a device can, kept across restarts."""
        return await self.store.run(queue.announce, item)

    async def waiting(self) -> list[dict[str, Any]]:
        return await self.store.run(queue.waiting)

    async def spoken_on(self, user: str) -> list[str]:
        """The devices ``user`` last spoke on, the latest first."""
        return await self.store.run(queue.spoken_on, user)

    async def spoken(self, announcement: int, devices: list[str]) -> None:
        at = self.clock.now().timestamp()
        await self.store.run(queue.spoken, announcement, devices, at)

    async def medication_today(self, user: str) -> list[dict[str, Any]]:
        now = self.clock.now().astimezone(self.tz)
        start = datetime.combine(now.date(), dtime(0), self.tz).timestamp()
        return await self.store.run(queue.checkins_since, user, start)


_STOP = set(
    "a an the my to me for of on at in and about that this it reminder reminders timer timers"
    " remind cancel delete remove stop forget please your you i one".split()
)


def content_words(text: str) -> set[str]:
    """The words that tell reminders apart ("call", "son"; not "the", "reminder"), plurals
    as one ("cancel that bin one" finds "put the bins out")."""
    words = re.findall(r"[a-z0-9']+|[\u4e00-\u9fff]", text.lower())
    return {_one(w) for w in words if w not in _STOP}


def _one(word: str) -> str:
    """ "bins" → "bin", "tablets" → "tablet"; "glass", "bus" and short words as they are."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def rule_of(data: dict[str, Any]) -> Rule:
    """A rule from plain data (the API, the CLI), BadReminder naming the field."""
    try:
        return Rule.of(data)
    except BadRule as exc:
        raise BadReminder(str(exc)) from exc


def utc(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts, UTC) if ts is not None else None
