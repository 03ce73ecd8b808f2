"""What the model may look up before it answers (docs/tools.md): calls made before every turn
(Fay's prestart tools), then Fay's tool loop (fayd.agent.tools.loop) over the household's
knowledge base, its MCP servers and the skills that only read. The router has already
answered what it knows in code; this runs only for what it left to the model."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fayd.agent.tools.loop import Findings, ToolCall, ToolLoop
from fayd.agent.tools.toolbox import Tool, Toolbox, ToolSource

__all__ = ["READ_ONLY_SKILLS", "Findings", "Prestart", "Tool", "ToolCall", "ToolLoop"]
__all__ += ["ToolSource", "Toolbox"]
__all__ += ["TurnTools"]

log = logging.getLogger(__name__)

#: The skills the model may call: they only read (the time, what the person told, their
#: readings and reminders). Skills that act are the router's alone.
READ_ONLY_SKILLS = (
    "clock_time",
    "clock_date",
    "days_until",
    "recall",
    "own_past",
    "last_reading",
    "list_reminders",
    "timer_left",
    "medication_taken",
    "day_digest",
)


@dataclass(frozen=True)
class Prestart:
    """A call made before the model answers (``[tools] prestart``)."""

    tool: str
    args: dict[str, Any]
    #: Fay's include_history: the results are kept with the turn's record.
    include_history: bool = False

    @classmethod
    def parse(cls, table: dict[str, Any]) -> Prestart:
        return cls(table["tool"], dict(table.get("args", {})), table.get("include_history", False))

    def filled(self, question: str, user: str) -> dict[str, Any]:
        """The arguments with ``{{question}}`` and ``{{user}}`` filled in."""

        def fill(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace("{{question}}", question).replace("{{user}}", user)
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            if isinstance(value, list):
                return [fill(v) for v in value]
            return value

        return fill(self.args)


class TurnTools:
    """Prestart calls and the loop, for one chit-chat turn. ``skills``: the read-only skills
    as tools for a user on a device (set by fayd.service, which has the skills' context);
    ``loop_mode`` "auto": the loop runs when a tool beyond those skills exists (a
    knowledge base with documents, an MCP server), "off": never."""

    def __init__(
        self,
        loop: ToolLoop,
        prestart: list[Prestart] | None = None,
        loop_mode: str = "auto",
        skills: Callable[[str, str, str], list[Tool]] | None = None,
        quote: bool = False,
    ) -> None:
        #: The household's documents are said in their own words, not retold by the model
        #: (fayd.agent.tools.quote): for the bundled small model.
        self.quote = quote
        self.loop = loop
        self.prestart = prestart or []
        self.loop_mode = loop_mode
        self.skills = skills

    async def gather(
        self, question: str, user: str, device: str, lang: str, history: list[dict[str, str]]
    ) -> Findings | None:
        """What the tools found for the question; None when nothing ran."""
        outside = self.loop.toolbox.current()
        found = Findings()
        for call in self._prestart(outside):
            made = await self.loop.call_tool(outside[call.tool], call.filled(question, user))
            made.kept = call.include_history
            found.calls.append(made)
        if self.loop_mode == "off" or not outside:
            return found if found.calls else None
        if self.quote and found.knowledge():
            # The small model that cannot retell a passage cannot choose tools either (it
            # sent the documents' questions to the time server with made-up zones): what
            # the prestart found is the answer.
            return found
        own = self.skills(user, device, lang) if self.skills else []
        looped = await self.loop.run(question, history, [*own, *outside.values()])
        looped.calls[:0] = found.calls
        return looped

    def _prestart(self, tools: dict[str, Tool]) -> list[Prestart]:
        """The configured calls; without any, the knowledge base's search when it has
        documents (Fay's default prestart)."""
        calls = self.prestart or (
            [Prestart("kb_search", {"query": "{{question}}"})] if "kb_search" in tools else []
        )
        ready = [c for c in calls if c.tool in tools]
        for call in calls:
            if call.tool not in tools:
                log.warning("prestart: no tool %s (is its server up?)", call.tool)
        return ready
