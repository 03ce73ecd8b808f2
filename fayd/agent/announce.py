"""fayd speaks first: what the scheduler fired (and what the care engine wants said) goes to
the user's speakers — those assigned to the user, else every speaker nobody else owns — with
an Action for the user's robots and screens. It waits for a gap when a device is mid-turn,
waits for a device when none is online (then says how late it is), and holds non-urgent
words through quiet hours and "sleep for an hour"; urgent ones are said anyway. A timer's
alarm chimes and repeats until the user says something on that device, or for at most
``alarm_max_s``. A medication reminder's "Did you take them?" is answered in the next turn
(``fayd.agent.expect``) and recorded as an observation (``domain:homecare``,
``kind:medication``). Everything waiting is kept in the database (``announcements``), so a
restart loses nothing."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from fayd.agent.care.answers import yes_no
from fayd.agent.dialogue import Dialogue
from fayd.agent.expect import Expectations
from fayd.agent.ports import Devices
from fayd.agent.prefs import Preferences
from fayd.beat import Pulse
from fayd.logwords import words
from fayd.memory import Memory
from fayd.protocol import Action
from fayd.reminders import ReminderBook
from fayd.reminders.say import greeting, late

log = logging.getLogger(__name__)

#: How often waiting words are looked at again (a device may be back, quiet hours over).
RETRY_S = 1.0
REMIND = Action("guidance.remind", "remind", "warm", 0.6, 60)
ALARM = Action("guidance.remind", "alert", "excited", 0.8, 80)
URGENT_KINDS = frozenset({"alert", "emergency"})
#: What the care engine says (fayd.care.effects): never on another person's device.
CARE_KINDS = frozenset({"care", "question"})
#: Whether what an announcement is ``about`` is still true ("care:<alert id>:open" → the
#: ``care`` check is given "<alert id>:open"); False: the words are dropped, not said late.
Truth = Callable[[str], Awaitable[bool]]
#: A morning greeting that could not be said for this long is let go, not said at noon.
GREETING_LATE_S = 3 * 3600.0


class Announcer(Protocol):
    """What another part (the care engine) calls to have something said to a user."""

    async def announce(
        self,
        user: str,
        text: str,
        *,
        urgent: bool = False,
        kind: str = "reminder",
        about: str | None = None,
    ) -> bool:
        """True when spoken on at least one device now, False when queued (``about``: what
        must still be true when it is said, else it is dropped)."""
        ...


@dataclass(frozen=True)
class AnnounceSettings:
    alarm_repeat_s: float = 30.0  # a timer's alarm is said again this often …
    alarm_max_s: float = 300.0  # … for at most this long, unless answered
    later_s: float = 600.0  # "later" to "Did you take them?": asked again then


@dataclass
class _Alarm:
    item: dict[str, Any]
    devices: list[str]
    started: float  # time.monotonic()
    last: float


class Speaker:
    """The :class:`Announcer` of fayd: says things on devices through the Dialogue."""

    def __init__(
        self,
        dialogue: Dialogue,
        devices: Devices,
        prefs: Preferences,
        book: ReminderBook,
        expectations: Expectations,
        memory: Memory | None = None,
        settings: AnnounceSettings = AnnounceSettings(),
    ) -> None:
        self.dialogue = dialogue
        self.devices = devices
        self.prefs = prefs
        self.book = book
        self.expectations = expectations
        self.memory = memory
        self.settings = settings
        self.pulse = Pulse(60.0)
        self._waiting: dict[int, dict[str, Any]] = {}
        self._alarms: dict[int, _Alarm] = {}
        self._wake = asyncio.Event()
        self.spoken = 0
        self.dropped = 0
        #: Checks of what waiting words are about, by topic ("care": an alert still open).
        self.truths: dict[str, Truth] = {}
        #: Waiting words with no device of the person online: shown by ``fayd status``.
        self._unheard: dict[int, dict[str, Any]] = {}

    # --- the Announcer port ----------------------------------------------------------------
    async def announce(
        self,
        user: str,
        text: str,
        *,
        urgent: bool = False,
        kind: str = "reminder",
        about: str | None = None,
    ) -> bool:
        if any(_same(w, user, text, kind, about) for w in self._waiting.values()):
            return False  # said once: the same notice already waits ("Anna has seen …")
        now = self.book.clock.now().timestamp()
        item = {"user": user, "text": text, "urgent": urgent, "kind": kind, "due_at": now}
        kept = await self.book.keep({**item, "about": about})
        if await self._try(kept):
            return True
        self._queue(kept)
        return False

    def say_now(self, user: str, text: str, kind: str = "question") -> list[str]:
        """Said at once on the user's own speakers that are free (even in quiet hours: the
        care engine's check-in), never kept for later: a question whose moment has passed
        is not asked late. The devices it was said on; [] when none could."""
        free = [d for d in self.targets(user) if self.dialogue.free(d)]
        for device in free:
            self.dialogue.announce(device, user, text, REMIND)
        for other in self._others(user, free):
            self.devices.act(other, REMIND)
        if free:
            self.spoken += 1
            log.info("%s said to %s on %s: %d chars", kind, user, ", ".join(free), len(text))
        return free

    # --- the scheduler's delivery ----------------------------------------------------------
    async def deliver(self, item: dict[str, Any]) -> None:
        """A fired reminder (already kept as waiting): said now if it can be, else later."""
        if not await self._try(item):
            self._queue(item)

    async def run(self) -> None:
        """Waiting words, again and again until said; timers' alarms repeated."""
        for item in await self.book.waiting():
            self._waiting[item["id"]] = item
        while True:
            self.pulse.beat()
            for key, item in sorted(self._waiting.items(), key=lambda kv: kv[1]["due_at"]):
                if key in self._waiting and await self._try(item):
                    self._waiting.pop(key, None)
                    await self._said_once(item)
            await self._ring()
            self._wake.clear()
            if self._waiting or self._alarms:
                await asyncio.sleep(RETRY_S)
            else:
                await self.pulse.wait(self._wake)

    def status(self) -> dict[str, Any]:
        unheard = [
            {k: item.get(k) for k in ("user", "kind", "text", "due_at")}
            for key, item in sorted(self._unheard.items())
            if key in self._waiting
        ]
        return {
            "waiting": len(self._waiting),
            "ringing": len(self._alarms),
            "spoken": self.spoken,
            "dropped": self.dropped,
            "unheard": unheard,  # no device of the person online to say them on
        }

    def _queue(self, item: dict[str, Any]) -> None:
        self._waiting[item["id"]] = item
        self._wake.set()

    async def _said_once(self, item: dict[str, Any]) -> None:
        """The same words waiting for the same person are said once: the others go."""
        for key, other in list(self._waiting.items()):
            if _same(other, item["user"], item["text"], item["kind"], item.get("about")):
                del self._waiting[key]
                await self.book.spoken(key, [])

    # --- saying one thing ------------------------------------------------------------------
    def targets(self, user: str) -> list[str]:
        """Online speakers that are the user's own (docs/security.md, *Who is who*): theirs,
        a shared one that names them, one nobody owns when they are the default user."""
        return [d for d in self.devices.find("speaker") if self.devices.serves(d, user)]

    async def _where(self, item: dict[str, Any]) -> list[str]:
        """Where to say ``item``: the user's own speakers; a reminder or timer with none
        online goes to the online speaker the user last spoke on (never the care engine's
        words: they are the person's own)."""
        targets = self.targets(item["user"])
        if targets or item["kind"] in CARE_KINDS:
            return targets
        online = set(self.devices.find("speaker"))
        spoken_on = await self.book.spoken_on(item["user"])
        return [d for d in spoken_on if d in online][:1]

    async def _true(self, item: dict[str, Any]) -> bool:
        """What the words are about is still so (an unknown topic: nothing to check)."""
        about = item.get("about") or ""
        topic, _, rest = about.partition(":")
        check = self.truths.get(topic)
        if not about or check is None:
            return True
        try:
            return await check(rest)
        except Exception as exc:  # unsure: said, as before the check existed
            log.error("could not check what announcement %s is about: %s", item["id"], exc)
            return True

    async def _try(self, item: dict[str, Any]) -> bool:
        user, urgent = item["user"], bool(item["urgent"]) or item["kind"] in URGENT_KINDS
        now = self.book.clock.now()
        if not await self._true(item):  # no longer true (an alert closed meanwhile)
            log.info("%s %s for %s dropped: no longer true", item["kind"], item["id"], user)
            await self.book.spoken(item["id"], [])
            self._unheard.pop(item["id"], None)
            self.dropped += 1
            return True
        targets = await self._where(item)
        if not targets:  # no device of theirs online: wait (``fayd status`` shows it)
            self._unheard[item["id"]] = item
            return False
        self._unheard.pop(item["id"], None)
        if not urgent:
            if await self._quiet(user, now):
                return False
            targets = [d for d in targets if self.devices.asleep_until(d) <= now.timestamp()]
        free = [d for d in targets if self.dialogue.free(d)]
        if not free:
            return False
        due = datetime.fromtimestamp(item["due_at"], self.book.tz)
        lang = item.get("lang", "en")
        if item["kind"] == "greeting" and (now - due).total_seconds() > GREETING_LATE_S:
            log.info("the morning greeting for %s let go: no device until %s", user, now)
            await self.book.spoken(item["id"], [])
            return True
        if item["kind"] == "greeting":  # what the day holds, as it is when said
            text = greeting(user, now.astimezone(self.book.tz), await self._plan(user), lang)
        else:
            text = late(item["text"], item["kind"], due, now.astimezone(self.book.tz), lang)
        timer = item["kind"] == "timer"
        for device in free:
            self.dialogue.announce(device, user, text, ALARM if timer else REMIND, tone=timer)
        for other in self._others(user, free):
            self.devices.act(other, ALARM if timer else REMIND)
        await self.book.spoken(item["id"], free)
        self.spoken += 1
        log.info(
            "%s %s said to %s on %s: %d chars",
            item["kind"],
            item["id"],
            user,
            ", ".join(free),
            len(text),
        )
        log.debug("%s %s said: %s", item["kind"], item["id"], words(text))
        if timer:
            self._alarms[item["id"]] = _Alarm(item, free, time.monotonic(), time.monotonic())
        if item.get("checkin_id"):
            self._expect_answer(user, int(item["checkin_id"]), item.get("lang", "en"), free)
        return True

    async def _plan(self, user: str) -> list[tuple[datetime, str]]:
        rows = await self.book.today(user)
        tz = self.book.tz
        return [
            (datetime.fromtimestamp(r["next_at"], tz), r["text"])
            for r in rows
            if r["kind"] in ("reminder", "medication")
        ]

    def _others(self, user: str, spoken_on: list[str]) -> list[str]:
        """The user's robots and screens that were not spoken on: they show it (an Action)."""
        found = set(self.devices.find("robot", user)) | set(self.devices.find("screen", user))
        return sorted(found - set(spoken_on))

    async def _quiet(self, user: str, now: datetime) -> bool:
        hours = await self.prefs.quiet_hours(user)
        return hours is not None and hours.covers(now.astimezone(self.book.tz).time())

    async def _ring(self) -> None:
        """Timers' alarms: said again until the user speaks on that device, or time is up."""
        now = time.monotonic()
        for key, alarm in list(self._alarms.items()):
            answered = any(self.dialogue.heard_at(d) > alarm.started for d in alarm.devices)
            if answered or now - alarm.started >= self.settings.alarm_max_s:
                del self._alarms[key]
                continue
            if now - alarm.last >= self.settings.alarm_repeat_s:
                alarm.last = now
                for device in alarm.devices:
                    if self.dialogue.free(device):
                        text = alarm.item["text"]
                        self.dialogue.announce(device, alarm.item["user"], text, ALARM, tone=True)

    # --- medication answers ----------------------------------------------------------------
    def _expect_answer(self, user: str, checkin: int, lang: str, on: list[str]) -> None:
        zh = lang == "zh"

        async def then(answer: str) -> str:
            await self.book.answer_checkin(checkin, answer, self.settings.later_s)
            await self._observe(user, checkin, answer)
            if answer == "yes":
                return "好的，记下了。" if zh else "Well done. I've made a note of it."
            if answer == "no":
                return "好的，记得吃哦。" if zh else "All right. Please take them when you can."
            minutes = int(self.settings.later_s // 60)
            return (
                f"好的，{minutes}分钟后再问你。"
                if zh
                else (f"All right, I'll ask you again in {minutes} minutes.")
            )

        # Answered where it was asked: another device's "yes" is no answer to it.
        self.expectations.expect(user, yes_no, then, on=frozenset(on))

    async def _observe(self, user: str, checkin: int, answer: str) -> None:
        if self.memory is None or answer == "later":
            return
        at = self.book.clock.now().astimezone(self.book.tz)
        said = "took" if answer == "yes" else "had not taken"
        text = f"{user} said they {said} their medication at {at:%H:%M} on {at:%Y-%m-%d}."
        # An observation (Fay's kind) tagged as the care engine reads it: kind:medication.
        tags = ["domain:homecare", "kind:medication", f"checkin:{checkin}"]
        memory = self.memory
        try:
            await asyncio.to_thread(
                memory.remember, text, user, "observation", "voice", False, tags
            )
        except Exception as exc:  # the check-in's own row has the answer already
            log.error("could not remember the medication answer: %s", exc)


def _same(item: dict[str, Any], user: str, text: str, kind: str, about: str | None) -> bool:
    """The same words to the same person, about the same thing (one alert's line is not
    another's: the first may be dropped as no longer true while the second is said)."""
    said = (item["user"], item["text"], item["kind"], item.get("about"))
    return said == (user, text, kind, about)
