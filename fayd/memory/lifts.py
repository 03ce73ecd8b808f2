"""Rows a question points at by name, lifted in the ranking: the days it names
(fayd.memory.dates) and the speakers it names (fayd.memory.speakers)."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from fayd.memory import dates, speakers
from fayd.memory.config import MemoryConfig
from fayd.memory.index import UserIndex


def named_rows(
    cfg: MemoryConfig, index: UserIndex, query: str, now: float, days: dates.DaysNamed | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows sorted, each once; the share of the score's total each gets added), or None."""
    parts: list[tuple[np.ndarray, float]] = []
    if cfg.date_boost > 0:
        named = dates.query_days(query, datetime.fromtimestamp(now), days)
        parts.append((dates.rows_on(index, named), cfg.date_boost))
    if cfg.speaker_boost > 0:
        parts.append((speakers.rows_named(index, query), cfg.speaker_boost))
    parts = [(rows, lift) for rows, lift in parts if rows.size]
    if not parts:
        return None
    if len(parts) == 1 and bool(np.all(parts[0][0][1:] > parts[0][0][:-1])):
        return parts[0][0], np.full(parts[0][0].size, parts[0][1])  # one tag's: sorted
    at = np.concatenate([rows for rows, _ in parts])
    amount = np.concatenate([np.full(rows.size, lift) for rows, lift in parts])
    rows, inverse = np.unique(at, return_inverse=True)
    return rows, np.bincount(inverse, weights=amount)
