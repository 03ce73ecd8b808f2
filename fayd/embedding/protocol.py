"""What a consumer of sentence embeddings needs from an embedder (memory now; later an intent
router and a knowledge base), so it can take the MiniLM model or a test's stand-in."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class EmbedderLike(Protocol):
    #: Stored beside every vector: vectors of two models are never compared.
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (shape ``[len(texts), dim]``)."""
        ...
