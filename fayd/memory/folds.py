"""Routine observations folded (issue 28): every event of one kind from one source in one
hour is a single memory node, rewritten as the events come, instead of a node each.

A motion sensor at 3 events a second made 10,800 nodes an hour, each with its 1.5 KB vector
(and its own tag) in the search index for as long as the daemon ran: ~5 KB of RSS per
event. Folded, an hour of it is one node saying how many, of which kinds ("opened 12,
closed 12"), the range of a reading, and the last event in its own words: what a question
about that hour needs ("did she get up in the night?"). The raw events stay in
``device_events``. Events that matter each keep a node of their own; the caller decides
which (``fayd.devices.sensors``: panic, falls, blood pressure, faults).

The running totals of the open folds are kept in RAM, at most ``MAX_OPEN`` of them: after a
restart, or for a fold pushed out, later events of that hour start a second node for it
(the two add up; no event is counted twice, as the caller marks its events remembered in the
transaction that writes the fold).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime

#: Folds whose totals are kept in RAM (the most recently written).
MAX_OPEN = 256
#: A fold's node tag: ``fold:<source>/<kind>/<YYYY-MM-DDTHH>``.
FOLD_TAG = "fold:"
#: The last event quoted in a fold is cut to this many characters.
LAST_TEXT_MAX = 300


@dataclass(frozen=True)
class Observed:
    """One routine event to fold, as its source describes it."""

    source: str  # a device
    kind: str  # its sensor (one tag value)
    username: str
    label: str  # what the events are, e.g. "Door events from hall-1"
    what: str  # the phrase counted, e.g. "opened"
    text: str  # the event in its own words, e.g. "Door (front) opened from hall-1 at 09:12"
    at: float  # when it happened (epoch seconds)
    value: float | None = None  # a reading, whose range is kept
    importance: float = 2.0
    tags: tuple[str, ...] = ()

    @property
    def hour(self) -> str:
        return f"{datetime.fromtimestamp(self.at):%Y-%m-%dT%H}"

    @property
    def key(self) -> str:
        """The fold this event belongs to (also its node's tag)."""
        return f"{FOLD_TAG}{self.source}/{self.kind}/{self.hour}"


@dataclass
class Tally:
    """The running totals of one fold, and the node they are written in (None: not yet)."""

    label: str
    username: str
    node_id: int | None = None
    count: int = 0
    whats: dict[str, int] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    first: float = float("inf")
    last: float = float("-inf")
    last_text: str = ""
    importance: float = 0.0

    def add(self, event: Observed) -> None:
        self.count += 1
        self.whats[event.what] = self.whats.get(event.what, 0) + 1
        if event.value is not None:
            self.low = event.value if self.low is None else min(self.low, event.value)
            self.high = event.value if self.high is None else max(self.high, event.value)
        self.first = min(self.first, event.at)
        if event.at >= self.last:
            self.last, self.last_text = event.at, event.text[:LAST_TEXT_MAX]
        self.importance = max(self.importance, event.importance)

    def content(self) -> str:
        """E.g. "Door events from hall-1 on 2025-03-04, 09:00-09:59: 24 (opened 12, closed
        12), 09:02:11 to 09:47:30. Last: Door (front) closed from hall-1 at 09:47"."""
        start, end = datetime.fromtimestamp(self.first), datetime.fromtimestamp(self.last)
        kinds = ", ".join(
            f"{what} {n}" for what, n in sorted(self.whats.items(), key=lambda kv: -kv[1])
        )
        readings = ""
        if self.low is not None and self.high is not None:
            readings = f", readings {_num(self.low)} to {_num(self.high)}"
        return (
            f"{self.label} on {start:%Y-%m-%d}, {start:%H}:00-{start:%H}:59: {self.count}"
            f" ({kinds}){readings}, {start:%H:%M:%S} to {end:%H:%M:%S}. Last: {self.last_text}"
        )

    def copy(self) -> Tally:
        return replace(self, whats=dict(self.whats))


@dataclass
class Change:
    """A fold to write: a new node (``tally.node_id`` None) or a rewrite of its node."""

    key: str
    tally: Tally
    tags: list[str]
    first: Observed


class Folds:
    """The open folds' totals (bounded: ``MAX_OPEN``, the least recently written go first)."""

    def __init__(self, max_open: int = MAX_OPEN) -> None:
        self.max_open = max_open
        self._open: OrderedDict[str, Tally] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._open)

    def changes(self, events: list[Observed]) -> list[Change]:
        """What writing ``events`` changes, one per fold touched; nothing is kept until
        :meth:`committed` (a failed write leaves the totals as they were)."""
        out: dict[str, Change] = {}
        with self._lock:
            for event in events:
                key = event.key
                change = out.get(key)
                if change is None:
                    known = self._open.get(key)
                    tally = known.copy() if known else Tally(event.label, event.username)
                    tags = sorted({*event.tags, key})
                    change = out[key] = Change(key, tally, tags, event)
                change.tally.add(event)
        return list(out.values())

    def committed(self, changes: list[Change]) -> None:
        with self._lock:
            for change in changes:
                self._open[change.key] = change.tally
                self._open.move_to_end(change.key)
            while len(self._open) > self.max_open:
                self._open.popitem(last=False)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
