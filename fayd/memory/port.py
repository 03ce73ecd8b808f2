"""The Memory port: what the memory package's own helpers (context assembly, facts, the
jobs, the quarantine, re-embedding) use of :class:`fayd.memory.service.Memory`. They take
this Protocol, not the class, because the class imports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import sqlite_utils

from fayd.embedding import EmbedderLike
from fayd.memory.config import MemoryConfig
from fayd.memory.nodes import NewNode
from fayd.store import Store

#: Replays an approved item inside the quarantine's transaction: (db, payload, now) →
#: (the result, the id of the row written, or None when there is no such row).
HeldWriter = Callable[
    [sqlite_utils.Database, dict[str, Any], float], tuple[dict[str, Any], int | None]
]


class MemoryPort(Protocol):
    store: Store
    embedder: EmbedderLike
    cfg: MemoryConfig
    held_writers: Mapping[str, HeldWriter]

    def resolve_user(self, username: str | None) -> str: ...

    def add(
        self, new: list[NewNode], progress: Callable[[str], None] | None = None
    ) -> list[dict[str, Any]]: ...

    def search(
        self,
        query: str,
        username: str | None = None,
        n: int = 10,
        node_type: str = "all",
        filter_tags_all: list[str] | None = None,
        filter_tags_any: list[str] | None = None,
        stateless: bool = True,
        weights: tuple[float, float, float] | None = None,
        now: float | None = None,
    ) -> list[dict[str, Any]]: ...

    def mark_retrieved(
        self, username: str | None, ids: Sequence[int], now: float | None = None
    ) -> None: ...

    def get_active_rules(
        self, username: str | None = None, n: int = 50
    ) -> list[dict[str, Any]]: ...

    def get_user_profile(self, username: str | None = None) -> dict[str, str]: ...

    def set_user_profile(
        self, username: str | None, portrait: str | None = None, extra_info: str | None = None
    ) -> None: ...

    def replace_vectors(
        self, ids: list[int], vectors: np.ndarray, model: str
    ) -> tuple[list[int], dict[str, int]]: ...

    def refit_projections(self, changed: dict[str, int]) -> None: ...
