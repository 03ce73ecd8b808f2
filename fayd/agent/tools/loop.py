"""Fay's tool loop before the model's reply (seed 000, "prompt design"): the model reads the
question and the tools and answers in JSON, either a tool call or that it needs none (Fay's
chit-chat judge); each call's result is read back, and the model calls another or is done;
then the reply is written as every chit-chat reply is (fayd.agent.chat), with what the tools
found as the only facts it may state (the guard's grounds).

The JSON is written under a grammar made from the tools' schemas (``response_format``:
llama.cpp turns it into a grammar; a LAN llama.cpp server does the same), so a local model
cannot write invalid JSON; what comes back is still parsed and checked against the schema.
At most ``steps`` calls; a call with the same name and arguments as an earlier one is never
run again (the model is told so, and a second repeat ends the loop); each call has a
timeout and its result a length limit."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from fayd.agent.tools.toolbox import Tool, Toolbox
from fayd.llm import ChatLlm

log = logging.getLogger(__name__)

#: The model's answer when it needs no tool (the judge's "chit-chat") or has enough.
NONE = "none"
#: Tokens for one step's JSON beyond its string arguments (braces, keys, the tool's name);
#: each string argument adds ARG_CHARS * 2 (a token is rarely less than half a character).
STEP_TOKENS = 64
#: Heads the results in the model's context: what it may say, without saying how it knows.
KNOWN = "What was looked up for this question (say it simply; never mention looking it up):"
INSTRUCTIONS = (
    "You are a helpful assistant with these tools:\n{tools}\n"
    "Reply in JSON with the tool to call and its arguments. If the question is only chat,"
    ' or what was found already answers it, use the tool "none".'
)
#: Said to the model that asks for a call it already made.
ALREADY = (
    "{name} was already called with these arguments; its result is above. Call another tool"
    ' or answer {{"tool": "none"}}.'
)
#: A string argument the model writes is at most this long: a step always fits STEP_TOKENS,
#: so the grammar's JSON is never cut off unfinished.
ARG_CHARS = 60


@dataclass
class ToolCall:
    tool: str
    args: dict[str, Any]
    result: str = ""
    error: str = ""
    ms: float = 0.0
    #: Where the result came from ("kb", "mcp:time", "skill"): the turn's record cites it.
    source: str = ""
    #: Kept with the question in the conversation's history (a prestart's include_history).
    kept: bool = False

    def record(self) -> dict[str, Any]:
        out = {"tool": self.tool, "args": self.args, "ms": round(self.ms, 1), "source": self.source}
        return out | ({"error": self.error} if self.error else {"chars": len(self.result)})


@dataclass
class Findings:
    """What a turn's tools found, and how the loop went (``fayd say --explain``, the
    benchmark)."""

    calls: list[ToolCall] = field(default_factory=list)
    steps: int = 0
    #: Calls the model asked for again with the same arguments: never run twice.
    repeats_refused: int = 0
    #: Model outputs that did not parse or fit a schema (0 under a grammar).
    invalid_json: int = 0
    judge_ms: float = 0.0
    ended: str = ""  # "none" (the model needed no more), "steps", "repeats", "failed"

    def knowledge(self, kept_only: bool = False, retold: bool = True) -> str:
        """The results as the model's background: the only facts its reply may state
        (``kept_only``: those to keep in the history; ``retold``: False leaves out the
        documents' passages, for a model that cannot retell them)."""
        found = [
            c
            for c in self.calls
            if c.result and not c.error and (c.kept or not kept_only)
            if retold or c.source != "kb"
        ]
        if not found:
            return ""
        lines = "\n".join(f"- {c.result}" for c in found)
        return f"{KNOWN}\n{lines}"

    def record(self) -> dict[str, Any]:
        return {
            "calls": [c.record() for c in self.calls],
            "steps": self.steps,
            "repeats_refused": self.repeats_refused,
            "invalid_json": self.invalid_json,
            "ended": self.ended,
        }


def step_schema(tools: dict[str, Tool]) -> dict[str, Any]:
    """One step's JSON: "none", or one of the tools with its arguments."""
    # The tools first: a grammar's first alternative is the small model's likeliest path.
    options: list[dict[str, Any]] = []
    for tool in tools.values():
        options.append(
            {
                "type": "object",
                "properties": {"tool": {"const": tool.name}, "args": _bounded(tool.schema)},
                "required": ["tool", "args"],
                "additionalProperties": False,
            }
        )
    none = {"type": "object", "properties": {"tool": {"const": NONE}}, "required": ["tool"]}
    options.append(none | {"additionalProperties": False})
    return {"oneOf": options}


def _bounded(schema: Any) -> Any:
    """``schema`` as the model may write it: every string at most ARG_CHARS long, and an
    object only the properties it names (an open one let the small model write nested keys
    until its tokens ran out, mid-string)."""
    if isinstance(schema, list):
        return [_bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bounded(v) for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out["maxLength"] = min(out.get("maxLength", ARG_CHARS), ARG_CHARS)
    if out.get("type") == "object":
        out["additionalProperties"] = False
        out.setdefault("properties", {})
    return out


def _strings(schema: Any) -> int:
    """How many string values a schema's JSON can hold (a list's: counted once)."""
    if isinstance(schema, list):
        return sum(_strings(s) for s in schema)
    if not isinstance(schema, dict):
        return 0
    own = 1 if schema.get("type") == "string" else 0
    return own + sum(_strings(v) for k, v in schema.items() if k not in ("enum", "const"))


def _described(tools: dict[str, Tool]) -> str:
    lines = []
    for tool in tools.values():
        props = tool.schema.get("properties", {})
        args = ", ".join(f"{k} ({v.get('type', 'any')})" for k, v in props.items()) or "none"
        lines.append(f"- {tool.name}: {tool.description} Arguments: {args}.")
    return "\n".join(lines)


class ToolLoop:
    def __init__(
        self,
        llm: ChatLlm,
        toolbox: Toolbox,
        steps: int = 30,
        timeout_s: float = 10.0,
        result_chars: int = 1500,
    ) -> None:
        self.llm = llm
        self.toolbox = toolbox
        self.steps = steps
        self.timeout_s = timeout_s
        self.result_chars = result_chars

    async def run(
        self,
        question: str,
        history: list[dict[str, str]] | None = None,
        offered: list[Tool] | None = None,
    ) -> Findings:
        """The tools' findings for ``question`` (the recent ``history`` for what "it" is;
        ``offered``: this turn's tools, when the caller has read them; else the toolbox's)."""
        tools = {t.name: t for t in offered} if offered is not None else self.toolbox.current()
        found = Findings()
        if not tools:
            return found
        schema = step_schema(tools)
        budget = STEP_TOKENS + 2 * ARG_CHARS * max(_strings(t.schema) for t in tools.values())
        messages = [
            {"role": "system", "content": INSTRUCTIONS.format(tools=_described(tools))},
            *(history or [])[-4:],
            {"role": "user", "content": question},
        ]
        seen: set[str] = set()
        while found.steps < self.steps:
            started = time.perf_counter()
            step = await self._step(messages, schema, found, budget)
            if found.steps == 0:
                found.judge_ms = (time.perf_counter() - started) * 1000
            found.steps += 1
            if step is None:
                found.ended = "failed"
                break
            name = step["tool"]
            if name == NONE:
                found.ended = NONE
                break
            args = step.get("args", {})
            messages.append({"role": "assistant", "content": json.dumps(step, ensure_ascii=False)})
            key = json.dumps([name, args], sort_keys=True, ensure_ascii=False)
            if key in seen:  # never run twice; the model is told, a second repeat ends it
                found.repeats_refused += 1
                if found.repeats_refused >= 2:
                    found.ended = "repeats"
                    break
                messages.append({"role": "user", "content": ALREADY.format(name=name)})
                continue
            seen.add(key)
            call = await self.call_tool(tools[name], args)
            found.calls.append(call)
            said = f"failed: {call.error}" if call.error else call.result or "nothing found"
            messages.append({"role": "user", "content": f"Result of {name}: {said}"})
        else:
            found.ended = "steps"
        return found

    async def _step(
        self, messages: list[dict[str, str]], schema: dict[str, Any], found: Findings, budget: int
    ) -> dict[str, Any] | None:
        """The model's next step, checked; None when it fails or writes what does not fit."""
        try:
            text = await asyncio.to_thread(
                self.llm.chat,
                messages,
                max_tokens=budget,
                temperature=0.0,
                response_format={"type": "json_object", "schema": schema},
            )
        except Exception as exc:  # a model that fails here leaves the reply to the chat
            log.warning("tool loop: the model failed: %s: %s", type(exc).__name__, exc)
            return None
        try:
            step = json.loads(text)
            jsonschema.validate(step, schema)
        except (ValueError, jsonschema.ValidationError):
            found.invalid_json += 1
            log.warning("tool loop: the model's step is not valid JSON for the tools")
            return None
        return step

    async def call_tool(self, tool: Tool, args: dict[str, Any]) -> ToolCall:
        """One call, within the timeout, its result cut to the limit; a fault is its error."""
        call = ToolCall(tool.name, args, source=tool.source)
        started = time.perf_counter()
        try:
            jsonschema.validate(args, tool.schema)
            result = await asyncio.wait_for(tool.call(args), self.timeout_s)
        except jsonschema.ValidationError as exc:
            call.error = f"wrong arguments: {exc.message}"[:300]
        except TimeoutError:
            call.error = f"no answer within {self.timeout_s:g} s"
        except Exception as exc:  # a tool's fault is the loop's to report, not the turn's end
            call.error = f"{type(exc).__name__}: {exc}"[:300]
        else:
            if len(result) > self.result_chars:
                result = result[: self.result_chars] + " … (cut)"
            call.result = result
        call.ms = (time.perf_counter() - started) * 1000
        log.info(
            "tool %s: %s in %.0f ms", tool.name, "failed" if call.error else "answered", call.ms
        )
        return call
