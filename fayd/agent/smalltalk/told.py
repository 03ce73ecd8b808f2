"""Listening after a loss or a low mood: what the person tells next ("his name was Tom, he
loved his garden") gets a written answer that listens, not the small model's (which said
"Tom, my friend."). Kept per user and device, for a turn or two, within minutes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

#: After these topics, the next words are listened to (for at most TOLD_TURNS turns, each
#: within TOLD_WINDOW_S seconds of the last).
FOLLOWED = {
    "grief": "told_more",
    "missing": "told_more",
    "lonely": "told_feeling",
    "low": "told_feeling",
    "worried": "told_feeling",
}
TOLD_TURNS = 2
TOLD_WINDOW_S = 180.0
_ASKING = re.compile(
    r"^(what|why|how|who|when|where|which|do|does|did|is|are|can|could|would|will|should)\b"
    r"|\?$|吗$|呢$|什么|怎么|为什么"
)


class Routed(Protocol):
    """What the router decided, as far as listening needs it (``understand.router.Decision``)."""

    @property
    def intent(self) -> str: ...
    @property
    def via(self) -> str: ...
    @property
    def slots(self) -> Mapping[str, Any]: ...


class Listening:
    """Per user and device: a loss or a low mood just told, whose next words are listened to."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], tuple[str, str | None, float, int]] = {}

    def follow_up(
        self, key: tuple[str, str], decision: Routed, question: str, now: float
    ) -> dict[str, str] | None:
        """The small-talk slots for this turn, when it is the person telling more; else None.
        ``decision``: the router's, for this turn; ``now``: time.monotonic()."""
        if decision.via == "smalltalk":
            topic = FOLLOWED.get(str(decision.slots.get("topic")))
            if topic is None:
                self._open.pop(key, None)
            else:
                self._open[key] = (topic, decision.slots.get("who"), now, 0)
            return None
        opened = self._open.pop(key, None)
        if opened is None or decision.intent != "chitchat":
            return None
        topic, who, since, told = opened
        if now - since > TOLD_WINDOW_S or _ASKING.search(question.strip().lower()):
            return None
        if told + 1 < TOLD_TURNS:
            self._open[key] = (topic, who, now, told + 1)
        return {"topic": topic, "who": who} if who else {"topic": topic}
