"""Fay's tool loop (fayd.agent.tools) with the real bundled model: it always parses (the
JSON is written under a grammar from the tools' schemas), never runs a call twice, ends, and
a tool that hangs, fails or answers too much never takes the turn down."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from fayd.agent.tools import Prestart, Tool, Toolbox, ToolLoop, TurnTools
from fayd.agent.tools.loop import NONE, step_schema

QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
ZONE = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
BOILER = "The boiler's pressure should read between 1 and 1.5 bar when it is cold."


class Recorded:
    """A tool that keeps every call it gets."""

    def __init__(self, answer: str = BOILER, delay_s: float = 0.0) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer = answer
        self.delay_s = delay_s

    async def __call__(self, args: dict[str, Any]) -> str:
        self.calls.append(args)
        await asyncio.sleep(self.delay_s)
        return self.answer


def kb(call: Recorded) -> Tool:
    return Tool(
        "kb_search", "Search the household's documents and manuals.", QUERY, call, source="kb"
    )


def clock(call: Recorded) -> Tool:
    return Tool("world_time", "The time now in a time zone.", ZONE, call, source="mcp:time")


@pytest.mark.parametrize(
    "question",
    [
        "What time is it in New York?",
        "Tell me something nice.",
        "Could you look up the boiler pressure and also the time in Tokyo?",
    ],
)
async def test_the_loop_always_parses_ends_and_never_repeats_a_call(local_llm, question) -> None:
    docs, times = Recorded(), Recorded("It is 09:15 in that zone.")
    loop = ToolLoop(local_llm, Toolbox([kb(docs), clock(times)]), steps=6)
    found = await loop.run(question)
    assert found.invalid_json == 0
    assert found.ended in (NONE, "repeats", "steps"), found.record()
    made = [json.dumps([c.tool, c.args], sort_keys=True) for c in found.calls]
    assert len(made) == len(set(made))  # never the same call twice
    assert len(docs.calls) + len(times.calls) == len(found.calls) <= 6


async def test_a_question_for_the_documents_calls_the_search(local_llm) -> None:
    docs = Recorded()
    loop = ToolLoop(local_llm, Toolbox([kb(docs)]))
    found = await loop.run("What does the boiler manual say about the pressure?")
    assert docs.calls and found.calls[0].tool == "kb_search", found.record()
    assert BOILER in found.knowledge()


async def test_a_repeated_call_is_refused_and_the_loop_ends(local_llm) -> None:
    """A model that asks for the same call again is told, never served twice: one tool, one
    query the model keeps asking (a step limit of 30 would allow it)."""
    docs = Recorded("Nothing about that.")
    loop = ToolLoop(local_llm, Toolbox([kb(docs)]), steps=30)
    found = await loop.run("Search the documents for boiler.")
    made = [json.dumps(c.args, sort_keys=True) for c in found.calls]
    assert len(made) == len(set(made))
    assert found.steps <= 30 and found.invalid_json == 0


async def test_a_tool_that_hangs_fails_or_floods_is_contained() -> None:
    """No model here: the calls themselves (the loop's ``call_tool``)."""
    loop = ToolLoop(None, Toolbox(), timeout_s=0.3, result_chars=200)  # type: ignore[arg-type]
    hung = await loop.call_tool(kb(Recorded(delay_s=30)), {"query": "x"})
    assert "no answer within 0.3 s" in hung.error and hung.result == ""

    async def broken(args: dict[str, Any]) -> str:
        raise ConnectionError("the server went away")

    failed = await loop.call_tool(Tool("kb_search", "", QUERY, broken), {"query": "x"})
    assert failed.error == "ConnectionError: the server went away"
    flood = await loop.call_tool(kb(Recorded("x" * 10_000_000)), {"query": "x"})
    assert len(flood.result) < 300 and flood.result.endswith("(cut)")
    wrong = await loop.call_tool(kb(Recorded()), {"q": 3})
    assert wrong.error.startswith("wrong arguments") and wrong.result == ""


def test_the_step_schema_allows_none_or_a_known_tool_with_its_arguments() -> None:
    import jsonschema

    schema = step_schema({"kb_search": kb(Recorded())})
    jsonschema.validate({"tool": "none"}, schema)
    jsonschema.validate({"tool": "kb_search", "args": {"query": "boiler"}}, schema)
    for wrong in ({"tool": "rm_rf"}, {"tool": "kb_search", "args": {}}, {"answer": "hi"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)


async def test_prestart_fills_the_question_and_user_and_runs_before_the_loop() -> None:
    docs = Recorded()
    tools = TurnTools(
        ToolLoop(None, Toolbox([kb(docs)])),  # type: ignore[arg-type]
        [Prestart("kb_search", {"query": "{{user}} asks: {{question}}"})],
        loop_mode="off",
    )
    found = await tools.gather("boiler pressure?", "ann", "kitchen", "en", [])
    assert found is not None and docs.calls == [{"query": "ann asks: boiler pressure?"}]
    assert BOILER in found.knowledge()


async def test_without_prestart_the_knowledge_base_is_searched_first() -> None:
    """Fay's default prestart: the household's documents, with the question as it is."""
    docs = Recorded()
    tools = TurnTools(ToolLoop(None, Toolbox([kb(docs)])), loop_mode="off")  # type: ignore[arg-type]
    found = await tools.gather("How do I top up the boiler?", "ann", "kitchen", "en", [])
    assert found is not None and docs.calls == [{"query": "How do I top up the boiler?"}]
    assert (
        await TurnTools(ToolLoop(None, Toolbox()), loop_mode="off").gather(  # type: ignore[arg-type]
            "hello", "ann", "kitchen", "en", []
        )
        is None
    )


async def test_a_prestart_kept_in_history_stays_with_its_question(tmp_path) -> None:
    """Fay's include_history: the results are stored with the question, and the next turns'
    history has them (fayd.store.records.history); a call not kept is not."""
    from fayd.agent.chat import _kept
    from fayd.store import Store, records

    docs = Recorded()
    tools = TurnTools(
        ToolLoop(None, Toolbox([kb(docs)])),  # type: ignore[arg-type]
        [Prestart("kb_search", {"query": "{{question}}"}, include_history=True)],
        loop_mode="off",
    )
    found = await tools.gather("boiler pressure?", "ann", "kitchen", "en", [])
    store = Store(tmp_path / "fayd.db")
    try:
        talk = await store.run(records.conversation_for, "ann", "kitchen")
        await store.run(
            records.record_turn, talk, "boiler pressure?", "1 to 1.5 bar.", _kept(found)
        )
        await store.run(records.record_turn, talk, "thanks", "You're welcome.", _kept(None))
        history = await store.run(records.history, talk, 4)
    finally:
        store.close()
    assert BOILER in history[0]["content"] and history[0]["content"].startswith("boiler pressure?")
    assert history[2]["content"] == "thanks" and BOILER not in history[1]["content"]
    unkept = TurnTools(
        ToolLoop(None, Toolbox([kb(docs)])),
        loop_mode="off",  # type: ignore[arg-type]
    )
    assert "knowledge" not in _kept(await unkept.gather("boiler?", "ann", "k", "en", []))


def test_a_tool_of_open_arguments_is_written_with_none_of_its_own() -> None:
    """An open object (no additionalProperties) let the small model write nested keys until
    its tokens ran out, mid-string: the step schema closes it and bounds its strings."""
    import jsonschema

    loose = Tool("timer_left", "Time left.", {"type": "object", "properties": {}}, Recorded())
    schema = step_schema({"timer_left": loose, "kb_search": kb(Recorded())})
    jsonschema.validate({"tool": "timer_left", "args": {}}, schema)
    for wrong in (
        {"tool": "timer_left", "args": {"nested": {"deeper": "x"}}},
        {"tool": "kb_search", "args": {"query": "x" * 61}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)
