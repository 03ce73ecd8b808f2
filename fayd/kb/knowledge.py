"""The knowledge base: documents added, replaced, removed and searched.

Adding reads, splits and embeds a document *before* the write transaction, so a file that
cannot be read changes nothing, and the database is locked only for the inserts. The same
bytes with the same embedder are not embedded again: re-adding an unchanged file (or a
folder of them, at every daemon start) costs a hash per file.

The vectors are held in memory for search (one matrix product), and reloaded when the file
changed under them: ``PRAGMA data_version`` moves when another connection commits (``fayd kb
add`` while the daemon runs), and this object's own writes drop the cache themselves.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from fayd.embedding import EmbedderLike
from fayd.errors import StoreError
from fayd.kb import chunks as chunking
from fayd.kb import parse
from fayd.kb import search as ranking
from fayd.kb.errors import KbError, UnknownSource, UnreadableDocument
from fayd.kb.port import AddReport, FolderReport, Hit, Source
from fayd.kb.store import KbStore

log = logging.getLogger(__name__)

#: The file in the state folder (``<state_dir>/kb.sqlite``) the daemon and ``fayd kb`` share.
FILE_NAME = "kb.sqlite"


class KnowledgeBase:
    """``KnowledgeBase(path, embedder)``: the SQLite file at ``path`` (created if missing).
    ``embedder`` may be None for listing and removing (``fayd kb list`` loads no model)."""

    def __init__(self, path: str | Path, embedder: EmbedderLike | None) -> None:
        self.store = KbStore(path)
        self._embedder = embedder
        self._cache_lock = threading.Lock()
        #: ((data_version, own writes), ids, matrix): data_version does not move for this
        #: connection's own commits, so they are counted here.
        self._cache: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None
        self._own_writes = 0

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> EmbedderLike:
        if self._embedder is None:
            raise RuntimeError("this knowledge base was opened without an embedder")
        return self._embedder

    # --- writing --------------------------------------------------------------------------
    def add(self, path: str | Path) -> AddReport:
        """Add the document at ``path``, or replace its chunks if it changed; raises
        UnreadableDocument (naming the file) for one that cannot be read."""
        path = Path(os.path.abspath(Path(path).expanduser()))
        data = parse.read_bytes(path)
        digest = hashlib.sha256(data).hexdigest()
        with self.store.lock:
            known = self.store.source_at(str(path))
        if known is not None:
            _, old, embedders = known
            if old.sha256 == digest and embedders == {self.embedder.name}:
                return AddReport(old.name, old.path, "unchanged", old.chunks, old.chars)
        text = parse.document_text(path, data)
        texts = chunking.split(text)
        started = time.monotonic()
        vectors = self.embedder.embed(texts)
        log.info(
            "kb: %s: %d chunks embedded in %.1f s", path, len(texts), time.monotonic() - started
        )
        source = Source(path.name, str(path), digest, time.time(), len(texts), len(text))
        self.store.replace(source, texts, vectors, self.embedder.name)
        self._own_writes += 1
        status = "added" if known is None else "replaced"
        return AddReport(source.name, source.path, status, len(texts), len(text))

    def add_folder(self, folder: str | Path) -> FolderReport:
        """Add every document under ``folder`` (sub-folders too; hidden files and other
        kinds are skipped); one that cannot be read is listed, and the rest still added."""
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise UnreadableDocument(root, "is not a folder")
        reports: list[AddReport] = []
        refused: list[tuple[str, str]] = []
        for path in sorted(root.rglob("*")):
            hidden = any(part.startswith(".") for part in path.relative_to(root).parts)
            if hidden or not path.is_file() or path.suffix.lower() not in parse.SUFFIXES:
                continue
            try:
                reports.append(self.add(path))
            except KbError as exc:
                refused.append((str(path), str(exc)))
        return FolderReport(reports, refused)

    def remove(self, source: str) -> Source:
        """Remove a source named by its path or (when only one has it) its file name."""
        found = self._find(source)
        self.store.delete(found.path)
        self._own_writes += 1
        return found

    def _find(self, source: str) -> Source:
        known = self.store.sources()
        wanted = os.path.abspath(os.path.expanduser(source))
        by_path = [s for s in known if s.path == wanted]
        if by_path:
            return by_path[0]
        by_name = [s for s in known if s.name == source]
        if len(by_name) == 1:
            return by_name[0]
        if by_name:
            paths = ", ".join(s.path for s in by_name)
            raise UnknownSource(f"several sources are called {source!r} ({paths}): give the path")
        names = ", ".join(s.name for s in known) or "none yet"
        raise UnknownSource(f"no source {source!r} in the knowledge base (sources: {names})")

    # --- reading --------------------------------------------------------------------------
    def sources(self) -> list[Source]:
        return self.store.sources()

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` chunks for ``query`` (vector and word rankings fused), best first;
        raises BadQuery for an empty query or a k below 1."""
        text = ranking.clean_query(query)
        k = ranking.check_k(k)
        query_vector = self.embedder.embed([text])[0]
        try:
            ids, matrix = self._vectors()
            by_vector = ranking.vector_ranking(ids, matrix, query_vector)
            match = ranking.match_expression(text)
            by_words = self.store.lexical(match, ranking.DEPTH) if match else []
            weights = [ranking.vector_weight(text), 1.0]
            fused = ranking.fuse([by_vector, by_words], weights)[:k]
            rows = self.store.chunks([chunk_id for chunk_id, _ in fused])
        except sqlite3.Error as exc:
            raise StoreError(f"cannot search the knowledge base {self.store.path}: {exc}") from exc
        row_of = {int(chunk_id): n for n, chunk_id in enumerate(ids)}
        worded = set(by_words)
        return [
            Hit(
                *rows[i][:4],
                round(score, 6),
                round(float(matrix[row_of[i]] @ query_vector), 4) if i in row_of else 0.0,
                i in worded,
            )
            for i, score in fused
            if i in rows  # removed by another process since the vectors were read
        ]

    def _vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The cached (ids, matrix), reloaded if anyone committed since it was read."""
        with self._cache_lock:
            version = (self.store.data_version(), self._own_writes)
            cache = self._cache
            if cache is None or cache[0] != version:
                ids, matrix = self.store.vectors(self.embedder.name)
                cache = self._cache = (version, ids, matrix)
            return cache[1], cache[2]
