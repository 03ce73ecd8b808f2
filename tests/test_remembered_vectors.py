"""The router's example phrases are embedded once and kept (fayd.embedding.remembered): the
same vectors come back from the file, a user's questions are never written, and a damaged
file or another model's vectors are made again."""

from __future__ import annotations

import numpy as np

from fayd.embedding.remembered import RememberedVectors

PHRASES = ["what time is it", "turn the volume up", "remind me to call my son"]


class Counting:
    """The real embedder, counting the texts it was asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_the_second_start_embeds_nothing_and_gets_the_same_vectors(embedder, tmp_path) -> None:
    path = tmp_path / "cache" / "example-vectors.npz"
    first = RememberedVectors(Counting(embedder), path)
    made = first.embed(PHRASES)
    first.save()
    assert path.exists()

    counting = Counting(embedder)
    second = RememberedVectors(counting, path)
    again = second.embed(PHRASES)
    assert counting.texts == 0
    np.testing.assert_array_equal(made, again)
    np.testing.assert_allclose(again, embedder.embed(PHRASES), atol=1e-6)


def test_questions_after_the_start_are_embedded_but_never_kept(embedder, tmp_path) -> None:
    path = tmp_path / "v.npz"
    vectors = RememberedVectors(embedder, path)
    vectors.embed(PHRASES)
    vectors.save()
    question = vectors.embed(["my daughter's phone number is 555 0100"])
    assert question.shape == (1, embedder.dim)
    vectors.save()
    with np.load(path) as saved:
        assert sorted(saved["texts"].tolist()) == sorted(PHRASES)


def test_a_changed_list_drops_old_phrases(embedder, tmp_path) -> None:
    path = tmp_path / "v.npz"
    first = RememberedVectors(embedder, path)
    first.embed(PHRASES)
    first.save()
    second = RememberedVectors(embedder, path)
    second.embed([*PHRASES[:1], "good morning"])
    second.save()
    with np.load(path) as saved:
        assert sorted(saved["texts"].tolist()) == sorted([PHRASES[0], "good morning"])


def test_a_damaged_file_or_another_model_is_embedded_again(embedder, tmp_path, caplog) -> None:
    path = tmp_path / "v.npz"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    counting = Counting(embedder)
    vectors = RememberedVectors(counting, path)
    vectors.embed(PHRASES)
    assert counting.texts == len(PHRASES)
    assert "made again" in caplog.text
    vectors.save()
    other = Counting(embedder)
    other.name = "another/model.onnx"
    RememberedVectors(other, path).embed(PHRASES)
    assert other.texts == len(PHRASES)
