"""The MiniLM embedder: unit vectors, padding that does not leak into the mean, batching."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fayd.embedding import Embedder
from fayd.errors import ModelError

pytestmark = pytest.mark.models


def test_unit_vectors_and_meaning(embedder) -> None:
    v = embedder.embed(["I love my cat", "My kitten is adorable", "The stock market fell"])
    assert v.shape == (3, 384) and v.dtype == np.float32 and embedder.dim == 384
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > 0.5 > v[0] @ v[2] + 0.3  # the padding trap gives ~0.8 for every pair


def test_a_text_gets_the_same_vector_alone_or_beside_a_longer_one(embedder) -> None:
    alone = embedder.embed(["short one"])[0]
    batched = embedder.embed(["short one", "a much longer sentence " * 20], batch_size=8)[0]
    assert float(alone @ batched) > 0.9999


def test_empty_list_and_threads(embedder) -> None:
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        embedder.embed("not a list")
    out: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: out.append(embedder.embed(["same text"] * 5)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(out) == 4 and all(np.allclose(o, out[0], atol=1e-6) for o in out)


def test_missing_file_is_a_model_error(tmp_path) -> None:
    with pytest.raises(ModelError, match="not found"):
        Embedder(tmp_path / "none.onnx", tmp_path / "tokenizer.json")
