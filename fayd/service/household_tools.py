"""The household's tool sources for the model's look-ups (fayd.agent.tools): its documents
(the knowledge base, ``fayd kb``; ``[tools] kb_folder`` kept in it) and its own MCP servers
(``[tools] mcp_servers``, docs/mcp-client.md). One component: the servers start and stop with
the daemon, and ``fayd status`` says how each is. ``give_tools`` hands them to the chat: the
loop's model (the local one, or Fay's dual-model LAN server, ``llm.tools_url``), the
read-only skills in each turn's context, and the configured prestart calls."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fayd.agent.chat import Chat
from fayd.agent.language.text import language
from fayd.agent.tools import (
    READ_ONLY_SKILLS,
    Prestart,
    Tool,
    Toolbox,
    ToolLoop,
    ToolSource,
    TurnTools,
)
from fayd.agent.tools.skills import skill_tools
from fayd.agent.understanding import Understanding
from fayd.config import Config
from fayd.embedding import EmbedderLike
from fayd.kb import KnowledgeBase
from fayd.kb.knowledge import FILE_NAME
from fayd.kb.tools import KB_LIST_SOURCES, KB_LIST_SOURCES_SCHEMA, KB_SEARCH, KB_SEARCH_SCHEMA
from fayd.llm import ChatLlm
from fayd.mcp.client import McpTools
from fayd.mcp.client_config import parse_servers

log = logging.getLogger(__name__)

#: A passage is related to a question at all when MiniLM's cosine is this high (measured on
#: benchmarks/tool_loop.py's documents_heard: 0.3 heard 0.626 of the English questions, 0.35
#: 0.579; 0.25 also quoted a leaflet to "how are you today?"). Chinese, which MiniLM reads
#: nearly as noise, needs a word of the question in the passage too.
RELATED = {"en": 0.3, "zh": 0.3}
#: At most this many passages go to the model: a small model reads a few well.
PASSAGES = 3
#: The sources are read again at most this often (a `fayd kb add` while fayd runs).
SOURCES_EVERY_S = 2.0


class HouseholdTools:
    def __init__(self, cfg: Config, embedder: EmbedderLike | None) -> None:
        self.cfg = cfg
        self.kb = KnowledgeBase(cfg.state_dir / FILE_NAME, embedder) if embedder else None
        # A wrong server table stops the start here, naming the key (a ConfigError).
        servers = parse_servers(list(cfg.tools.mcp_servers), "tools.mcp_servers")
        self.mcp = McpTools(servers) if servers else None
        self._has_sources = (0.0, False)

    async def run(self) -> None:
        """The supervisor's task: the servers up, the documents folder kept, until stopped."""
        if self.mcp is not None:
            await self.mcp.start()
        try:
            if self.kb is not None and self.cfg.tools.kb_folder:
                report = await asyncio.to_thread(self.kb.add_folder, self.cfg.tools.kb_folder)
                for name, why in report.refused:
                    log.warning("knowledge base: %s not added: %s", name, why)
            await asyncio.Event().wait()
        finally:
            if self.mcp is not None:
                await self.mcp.stop()

    def close(self) -> None:
        if self.kb is not None:
            self.kb.close()

    def status(self) -> dict[str, Any]:
        sources = self.kb.sources() if self.kb is not None else []
        return {
            "documents": len(sources),
            "chunks": sum(s.chunks for s in sources),
            "mcp_servers": self.mcp.status() if self.mcp is not None else [],
        }

    def tools(self) -> list[Tool]:
        """The tools usable now: the knowledge base's when it has documents, and the
        allowed tools of the MCP servers that are up (fayd.agent.tools.ToolSource)."""
        found = self._kb_tools() if self._kb_has_sources() else []
        if self.mcp is not None:
            found += [self._mcp_tool(d) for d in self.mcp.describe()]
        return found

    def _kb_has_sources(self) -> bool:
        checked, has = self._has_sources
        if self.kb is None:
            return False
        if time.monotonic() - checked > SOURCES_EVERY_S:
            has = bool(self.kb.sources())
            self._has_sources = (time.monotonic(), has)
        return has

    def _kb_tools(self) -> list[Tool]:
        kb = self.kb
        assert kb is not None

        async def search(args: dict[str, Any]) -> str:
            query = args["query"]
            hits = await asyncio.to_thread(kb.search, query, args.get("top_k", PASSAGES))
            lang = language(query)
            related = [h for h in hits if h.cosine >= RELATED[lang] and (lang == "en" or h.words)][
                :PASSAGES
            ]
            if not related:
                return ""  # nothing found: the loop tells the model so
            return "\n".join(f"From {h.source}: {h.text}" for h in related)

        async def sources(args: dict[str, Any]) -> str:
            names = [s.name for s in await asyncio.to_thread(kb.sources)]
            return "The household's documents: " + ", ".join(names) + "."

        return [
            Tool(KB_SEARCH, _KB_SEARCH, KB_SEARCH_SCHEMA, search, source="kb"),
            Tool(KB_LIST_SOURCES, _KB_LIST, KB_LIST_SOURCES_SCHEMA, sources, source="kb"),
        ]

    def _mcp_tool(self, described: dict[str, Any]) -> Tool:
        mcp, name = self.mcp, described["name"]
        assert mcp is not None

        async def call(args: dict[str, Any]) -> str:
            result = await mcp.call(name, args)
            if not result.ok:  # the loop shows the model the failure and goes on
                raise ToolFailed(f"{result.error}: {result.text or result.detail}")
            return result.text

        server = name.split("__", 1)[0]
        return Tool(
            name,
            described.get("description", ""),
            described.get("schema") or {"type": "object"},
            call,
            trusted=bool(described.get("trusted")),
            source=f"mcp:{server}",
        )


class ToolFailed(Exception):
    """An MCP tool answered with an error (its server down, a timeout, the tool's own)."""


_KB_SEARCH = "Search the household's own documents (manuals, leaflets, notes, recipes)."
_KB_LIST = "List the names of the household's documents (only when asked which there are)."


def loop_model(cfg: Config, local: ChatLlm | None) -> ChatLlm | None:
    """The model that chooses the tools: the LAN server of ``llm.tools_url``, else the one
    that answers."""
    if not cfg.llm.tools_url:
        return local
    from fayd.llm.remote import RemoteLlm

    llm = cfg.llm
    return RemoteLlm(
        llm.tools_url, model=llm.remote_model, api_key=llm.api_key, timeout_s=llm.timeout_s
    )


def give_tools(
    chat: Chat, cfg: Config, understood: Understanding | None, sources: list[ToolSource]
) -> None:
    """Set ``chat.tools`` (left None without a model: the reply says the model is missing)."""
    llm = loop_model(cfg, chat.llm)
    if llm is None:
        return
    tools = cfg.tools
    loop = ToolLoop(llm, Toolbox(sources=sources), tools.steps, tools.timeout_s, tools.result_chars)
    own = None
    if understood is not None:
        u = understood

        def own(user: str, device: str, lang: str) -> list:
            return skill_tools(u.skills, lambda: u.context(user, device, lang), READ_ONLY_SKILLS)

    prestart = [Prestart.parse(call) for call in tools.prestart]
    # The bundled 135M model cannot retell a passage: documents are quoted (docs/tools.md).
    bundled = not cfg.llm.model_path and not cfg.llm.url
    chat.tools = TurnTools(loop, prestart, tools.loop, own, quote=bundled)
