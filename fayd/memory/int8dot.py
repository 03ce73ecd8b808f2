"""``rows @ q`` for int8 ``rows`` [n, k] and an int8 ``q`` [k], exactly, in int32.

numpy has no fast int8 product (it loops in C without SIMD: ~4 ms at 100k x 96, slower than
the float32 product), and a float32 copy of the rows costs the memory traffic that the int8
rows were meant to save. onnxruntime's ``MatMulInteger`` runs it with the CPU's int8 dot
instructions on one thread. The rows are stored as uint8 = int8 + 128 (zero point 128):
unsigned by signed is the form those instructions take (x86 VNNI), and it ran in 0.84 ms at
100k x 96 right after a query embedding, against 1.8 ms for int8 by int8 and 4 ms for the
float32 product (whose 38 MB were no longer in cache).

The query must stay within ±QUERY_MAX: on x86 CPUs without VNNI (AVX2 only) onnxruntime's
kernel adds pairs of uint8 × int8 products in int16 with saturation (``vpmaddubsw``), so
2 × 255 × 127 overflows and the result was wrong by up to 51,061 (measured on such a CPU);
2 × 255 × 64 = 32,640 fits, and the product is exact on every CPU.
"""

from __future__ import annotations

import threading

import numpy as np

from fayd.models.ort_session import cpu_session

#: What the stored rows add to each int8 value.
ZERO = 128
#: The largest query value the product is exact for on every CPU (see above).
QUERY_MAX = 64
_sessions: dict[int, object] = {}
_lock = threading.Lock()


def _session(k: int):
    """One ``MatMulInteger`` graph per width ``k`` (a handful in a process: built once)."""
    with _lock:
        session = _sessions.get(k)
        if session is None:
            from onnx import TensorProto, helper, numpy_helper

            graph = helper.make_graph(
                [helper.make_node("MatMulInteger", ["rows", "q", "zero"], ["dot"])],
                "int8dot",
                [
                    helper.make_tensor_value_info("rows", TensorProto.UINT8, [None, k]),
                    helper.make_tensor_value_info("q", TensorProto.INT8, [k, 1]),
                ],
                [helper.make_tensor_value_info("dot", TensorProto.INT32, [None, 1])],
                [numpy_helper.from_array(np.array(ZERO, np.uint8), "zero")],
            )
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
            # One thread, as the float products (see index.py).
            session = cpu_session(model.SerializeToString(), threads=1)
            _sessions[k] = session
        return session


def to_rows(values: np.ndarray) -> np.ndarray:
    """int8-range values (already rounded, within ±127) in the stored form."""
    return (values + ZERO).astype(np.uint8)


def int8_dot(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """int32 [n]: ``rows`` (stored form, C-contiguous [n, k]) times ``q`` (int8 [k], within
    ±QUERY_MAX)."""
    if rows.shape[0] == 0:
        return np.zeros(0, np.int32)
    feeds = {"rows": rows, "q": np.ascontiguousarray(q, np.int8).reshape(-1, 1)}
    return _session(rows.shape[1]).run(None, feeds)[0].reshape(-1)
