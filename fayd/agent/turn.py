"""One exchange, filled in as it runs: who asked, what, the reply's sentences and timings,
and the two events a worker thread watches (stop: the user interrupted; model_may_run:
the first sentence's speech goes first)."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fayd.agent.language.text import join_sentences

#: The longest the model waits for a held turn (a safety net: the holder always releases).
MAX_HOLD_S = 2.0
#: Turn numbers since the start: the log names a turn by its number, not its words.
_numbers = itertools.count(1)


def _set_event() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


@dataclass
class Turn:
    """One exchange, filled in as it runs; ``timings`` are milliseconds from ``started``."""

    user: str
    device: str
    question: str
    source: str = "text"
    started: float = field(default_factory=time.monotonic)
    timings: dict[str, float] = field(default_factory=dict)
    sentences: list[str] = field(default_factory=list)
    #: What the router decided and why (``Decision.explain()``), when it ran.
    decision: dict[str, Any] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    #: Cleared while the first sentence is being synthesised: the model waits between tokens
    #: so that speech, the thing the user is waiting for, has the CPU (``hold_model``).
    model_may_run: threading.Event = field(default_factory=_set_event)
    #: This turn's number since the daemon started (its log lines carry it).
    id: int = field(default_factory=lambda: next(_numbers))
    #: Told each sentence as it is delivered, beside the device (the OpenAI door streams them).
    said: Callable[[str], None] | None = None
    #: A skill acted on it (a reminder kept, a timer set): it can no longer be taken back.
    acted: bool = False
    #: What ended the spoken question (fayd.agent.endpointer.EarlyEnd.verdict).
    ended_by: str = ""

    @contextlib.contextmanager
    def hold_model(self) -> Iterator[None]:
        """The model pauses between tokens until the block ends (at most ``MAX_HOLD_S``)."""
        self.model_may_run.clear()
        try:
            yield
        finally:
            self.model_may_run.set()

    def mark(self, name: str) -> None:
        """Record the first time ``name`` happened."""
        self.timings.setdefault(name, round((time.monotonic() - self.started) * 1000, 1))

    @property
    def answer(self) -> str:
        return join_sentences(self.sentences)
