"""The knowledge base's own SQLite file: sources, chunks with their vectors, an FTS5 index.

Its own file, not fayd.db: documents are re-addable from their files, so the knowledge base
can be deleted, backed up or rebuilt without touching memory, and a large import never holds
the memory database's write lock.

WAL lets the daemon search while ``fayd kb add`` writes from another process; a writer waits
up to :data:`BUSY_SECONDS` for the other's transaction. ``synchronous=NORMAL``: in WAL mode a
power cut can lose the last commits but never corrupts the file, and a lost add is redone by
adding the file again.

Chunks' FTS rows hold the text with CJK runs written as bigrams (:func:`fayd.store.lexical.
index_text`), the memory index's approach: unicode61 alone would make a Chinese clause one
token, and the ``trigram`` tokenizer cannot match the two-character words most Chinese
words are (docs/memory.md measured it).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from fayd.errors import StoreError
from fayd.kb.port import Source
from fayd.store.lexical import index_text

BUSY_SECONDS = 30
SCHEMA = """
CREATE TABLE IF NOT EXISTS kb_sources (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    added_at REAL NOT NULL,
    chunk_count INTEGER NOT NULL,
    chars INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS kb_chunks (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES kb_sources(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB NOT NULL,
    embedder TEXT NOT NULL,
    UNIQUE (source_id, number)
);
CREATE VIRTUAL TABLE IF NOT EXISTS kb_fts USING fts5(
    text, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""
_SOURCE_COLUMNS = "name, path, sha256, added_at, chunk_count, chars"


class KbStore:
    """One connection, guarded by a lock (the daemon searches from worker threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.executescript(SCHEMA)  # IF NOT EXISTS: two processes may both run it
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the knowledge base {self.path}: {exc}") from exc
        self.lock = threading.RLock()

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it or none of it (a failure is a StoreError)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write the knowledge base {self.path}: {exc}") from exc
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot write the knowledge base {self.path}: {exc}") from exc
            raise

    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's ``PRAGMA data_version``)."""
        with self.lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def source_at(self, path: str) -> tuple[int, Source, set[str]] | None:
        """(id, source, the embedders of its chunks) of the source added from ``path``."""
        row = self._conn.execute(
            f"SELECT id, {_SOURCE_COLUMNS} FROM kb_sources WHERE path = ?", [path]
        ).fetchone()
        if row is None:
            return None
        embedders = {
            e
            for (e,) in self._conn.execute(
                "SELECT DISTINCT embedder FROM kb_chunks WHERE source_id = ?", [row[0]]
            )
        }
        return row[0], Source(*row[1:]), embedders

    def replace(self, source: Source, texts: list[str], vectors: np.ndarray, embedder: str) -> None:
        """Store ``source`` with these chunks, in place of whatever it had, in one transaction."""
        blobs = [np.ascontiguousarray(v, dtype=np.float32).tobytes() for v in vectors]
        with self.lock, self.writing() as db:
            self._delete(db, source.path)
            cur = db.execute(
                f"INSERT INTO kb_sources ({_SOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    source.name,
                    source.path,
                    source.sha256,
                    source.added_at,
                    len(texts),
                    source.chars,
                ],
            )
            source_id = cur.lastrowid
            for number, (text, blob) in enumerate(zip(texts, blobs, strict=True)):
                chunk_id = db.execute(
                    "INSERT INTO kb_chunks (source_id, number, text, embedding, embedder)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [source_id, number, text, blob, embedder],
                ).lastrowid
                db.execute(
                    "INSERT INTO kb_fts (rowid, text) VALUES (?, ?)", [chunk_id, index_text(text)]
                )

    def delete(self, path: str) -> None:
        with self.lock, self.writing() as db:
            self._delete(db, path)

    @staticmethod
    def _delete(db: sqlite3.Connection, path: str) -> None:
        db.execute(
            "DELETE FROM kb_fts WHERE rowid IN (SELECT c.id FROM kb_chunks c"
            " JOIN kb_sources s ON s.id = c.source_id WHERE s.path = ?)",
            [path],
        )
        db.execute("DELETE FROM kb_sources WHERE path = ?", [path])  # chunks: ON DELETE CASCADE

    def sources(self) -> list[Source]:
        with self.lock:
            rows = self._conn.execute(
                f"SELECT {_SOURCE_COLUMNS} FROM kb_sources ORDER BY name, path"
            ).fetchall()
        return [Source(*row) for row in rows]

    def vectors(self, embedder: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, their vectors as rows) of every chunk embedded by ``embedder``."""
        with self.lock:
            rows = self._conn.execute(
                "SELECT id, embedding FROM kb_chunks WHERE embedder = ? ORDER BY id", [embedder]
            ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        if not rows:
            return ids, np.zeros((0, 0), dtype=np.float32)
        return ids, np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])

    def lexical(self, match: str, limit: int) -> list[int]:
        """Chunk ids matching the FTS5 expression ``match``, best BM25 first."""
        with self.lock:
            rows = self._conn.execute(
                "SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY rank LIMIT ?",
                [match, limit],
            ).fetchall()
        return [r[0] for r in rows]

    def chunks(self, ids: list[int]) -> dict[int, tuple[str, str, int, str]]:
        """(source name, source path, number, text) of each chunk id that still exists."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        with self.lock:
            rows = self._conn.execute(
                f"SELECT c.id, s.name, s.path, c.number, c.text FROM kb_chunks c"
                f" JOIN kb_sources s ON s.id = c.source_id WHERE c.id IN ({marks})",
                ids,
            ).fetchall()
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
