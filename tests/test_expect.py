"""An answer expected in the next turn (fayd.agent.expect): yes / no / later in the words
people use, and the YesNo port the care engine's check-ins use."""

from __future__ import annotations

import asyncio

import pytest

from fayd.agent.care.answers import yes_no
from fayd.agent.expect import AskYesNo, Expectations


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Yes, I did", "yes"),
        ("yeah I've taken them", "yes"),
        ("I took them with breakfast", "yes"),
        ("吃过了", "yes"),
        ("No, not yet", "no"),
        ("I forgot", "no"),
        ("还没", "no"),
        ("Later", "later"),
        ("give me ten minutes", "later"),
        ("after lunch", "later"),
        ("等一下", "later"),
        ("what's the weather like", None),
        ("I've fallen and can't get up, help me please, I really need some help now", None),
    ],
)
def test_yes_no_later(said: str, answer: str | None) -> None:
    assert yes_no(said) == answer


class Spoken:
    """The Say port, keeping what would have been said (the Speaker is tested end to end)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str, str]] = []

    async def announce(self, user: str, text: str, *, urgent: bool = False, kind: str = "") -> bool:
        self.said.append((user, text, kind))
        return True


async def test_ask_gets_the_next_turns_answer_or_none() -> None:
    expectations, spoken = Expectations(), Spoken()
    port = AskYesNo(spoken, expectations, yes_no)
    asking = asyncio.create_task(port.ask("ann", "Did you eat lunch?", timeout_s=5))
    await asyncio.sleep(0)
    assert spoken.said == [("ann", "Did you eat lunch?", "question")]
    assert expectations.take("bob", "yes") is None  # someone else's turn
    assert expectations.take("ann", "what time is it") is None  # no answer: still open
    found = expectations.take("ann", "yes I did")
    assert found is not None
    expected, value = found
    assert await expected.then(value) == "Good."
    assert await asking == "yes"
    assert not expectations.is_open("ann")
    assert await port.ask("ann", "Did you sleep well?", timeout_s=0.05) is None
    assert not expectations.is_open("ann")  # closed when it timed out
