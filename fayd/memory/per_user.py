"""A daily memory job's loop over the users (the portrait's and the reflection's)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fayd.memory import nodes as db_nodes
from fayd.memory.port import MemoryPort

#: A job's first run (no previous one) looks back this far.
FIRST_WINDOW_S = 86400.0

#: (user, since) → the user's entry in the job's report
RunUser = Callable[[str, float], dict[str, Any]]


def for_each_user(
    memory: MemoryPort,
    job: str,
    log: logging.Logger,
    now: float,
    since: float | None,
    run_user: RunUser,
    wanted: Callable[[str, float], bool] = lambda _user, _since: True,
) -> dict[str, Any]:
    """``run_user(user, since)`` for every ``wanted`` user with memory nodes, in turn, where
    ``since`` is when the previous run started (none: the last day). The report has one entry
    per user run; a failure is logged on the job's ``log`` and reported, never raised."""
    since = now - FIRST_WINDOW_S if since is None else since
    report = []
    for user in memory.store.call(db_nodes.users):
        if not wanted(user, since):
            continue
        try:
            report.append(run_user(user, since))
        except Exception as exc:  # one user's failed model call must not stop the others
            log.error("%s for %s failed: %s", job, user, exc)
            report.append({"user": user, "error": f"{type(exc).__name__}: {exc}"})
    return {"users": report}
