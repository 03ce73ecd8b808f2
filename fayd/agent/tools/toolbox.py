"""The tools the model may call in a turn (Fay's tool loop, fayd.agent.tools.loop): each a
name, a description, the JSON schema of its arguments and an async call that returns text.
They come from the household's knowledge base, its own MCP servers and the skills that only
read (the time, the date: the router usually answers those before any model runs); skills
that act (reminders, alerts) are never the model's to call: only the router acts, on what
was said in so many words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

Call = Callable[[dict[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    #: JSON schema of the arguments (an object).
    schema: dict[str, Any]
    call: Call
    #: Its results may be kept in memory as they are; an untrusted one's only through the
    #: quarantine (fayd.memory.quarantine).
    trusted: bool = True
    #: Where its results come from, for the turn's record ("kb", "mcp:time", "skill").
    source: str = ""


class ToolSource(Protocol):
    """Tools from outside the agent (the knowledge base, an MCP client), as service wires
    them: what they are now (a server may come and go) and how to call one."""

    def tools(self) -> list[Tool]: ...


class Toolbox:
    """The tools of a turn, by name, from fixed tools and sources read each time (an MCP
    server that restarted, a knowledge base that got its first document)."""

    def __init__(self, fixed: Iterable[Tool] = (), sources: Iterable[ToolSource] = ()) -> None:
        self.fixed = list(fixed)
        self.sources = list(sources)

    def current(self) -> dict[str, Tool]:
        found = {t.name: t for t in self.fixed}
        for source in self.sources:
            found.update((t.name, t) for t in source.tools())
        return found
