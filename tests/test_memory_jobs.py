"""The reflection and portrait jobs with the real small LLM, on a driven clock: an overdue
job runs once after a start, never twice, across restarts; a failing model writes nothing."""

from __future__ import annotations

import asyncio
from datetime import datetime as dt
from pathlib import Path

import pytest

from fayd.errors import ModelError
from fayd.memory import Memory, NewNode
from fayd.memory.jobs import JOBS, job_states, latest_slot, next_slot, run_due, run_jobs_forever
from fayd.memory.portrait import fit_chars
from fayd.memory.reflection import parse_insights
from fayd.store import Store

pytestmark = pytest.mark.models
DAY = 86400.0
# 2026-04-27 23:30 local: both slots of that day (11:30, 23:00) are in the past.
NIGHT = dt(2026, 4, 27, 23, 30).timestamp()
EVENTS = [
    ("2026/04/27 08:00:00", "Ann slept badly because of her back pain.", "event"),
    ("2026/04/27 10:00:00", "Ann walked to the park with her grandson Leo.", "event"),
    ("2026/04/27 20:00:00", "Ann's daughter Clara calls her every Sunday.", "fact"),
]
TALK = "Ann：I feel a bit lonely in the evenings.\nFay：I'm here. Shall we talk about your day?"


def seed(memory: Memory) -> None:
    nodes = [
        NewNode(
            content,
            "ann",
            tags=[f"kind:{kind}", "source:user", "domain:homecare", "date:2026-04-27"],
            datetime=stamp,
            importance=5,
        )
        for stamp, content, kind in EVENTS
    ]
    nodes.append(
        NewNode(
            TALK,
            "ann",
            "conversation",
            tags=["kind:observation", "source:conversation", "session:7"],
            datetime="2026/04/27 19:00:00",
            importance=4,
        )
    )
    memory.add(nodes)


class FailingModel:
    """A model whose every call fails (a real failure: the model file vanished, a crash)."""

    n_ctx = 2048

    def count_tokens(self, text: str) -> int:
        return len(text) // 3 + 1

    def chat(self, messages, **kwargs):
        raise ModelError("LLM generation failed: the model crashed")


def test_slots_are_the_latest_scheduled_time_in_local_time() -> None:
    portrait, reflection = JOBS
    assert dt.fromtimestamp(latest_slot(reflection, NIGHT)) == dt(2026, 4, 27, 23, 0)
    assert dt.fromtimestamp(latest_slot(reflection, NIGHT - 3600)) == dt(2026, 4, 26, 23, 0)
    assert dt.fromtimestamp(next_slot(portrait, NIGHT)) == dt(2026, 4, 28, 11, 30)


def test_overdue_jobs_run_once_after_start_never_twice(tmp_path: Path, embedder, local_llm):
    db = tmp_path / "fayd.db"
    memory = Memory(Store(db), embedder)
    seed(memory)
    assert run_due(memory, local_llm, NIGHT - DAY) == {}  # a new install: the schedule starts
    first = run_due(memory, local_llm, NIGHT)
    assert set(first) == {"portrait", "reflection"}
    assert first["reflection"]["status"] == "ok", first
    (user,) = first["reflection"]["users"]
    reflections = memory.get_reflections("ann")
    assert len(reflections) == len(user["written"]) >= 1  # the grammar asks for 1 to 5
    for node in reflections:  # whatever the tiny model wrote, the bookkeeping is Fay's
        assert node["node_type"] == "reflection"
        assert set(node["pointer_id"]) <= {1, 2, 3, 4} and node["pointer_id"]
        assert {"kind:insight", "source:fay_reflection", "domain:homecare"} <= set(node["tags"])
        assert not any(t.startswith(("date:", "session:", "kind:event")) for t in node["tags"])
    portrait = memory.get_user_profile("ann")["portrait"]
    assert first["portrait"]["users"][0].get("chars") == len(portrait) and 10 <= len(portrait)
    assert len(portrait) <= 1000
    # Again at once, and after a restart one minute later: nothing is due.
    assert run_due(memory, local_llm, NIGHT) == {}
    memory.store.close()
    memory = Memory(Store(db), embedder)
    assert run_due(memory, local_llm, NIGHT + 60) == {}
    # Days later (the daemon was off): each job runs once, for the latest slot only.
    later = NIGHT + 3 * DAY
    assert set(run_due(memory, local_llm, later)) == {"portrait", "reflection"}
    assert run_due(memory, local_llm, later + 60) == {}
    states = memory.store.call(job_states)
    assert states["reflection"]["last_slot"] == latest_slot(JOBS[1], later)
    assert states["reflection"]["status"] == "ok"
    memory.store.close()


def test_a_failing_model_writes_nothing_and_is_not_retried(tmp_path: Path, embedder) -> None:
    memory = Memory(Store(tmp_path / "fayd.db"), embedder)
    seed(memory)
    memory.set_user_profile("ann", "Ann is 82 and lives alone.")
    assert run_due(memory, FailingModel(), NIGHT - DAY) == {}  # the schedule starts
    report = run_due(memory, FailingModel(), NIGHT)
    assert "ModelError" in report["reflection"]["users"][0]["error"]
    assert memory.get_reflections("ann") == []
    assert memory.get_user_profile("ann")["portrait"] == "Ann is 82 and lives alone."
    assert run_due(memory, FailingModel(), NIGHT + 60) == {}  # at most once per slot
    assert run_due(memory, None, NIGHT + 2 * DAY) == {}  # no model: nothing claimed
    assert memory.store.call(job_states)["reflection"]["last_slot"] < NIGHT
    memory.store.close()


async def test_run_jobs_forever_on_a_driven_clock(tmp_path: Path, embedder) -> None:
    memory = Memory(Store(tmp_path / "fayd.db"), embedder)
    clock = [NIGHT]
    task = asyncio.create_task(
        run_jobs_forever(memory, FailingModel(), lambda: clock[0], poll_s=0.01)
    )
    try:
        for _ in range(500):
            if len(memory.store.call(job_states)) == 2:
                break
            await asyncio.sleep(0.01)
        clock[0] = NIGHT + DAY  # a day passes: both run again, once
        for _ in range(500):
            states = memory.store.call(job_states)
            if all(s["last_slot"] > NIGHT for s in states.values()):
                break
            await asyncio.sleep(0.01)
        assert {n: s["started_at"] for n, s in states.items()} == {
            "portrait": NIGHT + DAY,
            "reflection": NIGHT + DAY,
        }
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        memory.store.close()


def test_answers_are_parsed_and_portraits_cut_between_sentences() -> None:
    assert parse_insights('{"reflection": ["Ann sleeps badly.", "ann sleeps badly.", 3]}') == [
        "Ann sleeps badly."
    ]
    assert parse_insights("not json") == [] and parse_insights('{"reflection": "x"}') == []
    text = "Ann is kind. " * 100
    cut = fit_chars(text)
    assert len(cut) <= 1000 and cut.endswith("Ann is kind.")
    assert fit_chars("word " * 400).endswith("…") and len(fit_chars("word " * 400)) <= 1000
