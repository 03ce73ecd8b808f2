"""Absolute dates of what a turn says, as tags: every day a turn names ("last Saturday",
yesterday, 上周六 …, resolved against the turn's own datetime by a :data:`DaysNamed`, which
fayd.agent.clock.days provides) becomes a ``when:YYYY-MM-DD`` tag, and its words go into the
lexical row ("3 May 2025 2025年5月3日"), so a question that names the day finds the turn by
BM25 and by tag. Query time: :func:`query_days` gives the days a question names, against
the search's ``now``. Without a DaysNamed (a Memory built without one), no day is read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fayd.memory.index import UserIndex

#: The days a text names, resolved against when it was said (fayd.agent.clock.days.named).
DaysNamed = Callable[[str, datetime], list[date]]

NAMESPACE = "when:"
_MONTHS = "January February March April May June July August September October November December"
_MONTH_NAMES = _MONTHS.split()


def tags(content: str, said: datetime, named: DaysNamed | None) -> list[str]:
    days = named(content, said) if named is not None else []
    return [f"{NAMESPACE}{d.isoformat()}" for d in days]


def words(tag: str) -> str:
    """A ``when:`` tag as the lexical row gets it: "3 May 2025 2025年5月3日"."""
    d = date.fromisoformat(tag[len(NAMESPACE) :])
    return f"{d.day} {_MONTH_NAMES[d.month - 1]} {d.year} {d.year}年{d.month}月{d.day}日"


def query_days(query: str, now: datetime, named: DaysNamed | None) -> list[date]:
    """The days a question names, against the time of asking."""
    return named(query, now) if named is not None else []


def rows_on(index: UserIndex, days: list[date]) -> np.ndarray:
    """Positions of the rows said on one of ``days`` (local time) or naming one of them."""
    found: set[int] = set()
    created = index.created[: index.n]
    for d in days:
        start = datetime.combine(d, datetime.min.time()).timestamp()
        found.update(np.flatnonzero((created >= start) & (created < start + 86400)).tolist())
        found.update(index.tag_rows.get(f"{NAMESPACE}{d.isoformat()}", []))
    return np.array(sorted(found), np.int64)
