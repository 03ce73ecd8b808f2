"""What the knowledge base hands out, and the port the agent calls it through.

The agent (and ``fayd.kb.tools``) take :class:`KnowledgeSearch`, not
:class:`fayd.kb.knowledge.KnowledgeBase`: the daemon wires the real one, a test may wire a
table of its own, and the agent never imports the storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class Source:
    """One added document."""

    #: The file's name (what a citation says: "kettle-manual.pdf").
    name: str
    #: The absolute path it was added from (the identity: two folders may hold a "notes.txt").
    path: str
    sha256: str
    #: Seconds since the epoch of the last add that changed it.
    added_at: float
    chunks: int
    chars: int


@dataclass(frozen=True)
class Hit:
    """One chunk found for a query."""

    source: str
    path: str
    #: The chunk's number within its source, from 0.
    chunk: int
    text: str
    #: Reciprocal-rank fusion of the vector and the word ranking: higher is better; only
    #: comparable within one search.
    score: float
    #: MiniLM's cosine between the query and the chunk (comparable across searches: how
    #: related they are at all; near noise for Chinese, an English model's).
    cosine: float = 0.0
    #: Some word (or Chinese character pair) of the query is in the chunk.
    words: bool = False


@dataclass(frozen=True)
class AddReport:
    """What adding one file did."""

    source: str
    path: str
    #: "added" (new), "replaced" (changed since: its old chunks are gone), "unchanged"
    #: (same bytes and embedder as stored: nothing was done).
    status: Literal["added", "replaced", "unchanged"]
    chunks: int
    chars: int

    def line(self) -> str:
        chunks = f"{self.chunks} chunk{'' if self.chunks == 1 else 's'}"
        if self.status == "unchanged":
            return f"{self.source}: unchanged ({chunks}), nothing to do"
        return f"{self.source}: {self.status}, {chunks} ({self.chars:,} characters)"


@dataclass(frozen=True)
class FolderReport:
    """What adding a folder did: one report per document, and the files refused (path, why)."""

    reports: list[AddReport]
    refused: list[tuple[str, str]]


class KnowledgeSearch(Protocol):
    """The knowledge base as the agent's tools use it."""

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` chunks for ``query``, best first (raises BadQuery when empty)."""
        ...

    def sources(self) -> list[Source]:
        """Every document, by name."""
        ...
