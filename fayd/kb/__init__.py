"""The household's knowledge base: documents (text, Markdown, HTML, PDF) split into chunks,
embedded with the local model, indexed with FTS5 and searched as the ``kb_search`` and
``kb_list_sources`` tools (Fay's names). docs: README.md, "Knowledge base"."""

from fayd.kb.errors import BadQuery, KbError, UnknownSource, UnreadableDocument
from fayd.kb.knowledge import KnowledgeBase
from fayd.kb.port import AddReport, FolderReport, Hit, KnowledgeSearch, Source

__all__ = [
    "AddReport",
    "BadQuery",
    "FolderReport",
    "Hit",
    "KbError",
    "KnowledgeBase",
    "KnowledgeSearch",
    "Source",
    "UnknownSource",
    "UnreadableDocument",
]
