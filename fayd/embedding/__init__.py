"""Sentence embeddings: the MiniLM embedder (int8 products) and what its users rely on."""

from fayd.embedding.embedder import Embedder
from fayd.embedding.protocol import EmbedderLike

__all__ = ["Embedder", "EmbedderLike"]
