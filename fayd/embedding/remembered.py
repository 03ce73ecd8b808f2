"""Vectors of fixed texts kept across starts: the router's example phrases (a few hundred)
took ~2.7 s of embedding at every start, the largest part of a restart after the models
(issue 14: a killed daemon back within 10 s). Keyed by the embedder's name, so another
model never gets the old vectors."""

from __future__ import annotations

import logging
import os
import zipfile
from pathlib import Path

import numpy as np

from fayd.embedding.protocol import EmbedderLike

log = logging.getLogger(__name__)


class RememberedVectors:
    """An ``EmbedderLike`` that serves the texts it has seen before from a file. It learns
    until ``save()``; after that it only looks up, so a user's questions are never kept."""

    def __init__(self, embedder: EmbedderLike, path: Path) -> None:
        self.inner = embedder
        self.name, self.dim = embedder.name, embedder.dim
        self.path = path
        self.learning = True
        self._known: dict[str, np.ndarray] = {}
        self._seen: set[str] = set()  # while learning: what is written (no stale phrases)
        self._new = 0
        self._load()

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        found = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        if self.learning:
            self._seen.update(texts)
            self._known.update(found)
            self._new += len(found)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._known.get(t, found.get(t)) for t in texts]).astype(np.float32)

    def save(self) -> None:
        """Write what was learnt (when anything was) and stop learning."""
        self.learning = False
        texts = [t for t in self._known if t in self._seen]
        if not self._new and len(texts) == len(self._known):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            with tmp.open("wb") as out:
                np.savez(
                    out,
                    name=np.array(self.name),
                    texts=np.array(texts),
                    vectors=np.stack([self._known[t] for t in texts]),
                )
            os.replace(tmp, self.path)
        except OSError as exc:  # a full disk: the next start embeds them again
            log.warning("could not keep the example vectors in %s: %s", self.path, exc)

    def _load(self) -> None:
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                if str(saved["name"]) != self.name:
                    return
                vectors = saved["vectors"]
                if vectors.ndim != 2 or vectors.shape[1] != self.dim:
                    return
                self._known = dict(zip(saved["texts"].tolist(), vectors, strict=True))
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            # damaged: embedded again, written anew
            log.warning("ignoring %s (%s): the example vectors are made again", self.path, exc)
