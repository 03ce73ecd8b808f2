"""What the knowledge base refuses, as fayd errors: the CLI prints each as one clear line, and
the agent's tool call reports it instead of taking the turn down. Each is also a
``ValueError`` (bad input, not a fault of fayd), as :class:`fayd.memory.BadInput` is."""

from __future__ import annotations

from pathlib import Path

from fayd.errors import FaydError


class KbError(FaydError, ValueError):
    """Input the knowledge base refused before anything was written."""


class UnreadableDocument(KbError):
    """A file that cannot be read as a document: the message names the file and why."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


class BadQuery(KbError):
    """A search that cannot be run (an empty query, a k below 1)."""


class UnknownSource(KbError):
    """``remove`` was given a name or path that matches no source, or several."""
