"""``kb_search`` and ``kb_list_sources``, Fay's two knowledge-base tools (seed 000, the tool
loop's prompt: "如果 kb_search 的结果不够相关，换关键词重试", "可以用 kb_list_sources
查看所有课程列表"; its example call ``{"tool": "kb_search", "args": {"query": "课程A"}}``),
as plain functions over :class:`KnowledgeSearch` returning JSON-able dicts, and their
argument schemas.

Fay's knowledge-base MCP server answers ``{"documents": [...], "distances": [...]}``; the
shape here keeps each text beside its source, so the turn's record can cite it and the model
cannot pair a text with the wrong source. A refusal (an empty query) is a result with an
``error`` the loop can read, not an exception: the tool loop tells the model and goes on.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fayd.kb.errors import KbError
from fayd.kb.port import KnowledgeSearch

KB_SEARCH = "kb_search"
KB_LIST_SOURCES = "kb_list_sources"
DEFAULT_TOP_K = 5
MAX_TOP_K = 20

KB_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "what to look for, in the household's words",
        },
        "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": DEFAULT_TOP_K},
    },
    "required": ["query"],
    "additionalProperties": False,
}
KB_LIST_SOURCES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

#: For a model's tool list (the shape of ``fayd.agent.skills.Skills.describe()``).
TOOLS: list[dict[str, Any]] = [
    {
        "name": KB_SEARCH,
        "description": "Search the household's documents (manuals, leaflets, notes) and "
        "return the passages that best match the query, each with its source.",
        "schema": KB_SEARCH_SCHEMA,
    },
    {
        "name": KB_LIST_SOURCES,
        "description": "List the documents in the household's knowledge base.",
        "schema": KB_LIST_SOURCES_SCHEMA,
    },
]


def kb_search(kb: KnowledgeSearch, query: str, top_k: int = DEFAULT_TOP_K) -> dict[str, Any]:
    """``{"query", "results": [{"source", "chunk", "text", "score"}]}``, best first; a
    refused query: ``{"query", "results": [], "error"}``."""
    try:
        hits = kb.search(query, min(top_k, MAX_TOP_K) if isinstance(top_k, int) else top_k)
    except KbError as exc:
        return {"query": _printable(query), "results": [], "error": str(exc)}
    return {
        "query": _printable(query),
        "results": [
            {"source": h.source, "chunk": h.chunk, "text": h.text, "score": h.score} for h in hits
        ],
    }


def kb_list_sources(kb: KnowledgeSearch) -> dict[str, Any]:
    """``{"sources": [{"name", "chunks", "added_at"}], "count"}`` (``added_at``: ISO 8601, UTC)."""
    sources = kb.sources()
    return {
        "sources": [
            {
                "name": s.name,
                "chunks": s.chunks,
                "added_at": datetime.fromtimestamp(s.added_at, UTC).isoformat(timespec="seconds"),
            }
            for s in sources
        ],
        "count": len(sources),
    }


def _printable(query: object) -> str:
    """The query as a JSON-able str (a refused one may hold lone surrogates)."""
    return str(query).encode("utf-8", "replace").decode("utf-8")[:1000]
