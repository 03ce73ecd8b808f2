"""Fay's tool loop (fayd.agent.tools.loop) on tasks of our own: does the model pick the right
tool with usable arguments, or none for chat, and does the loop always parse and end?

    .venv/bin/python benchmarks/tool_loop.py [--with-skills] [--steps 30]
    FAYD_BENCH_TOOLS_URL=http://192.168.1.20:8080 .venv/bin/python benchmarks/tool_loop.py

The tools are real: the household's documents (benchmarks/data/kb/docs in a knowledge base
of a temporary folder, the real MiniLM) and ``mcp-server-time`` from PyPI over MCP, both
through the daemon's own ``HouseholdTools``. ``--with-skills`` adds the read-only skills'
names, descriptions and schemas as the daemon offers them (their calls are recorded, not run:
this measures the model's choice among more tools). The model: the bundled SmolLM2-135M on
one thread, and the server of ``FAYD_BENCH_TOOLS_URL`` when set (Fay's dual-model mode).

A task passes when the loop's first call is the expected tool (``none``: no call) and, for the
time tasks, a time zone it names is the city's (``Asia/Tokyo``); a multi-step task needs
every expected zone. ``documents_heard``: the knowledge base's questions
(benchmarks/data/kb/questions.jsonl) answered as the daemon answers them with the bundled
model (search, then the closest sentence quoted): does the reply hold the answer? Keys per
model: ``tasks, success_rate, tool_choice_rate, mean_steps,
repeated_calls`` (calls run twice: the loop refuses them, so 0), ``repeats_refused,
invalid_json, judge_ms_p50, turn_ms_p50``, and per kind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fayd.agent.features import all_skills
from fayd.agent.tools import READ_ONLY_SKILLS, Tool, Toolbox, ToolLoop
from fayd.config import load_config
from fayd.embedding import Embedder
from fayd.llm.local import LocalLlm
from fayd.models import resolve
from fayd.service.household_tools import HouseholdTools

DOCS = Path(__file__).parent / "data" / "kb" / "docs"
KB = "kb_search"
NOW = "time__get_current_time"
CONVERT = "time__convert_time"
TIME = (NOW, CONVERT)

#: (question, expected first tool or "none", expected time zones)
TASKS: list[tuple[str, str, tuple[str, ...]]] = [
    # The household's documents (worded as people ask, not as the documents say).
    ("How often should I descale the kettle?", KB, ()),
    ("What does the manual say about cleaning the oven door?", KB, ()),
    ("What time is lunch served at Rosewood House?", KB, ()),
    ("Who do I ring about the boiler?", KB, ()),
    ("Where do we keep the spare key according to the notes?", KB, ()),
    ("How long does the Victoria sponge go in the oven?", KB, ()),
    ("What goes into the leek and potato soup?", KB, ()),
    ("What happened to the tortoise and the hare?", KB, ()),
    ("Can visitors come to Rosewood House on Sundays?", KB, ()),
    ("What's the moral of the fox and the grapes?", KB, ()),
    ("What temperature should the oven be for scones?", KB, ()),
    ("Is there a hairdresser at the care home?", KB, ()),
    ("What does my blood pressure monitor's error light mean?", KB, ()),
    ("Which bin goes out this week according to the household notes?", KB, ()),
    ("How do I reset the oven clock?", KB, ()),
    ("What's in the recipe for shortbread?", KB, ()),
    ("Look in my documents for the plumber's number.", KB, ()),
    ("What does the leaflet say about the minibus trips?", KB, ()),
    ("How do I use the kettle's keep-warm setting?", KB, ()),
    ("Search my notes for the doctor's surgery hours.", KB, ()),
    ("What does the oven manual say about the child lock?", KB, ()),
    ("社区食堂几点开饭？", KB, ()),
    ("血压计怎么换电池？", KB, ()),
    ("守株待兔讲的是什么故事？", KB, ()),
    ("养老服务中心的电话是多少？", KB, ()),
    # The world's clocks, from the household's MCP time server.
    ("What time is it in Tokyo?", NOW, ("Asia/Tokyo",)),
    ("What's the time in New York right now?", NOW, ("America/New_York",)),
    ("Is it night time in Sydney?", NOW, ("Australia/Sydney",)),
    ("What time is it in Paris?", NOW, ("Europe/Paris",)),
    ("My son lives in Toronto: what time is it there?", NOW, ("America/Toronto",)),
    ("What's the time in Los Angeles?", NOW, ("America/Los_Angeles",)),
    ("Could you tell me the time in Berlin?", NOW, ("Europe/Berlin",)),
    ("What time is it in Hong Kong at the moment?", NOW, ("Asia/Hong_Kong",)),
    ("If it is 3pm here in London, what time is it in New York?", CONVERT, ("America/New_York",)),
    (
        "When it's 9 in the morning in London, what time is it in Sydney?",
        CONVERT,
        ("Australia/Sydney",),
    ),
    ("What time is it in Tokyo and in Paris?", NOW, ("Asia/Tokyo", "Europe/Paris")),
    ("Is my daughter in Auckland awake yet? What time is it there?", NOW, ("Pacific/Auckland",)),
    # Chat: no tool.
    ("Do you like cats?", "none", ()),
    ("Tell me something nice.", "none", ()),
    ("I'm feeling a bit lonely today.", "none", ()),
    ("What's your favourite colour?", "none", ()),
    ("Why is the sky blue?", "none", ()),
    ("I had a lovely walk by the river.", "none", ()),
    ("My granddaughter sang in the school choir.", "none", ()),
    ("Shall we have a chat?", "none", ()),
    ("Tell me a joke.", "none", ()),
    ("What's your name?", "none", ()),
    ("I miss my husband.", "none", ()),
    ("The garden looks pretty today.", "none", ()),
    ("Do you ever get tired?", "none", ()),
    ("What shall I have for tea?", "none", ()),
    ("I've been knitting a scarf.", "none", ()),
]


def kind(expected: str) -> str:
    return {KB: "documents", NOW: "time", CONVERT: "time"}.get(expected, "chat")


def passed(task: tuple[str, str, tuple[str, ...]], found: Any) -> tuple[bool, bool]:
    """(tool chosen right, task done): the first call's tool; every expected zone named."""
    _, expected, zones = task
    first = found.calls[0].tool if found.calls else "none"
    chose = first == expected or (expected in TIME and first in TIME)
    if not zones:
        return chose, chose
    named = {json.dumps(c.args) for c in found.calls if c.tool in TIME}
    return chose, chose and all(any(z in n for n in named) for z in zones)


def recorded(name: str, description: str, schema: dict[str, Any]) -> Tool:
    async def call(args: dict[str, Any]) -> str:
        return f"({name} is not run in this benchmark)"

    return Tool(name, description, schema, call, source="skill")


async def run_model(llm: Any, tools: list[Tool], steps: int) -> dict[str, Any]:
    loop = ToolLoop(llm, Toolbox(tools), steps=steps, timeout_s=10)
    rows = []
    for task in TASKS:
        started = time.perf_counter()
        found = await loop.run(task[0])
        turn_ms = (time.perf_counter() - started) * 1000
        chose, done = passed(task, found)
        made = [json.dumps([c.tool, c.args], sort_keys=True) for c in found.calls]
        rows.append(
            {
                "kind": kind(task[1]),
                "chose": chose,
                "done": done,
                "steps": found.steps,
                "repeated": len(made) - len(set(made)),
                "refused": found.repeats_refused,
                "invalid": found.invalid_json,
                "judge_ms": found.judge_ms,
                "turn_ms": turn_ms,
                "calls": [[c.tool, c.args] for c in found.calls],
                "question": task[0],
            }
        )
    return summary(rows)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def rate(rs: list[dict[str, Any]], key: str) -> float:
        return round(sum(r[key] for r in rs) / len(rs), 3) if rs else 0.0

    kinds = sorted({r["kind"] for r in rows})
    return {
        "tasks": len(rows),
        "success_rate": rate(rows, "done"),
        "tool_choice_rate": rate(rows, "chose"),
        "mean_steps": round(statistics.mean(r["steps"] for r in rows), 2),
        "repeated_calls": sum(r["repeated"] for r in rows),
        "repeats_refused": sum(r["refused"] for r in rows),
        "invalid_json": sum(r["invalid"] for r in rows),
        "judge_ms_p50": round(statistics.median(r["judge_ms"] for r in rows), 1),
        "turn_ms_p50": round(statistics.median(r["turn_ms"] for r in rows), 1),
        "per_kind": {
            k: {
                "tasks": len(rs := [r for r in rows if r["kind"] == k]),
                "success_rate": rate(rs, "done"),
                "tool_choice_rate": rate(rs, "chose"),
            }
            for k in kinds
        },
        "failed": [[r["question"], r["calls"]] for r in rows if not r["done"]][:12],
    }


async def documents_heard(tools: list[Tool], embedder: Any) -> dict[str, Any]:
    """What a person hears for a question about the documents, as the daemon answers with the
    bundled model: the knowledge base searched with the question (the default prestart),
    then its closest sentence quoted (fayd.agent.tools.quote). ``heard_rate``: the reply
    contains the expected phrase; ``declined_rate``: nothing close enough was said."""
    from fayd.agent.tools import quote

    search = next(t for t in tools if t.name == KB)
    rows = []
    for line in (DOCS.parent / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        found = await search.call({"query": q["question"]})
        said = quote.quote(q["question"], quote.passages(found), embedder) or ""
        squash = lambda t: "".join(t.lower().split())  # noqa: E731
        rows.append((q["lang"], squash(q["expect"]) in squash(said), not said))
    out = {}
    for lang in ("en", "zh"):
        mine = [r for r in rows if r[0] == lang]
        out[lang] = {
            "questions": len(mine),
            "heard_rate": round(sum(r[1] for r in mine) / len(mine), 3),
            "declined_rate": round(sum(r[2] for r in mine) / len(mine), 3),
        }
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--with-skills", action="store_true")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="fayd-tools-"))
    servers = [
        {
            "name": "time",
            "command": [
                sys.executable,
                "-m",
                "mcp_server_time",
                "--local-timezone",
                "Europe/London",
            ],
            "allow": ["get_current_time", "convert_time"],
        }
    ]
    env = {"FAYD_PATHS_STATE_DIR": str(state), "FAYD_TOOLS_MCP_SERVERS": json.dumps(servers)}
    cfg = load_config(environ=env)
    files = resolve("embed").files
    embedder = Embedder(files["model"], files["tokenizer"], threads=1)
    household = HouseholdTools(cfg, embedder)
    assert household.kb is not None and household.mcp is not None
    household.kb.add_folder(DOCS)
    await household.mcp.start()
    await household.mcp.wait_started(30)
    tools = household.tools()
    if args.with_skills:
        skills = all_skills()
        tools += [
            recorded(s.name, s.description, s.schema)
            for name in READ_ONLY_SKILLS
            if (s := skills.by_name.get(name))
        ]
    out: dict[str, Any] = {"tools": [t.name for t in tools]}
    try:
        out["documents_heard"] = await documents_heard(tools, embedder)
        local = LocalLlm(resolve("llm").files["model"], n_ctx=2048, threads=1, seed=1234)
        out["bundled_135m"] = await run_model(local, tools, args.steps)
        url = os.environ.get("FAYD_BENCH_TOOLS_URL")
        if url:
            from fayd.llm.remote import RemoteLlm

            out["tools_url"] = await run_model(RemoteLlm(url, timeout_s=60), tools, args.steps)
    finally:
        await household.mcp.stop()
        household.close()
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
