"""What the language modules of ``recall_dialogues`` describe: plans of lines and questions."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Line:
    """One fact-bearing utterance of a plan, placed at ``at`` (0-1) of the months."""

    text: str  # may hold {when}: the event's date said relative to the session
    at: float
    offset: int | None = None  # the event's day from the session's date
    after: int | None = None  # the event is the weekend after this line's event


@dataclass
class Plan:
    key: str
    lines: list[Line]
    # (kind, question, evidence line indexes, answer with {d0}, {d1}… for event dates)
    questions: list[tuple[str, str, list[int], str]]


def pick(rng: random.Random, pool: list[T], used: set[str]) -> T:
    """A choice from ``pool`` not used yet by anyone of the language (names stay unique)."""
    free = [x for x in pool if str(x) not in used]
    if not free:
        raise ValueError(f"pool exhausted: {pool[:3]}…")
    choice = rng.choice(free)
    used.add(str(choice))
    return choice


def one(rng: random.Random, *variants: str) -> str:
    """One of several wordings (so the set is not one template repeated)."""
    return rng.choice(variants)
