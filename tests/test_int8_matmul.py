"""The int8 rewrite of the embedding model (fayd.embedding.int8_matmul): what it replaces, that
the products stay close to the float ones, the cache, and the fall-backs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from fayd.embedding import Embedder, int8_matmul
from fayd.errors import ModelError
from fayd.models import resolve


def _session(model: bytes | str) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def _chain_model(k: int, n: int, scale_shape: tuple[int, ...], seed: int = 0) -> bytes:
    """x [1, k] @ (Cast(int8 [k, n]) * scale): the weight layout of the shipped MiniLM."""
    rng = np.random.default_rng(seed)
    q = rng.integers(-127, 128, (k, n), dtype=np.int8)
    scale = (rng.random(scale_shape) * 0.02 + 0.001).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["wq"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wf", "scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, n])],
        [numpy_helper.from_array(q, "wq"), numpy_helper.from_array(scale, "scale")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def test_block_size_divides_k() -> None:
    assert [int8_matmul.block_size(k) for k in (384, 1536, 64, 48, 24, 7)] == [
        128,
        128,
        64,
        16,
        0,
        0,
    ]


def test_a_per_column_chain_becomes_one_matmulnbits_with_the_same_product() -> None:
    src = _chain_model(256, 24, (1, 24))
    out = int8_matmul.rewrite(src)
    assert out is not None
    graph = onnx.load_from_string(out).graph
    assert [n.op_type for n in graph.node] == ["MatMulNBits"]
    # The int8 weights and scales, re-laid out; the originals are gone.
    assert sorted(t.name for t in graph.initializer) == ["2_int8_b", "2_int8_scales"]
    x = np.random.default_rng(1).standard_normal((3, 256)).astype(np.float32)
    want = _session(src).run(None, {"x": x})[0]
    got = _session(out).run(None, {"x": x})[0]
    # The activations are quantised to 8 bits per block: close, not equal.
    err = np.abs(got - want).max() / np.abs(want).max()
    assert 0 < err < 0.02


def test_per_tensor_scales_and_float_models_are_left_alone(tmp_path) -> None:
    assert int8_matmul.rewrite(_chain_model(256, 24, ())) is None  # one scale for all
    plain = tmp_path / "plain.onnx"
    plain.write_bytes(_chain_model(20, 4, (1, 4)))  # K=20: no block size divides it
    source, rewritten = int8_matmul.prepare(plain, tmp_path / "cache")
    assert (source, rewritten) == (str(plain), False)
    assert list((tmp_path / "cache").glob("*.plain"))  # the check runs once per file


def test_the_rewrite_is_cached_and_remade_when_the_model_changes(tmp_path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(_chain_model(256, 24, (1, 24)))
    cache = tmp_path / "cache"
    first, rewritten = int8_matmul.prepare(model, cache)
    assert rewritten and first.startswith(str(cache)) and first.endswith(".int8mm.onnx")
    assert int8_matmul.prepare(model, cache) == (first, True)
    assert [p.suffix for p in cache.iterdir()] == [".onnx"]  # no temporary left behind
    x = np.ones((1, 256), np.float32)
    before = _session(first).run(None, {"x": x})[0]
    model.write_bytes(_chain_model(256, 24, (1, 24), seed=2))  # another model, same path
    second, _ = int8_matmul.prepare(model, cache)
    assert second != first
    assert [str(p) for p in cache.iterdir()] == [second]  # the stale rewrite is gone
    assert not np.allclose(before, _session(second).run(None, {"x": x})[0])


def test_an_unwritable_cache_rewrites_in_memory(tmp_path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(_chain_model(256, 24, (1, 24)))
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    source, rewritten = int8_matmul.prepare(model, blocker / "fayd")
    assert rewritten and isinstance(source, bytes)
    assert _session(source).run(None, {"x": np.ones((1, 256), np.float32)})[0].shape == (1, 24)


def test_a_damaged_cached_rewrite_is_made_again(tmp_path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(_chain_model(256, 24, (1, 24)))
    cache = tmp_path / "cache"
    path, _ = int8_matmul.prepare(model, cache)
    Path(path).write_bytes(b"half a file")  # e.g. a power cut while it was written
    session = int8_matmul.load(model, _session, cache)
    assert session.run(None, {"x": np.ones((1, 256), np.float32)})[0].shape == (1, 24)
    assert _session(path)  # the cached file is whole again


def test_a_corrupt_model_is_still_a_model_error(tmp_path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x08\x07not a protobuf at all" * 10)
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelError, match="cannot load embedding model"):
        Embedder(bad, tmp_path / "tokenizer.json")


@pytest.mark.models
def test_the_shipped_minilm_runs_its_weights_in_int8(embedder) -> None:
    files = resolve("embed").files
    src = files["model"].read_bytes()
    graph = onnx.load_from_string(int8_matmul.rewrite(src)).graph
    ops = [n.op_type for n in graph.node]
    assert ops.count("MatMulNBits") == 36  # q, k, v, output, two feed-forward per layer
    assert ops.count("MatMul") == 12  # attention: activations by activations, untouched
    weights = sum(t.raw_data.__len__() for t in graph.initializer)
    assert weights < 25 * 2**20  # int8 stays int8 (the float fold held 88 MB)

    assert embedder.name.endswith(int8_matmul.SUFFIX)
    plain = Embedder(files["model"], files["tokenizer"], int8_compute=False)
    assert not plain.name.endswith(int8_matmul.SUFFIX)
    texts = [
        "Grandma takes her heart pills at 8:00 with breakfast.",
        "what did Ann say about the garden",
        "奶奶每天早上八点吃降压药",
        "ok",
    ]
    cos = np.sum(embedder.embed(texts) * plain.embed(texts), axis=1)
    assert cos[:3].min() > 0.998 and cos.max() < 1.0  # close, and really a different product
    assert cos[3] > 0.99  # one token: nothing averages the quantisation out (measured 0.995)
