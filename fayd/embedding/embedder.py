"""Sentence embeddings: a MiniLM ONNX model (int8) run by onnxruntime.

The vector of a text is the mean of its token vectors over the attention mask, L2-normalised,
so a dot product is the cosine. The shipped ``tokenizer.json`` pads every input to 128 tokens:
padding is reset here (pad to the longest in the batch) or the mean would include padding.
An int8 model's products run in int8 (:mod:`fayd.embedding.int8_matmul`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np

from fayd.embedding import int8_matmul
from fayd.errors import ModelError
from fayd.models.ort_session import cpu_session

log = logging.getLogger(__name__)

#: Longer inputs are cut: MiniLM was trained on 256 word pieces at most.
MAX_TOKENS = 256


class Embedder:
    """``embed(texts) -> float32 [n, dim]``, unit rows. Thread-safe: one lock guards the
    tokenizer (its padding/truncation state is mutable) and the session run."""

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        threads: int = 1,
        int8_compute: bool = True,
    ) -> None:
        model_path, tokenizer_path = Path(model_path), Path(tokenizer_path)
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise ModelError(f"embedding model file not found: {path}")
        from tokenizers import Tokenizer

        self._session = None
        if int8_compute:
            try:
                self._session = int8_matmul.load(
                    model_path, lambda source: cpu_session(source, threads)
                )
            except Exception as exc:  # a model onnx cannot parse, an onnxruntime without
                # 8-bit MatMulNBits: the original file then says what is wrong, or works
                log.warning("embedding model %s runs without int8 products: %s", model_path, exc)
        rewritten = self._session is not None
        try:
            self._tok = Tokenizer.from_file(str(tokenizer_path))
            if self._session is None:
                self._session = cpu_session(model_path, threads)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(f"cannot load embedding model {model_path}: {exc}") from exc
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")  # longest in batch, not 128
        self._tok.enable_truncation(MAX_TOKENS)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()
        self.path = model_path
        #: Recorded beside every stored vector: a model change must not mix vectors.
        self.name = f"{model_path.parent.name}/{model_path.name}"
        if rewritten:  # its vectors differ a little from the float products': its own name
            self.name += int8_matmul.SUFFIX
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length vectors, one row per text (empty list → shape [0, dim])."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a str")
        starts = range(0, len(texts), batch_size)
        out = [self._embed_batch(texts[i : i + batch_size]) for i in starts]
        if not out:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        return np.concatenate(out).astype(np.float32, copy=False)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            # One text (a search query): encode() keeps the GIL for its ~15 us. encode_batch
            # releases it, and getting it back behind a busy Python thread (the store's,
            # running the BM25 query meanwhile) took up to the 5 ms switch interval.
            if len(texts) == 1:
                encodings = [self._tok.encode(texts[0])]
            else:
                encodings = self._tok.encode_batch(list(texts))
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]  # [B, T, dim]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
