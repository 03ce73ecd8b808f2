"""The care engine's spoken check-ins (fayd.care.ports.Asker) on the reminders' speech: the
question is said even in quiet hours (something may be wrong), and whatever the person says
next is the answer, read by the care ladder ("I'm fine" resolves; anything else, or silence,
goes on to the caregivers)."""

from __future__ import annotations

from fayd.agent.expect import AskYesNo, Expectations, Say
from fayd.care import ladder


def _answer(text: str) -> str | None:
    return text.strip() or None


def _reply(answer: str) -> str:
    if ladder.understood(answer) == "fine":
        return "I'm glad you're all right. Thank you for telling me."
    return "I'm letting your family know right now."


class CareCheckIns:
    def __init__(self, say: Say, expectations: Expectations) -> None:
        self._ask = AskYesNo(say, expectations, read=_answer, reply=_reply)

    async def ask(self, user: str, question: str, *, timeout_s: float) -> str | None:
        return await self._ask.ask(user, question, timeout_s=timeout_s, urgent=True)
