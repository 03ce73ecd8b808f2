"""The care engine's spoken check-ins (fayd.care.ports.Asker) on the reminders' speech: the
question is said even in quiet hours (something may be wrong), and whatever the person says
next is the answer, read by the care ladder ("I'm fine" resolves; anything else, or silence,
goes on to the caregivers). And the daily digest's medication, from the same check-ins."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo

from fayd.agent.expect import AskYesNo, Expectations, Say
from fayd.care import ladder
from fayd.care.digest import MedicationRecord, Outcome
from fayd.reminders import queue
from fayd.store import Store


def _answer(text: str) -> str | None:
    return text.strip() or None


def _reply(answer: str) -> str:
    if ladder.understood(answer) == "fine":
        return "I'm glad you're all right. Thank you for telling me."
    return "I'm letting your family know right now."


class CareCheckIns:
    def __init__(self, say: Say, expectations: Expectations) -> None:
        # Only the person's own device answers: "I'm fine" stops the caregivers being told.
        self._ask = AskYesNo(say, expectations, read=_answer, reply=_reply, own_device=True)

    async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None:
        return await self._ask.ask(user, question, timeout_s=timeout_s, urgent=True)


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
