"""The care engine's spoken check-ins (fayd.care.ports.Asker) on the reminders' speech: the
question is said at once on the person's own speakers, even in quiet hours (something may
be wrong), and is never kept to be said later. Only the person's next words on a device
where it was said answer it, read by the care ladder ("I'm fine" resolves; anything else,
or silence, goes on to the caregivers): a CLI or another device's "I'm fine" is no answer.
With no speaker of theirs online, nothing is asked (``Unasked``) and the caregivers are told
so at once. And the daily digest's medication, from the same check-ins."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Protocol

from fayd.agent.care import answers
from fayd.agent.expect import Expectations
from fayd.care.digest import MedicationRecord, Outcome
from fayd.care.ports import Unasked
from fayd.reminders import queue
from fayd.store import Store

#: A speaker that is mid-turn is waited for this long at most before the check-in gives up
#: (the caregivers are told that it could not be asked).
BUSY_WAIT_S = 30.0
#: How often a busy speaker is looked at again.
BUSY_POLL_S = 0.5


class SaysNow(Protocol):
    """The reminders' speaker (fayd.agent.announce.Speaker), as a check-in uses it."""

    def targets(self, user: str) -> list[str]: ...

    def say_now(self, user: str, text: str, kind: str = "question") -> list[str]: ...


def _answer(text: str) -> str | None:
    """The words when they answer "Are you all right?" (fine, not fine, later), else None:
    a new request or an emergency goes on to the router, and the question stays open."""
    return text.strip() if answers.wellbeing(text) is not None else None


def meaning(answer: str | None) -> str:
    """A check-in's answer as the care ladder takes it (the engine's ``understand``): "fine"
    resolves; anything else, "later" too, escalates; None is silence."""
    if answer is None or not answer.strip():
        return "silence"
    return "fine" if answers.wellbeing(answer) == "fine" else "trouble"


def _reply(answer: str) -> str:
    if meaning(answer) == "fine":
        return "I'm glad you're all right. Thank you for telling me."
    return "I'm letting your family know right now."


class CareCheckIns:
    def __init__(
        self, speaker: SaysNow, expectations: Expectations, busy_wait_s: float = BUSY_WAIT_S
    ) -> None:
        self.speaker = speaker
        self.expectations = expectations
        self.busy_wait_s = busy_wait_s

    async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None:
        """The person's words after the question, None after ``timeout_s`` of silence;
        Unasked when it could not be said (nothing was asked)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        got: asyncio.Future[str] = loop.create_future()

        async def then(answer: str) -> str:
            if not got.done():
                got.set_result(answer)
            return _reply(answer)

        while True:
            if not self.speaker.targets(user):
                raise Unasked("offline")
            said = self.speaker.say_now(user, question, kind="question")
            if said:  # answered only where it was said (no turn runs before this line)
                on = frozenset(said)
                self.expectations.expect(user, _answer, then, timeout_s, True, on)
                break
            if loop.time() - started >= min(self.busy_wait_s, timeout_s):
                raise Unasked("busy")
            await asyncio.sleep(BUSY_POLL_S)
        try:
            async with asyncio.timeout(timeout_s):
                return await got
        except TimeoutError:
            self.expectations.drop(user)
            return None


#: A medication check-in's state (fayd.reminders.queue) → the digest's outcome.
_OUTCOME: dict[str, Outcome] = {
    "yes": "taken",
    "no": "missed",
    "unconfirmed": "no answer",
    "open": "no answer",
}


class MedicationFromCheckIns:
    """The digest's ``MedicationDay`` port on the reminders' medication check-ins."""

    def __init__(self, store: Store, zone: tzinfo) -> None:
        self.store, self.zone = store, zone

    async def medication(self, user: str, day: date) -> list[MedicationRecord]:
        start = datetime.combine(day, time(), self.zone).timestamp()
        end = datetime.combine(day + timedelta(days=1), time(), self.zone).timestamp()
        rows = await self.store.run(queue.checkins_since, user, start)
        return [
            MedicationRecord(row["asked_at"], row["text"], _OUTCOME.get(row["state"], "no answer"))
            for row in rows
            if row["asked_at"] < end
        ]
