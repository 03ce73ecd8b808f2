"""A question a skill asked to fill one time slot ("at 8 in the morning or the evening?"),
open for the user's next turn; and slot values in the evaluation data's plain form."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

from fayd.agent.clock.times import Ambiguous, When, answer_ambiguous, slot_json
from fayd.reminders.rules import Rule

#: A question a skill asked stays open this long.
PENDING_S = 120.0


@dataclass(frozen=True)
class Pending:
    """A question a skill asked to fill one slot; the next turn may answer it."""

    intent: str
    slots: dict[str, Any]
    key: str
    ambiguous: Ambiguous
    lang: str
    asked_at: float
    ttl_s: float = PENDING_S
    extra: dict[str, Any] = field(default_factory=dict)

    def expired(self, now: float) -> bool:
        return now - self.asked_at > self.ttl_s

    def complete(self, answer: str, now: datetime) -> dict[str, Any] | None:
        """The slots with this one filled by ``answer``, or None (not an answer)."""
        got = answer_ambiguous(self.ambiguous, answer, now, self.lang)
        if not isinstance(got, When):
            return None
        return {**self.slots, self.key: got}


def slots_json(slots: dict[str, Any]) -> dict[str, Any]:
    """Slots in the evaluation data's form (docs/understanding.md)."""
    out: dict[str, Any] = {}
    for key, value in slots.items():
        if isinstance(value, time):
            out[key] = value.strftime("%H:%M")
        elif isinstance(value, datetime):
            out[key] = value.strftime("%Y-%m-%dT%H:%M")
        elif isinstance(value, date):
            out[key] = value.isoformat()
        elif isinstance(value, When | Rule | Ambiguous) or hasattr(value, "seconds"):
            out[key] = slot_json(value)
        else:
            out[key] = value
    return out
