"""The memory jobs' scheduler: the portrait at 11:30 and the reflection at 23:00, local time.

Each job's last claimed *slot* (the scheduled time it ran for) is kept in SQLite. A job is
due when the latest slot at or before now is newer than the one it last claimed, so after a
restart (or days off) an overdue job runs once, for the latest slot only, and a slot never
runs twice. The slot is claimed in one transaction *before* the job runs: a crash in the
middle loses that run rather than repeating it (its writes would be doubled). On a new
installation the schedule starts at the first check and the first run is at the next slot.
Without a language model nothing is claimed: the jobs wait for one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime as dt
from datetime import timedelta
from typing import Any

import sqlite_utils

from fayd.llm import ChatLlm
from fayd.memory.port import MemoryPort
from fayd.memory.portrait import run_portrait
from fayd.memory.reflection import run_reflection

log = logging.getLogger(__name__)

#: (memory, llm, now, since, agent_name) → a JSON-able report; ``since`` is when the
#: previous run started (None the first time).
JobFn = Callable[[Any, Any, float, float | None, str], dict[str, Any]]


@dataclass(frozen=True)
class Job:
    name: str
    hour: int
    minute: int
    run: JobFn


JOBS = (Job("portrait", 11, 30, run_portrait), Job("reflection", 23, 0, run_reflection))
#: Longest sleep between checks: a suspended machine or a clock change is noticed soon.
POLL_S = 60.0


def latest_slot(job: Job, now: float) -> float:
    """The job's scheduled time at or before ``now`` (local wall clock), as UTC epoch."""
    local = dt.fromtimestamp(now)
    slot = local.replace(hour=job.hour, minute=job.minute, second=0, microsecond=0)
    if slot.timestamp() > now:
        slot -= timedelta(days=1)
    return slot.timestamp()


def next_slot(job: Job, now: float) -> float:
    slot = dt.fromtimestamp(latest_slot(job, now)) + timedelta(days=1)
    return slot.timestamp()


def claim(
    db: sqlite_utils.Database, name: str, slot: float, now: float
) -> tuple[bool, float | None]:
    """(claimed, when the previous run started): claims ``slot`` if it is newer than the
    last one claimed. Runs as one transaction on the single writer, so it cannot race."""
    row = db.execute(
        "SELECT last_slot, started_at FROM memory_jobs WHERE name = ?", [name]
    ).fetchone()
    if row is not None and row[0] >= slot:
        return False, row[1]
    if row is None:
        # A new installation: the schedule starts now and the first run is at the next
        # slot. (Running both jobs at the first start would hold the model for the user's
        # first questions, with nothing yet to reflect on.)
        db.execute(
            "INSERT INTO memory_jobs (name, last_slot, started_at, finished_at, status, detail)"
            " VALUES (?, ?, 0, NULL, 'scheduled', '')",
            [name, slot],
        )
        return False, None
    db.execute(
        "INSERT OR REPLACE INTO memory_jobs (name, last_slot, started_at, finished_at, status,"
        " detail) VALUES (?, ?, ?, NULL, 'running', '')",
        [name, slot, now],
    )
    return True, None if row is None else row[1]


def finish(db: sqlite_utils.Database, name: str, status: str, detail: str, now: float) -> None:
    db.execute(
        "UPDATE memory_jobs SET status = ?, detail = ?, finished_at = ? WHERE name = ?",
        [status, detail, now, name],
    )


def job_states(db: sqlite_utils.Database) -> dict[str, dict[str, Any]]:
    rows = db.execute(
        "SELECT name, last_slot, started_at, finished_at, status, detail FROM memory_jobs"
    )
    keys = ("last_slot", "started_at", "finished_at", "status", "detail")
    return {r[0]: dict(zip(keys, r[1:], strict=True)) for r in rows}


def run_due(
    memory: MemoryPort,
    llm: ChatLlm | None,
    now: float,
    jobs: tuple[Job, ...] = JOBS,
    agent_name: str = "Fay",
) -> dict[str, dict[str, Any]]:
    """Run every due job once (blocking); returns the report of each job that ran."""
    if llm is None:
        return {}
    reports = {}
    for job in jobs:
        claimed, since = memory.store.call(claim, job.name, latest_slot(job, now), now)
        if not claimed:
            continue
        log.info("memory job %s: running", job.name)
        try:
            report = job.run(memory, llm, now, since, agent_name)
            status = "ok"
        except Exception as exc:  # reported in the table and the log; the loop goes on
            log.exception("memory job %s failed", job.name)
            report, status = {"error": f"{type(exc).__name__}: {exc}"}, "error"
        detail = json.dumps(report, ensure_ascii=False)
        memory.store.call(finish, job.name, status, detail, now)
        reports[job.name] = {"status": status, **report}
    return reports


async def run_jobs_forever(
    memory: MemoryPort,
    llm: ChatLlm | None,
    now: Callable[[], float] = time.time,
    *,
    jobs: tuple[Job, ...] = JOBS,
    poll_s: float = POLL_S,
    agent_name: str = "Fay",
) -> None:
    """A supervisor component: run due jobs (off the event loop), sleep until the next slot
    or ``poll_s``, again. Cancel it to stop; a job in progress finishes in its thread."""
    if llm is None:
        log.warning("memory jobs: no language model, reflection and portrait will not run")
    while True:
        t = now()
        await asyncio.to_thread(run_due, memory, llm, t, jobs, agent_name)
        wait = min(next_slot(job, t) for job in jobs) - t
        await asyncio.sleep(min(poll_s, max(wait, 0.0)))
