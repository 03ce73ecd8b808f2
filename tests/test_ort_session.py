"""onnxruntime sessions as fayd opens them: a shrinking session gives the same results as a
plain one, with the arena-shrink run option on every run (also when its caller, like piper,
passes none); the Piper voice runs on one."""

from __future__ import annotations

import numpy as np
import pytest

from fayd.models.ort_session import SHRINK_ENTRY, ShrinkingSession, cpu_session


@pytest.fixture(scope="module")
def model() -> bytes:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["y"])], "square", [x], [y])
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 8
    return made.SerializeToString()


def test_shrinking_session_runs_like_a_plain_one(model: bytes) -> None:
    plain, shrinking = cpu_session(model), cpu_session(model, shrink_arena=True)
    assert not isinstance(plain, ShrinkingSession)
    assert isinstance(shrinking, ShrinkingSession)
    assert shrinking.run_options.get_run_config_entry(SHRINK_ENTRY[0]) == SHRINK_ENTRY[1]
    assert [i.name for i in shrinking.get_inputs()] == ["x"]  # the session's own methods
    feeds = {"x": np.arange(8, dtype=np.float32).reshape(2, 4)}
    expected = plain.run(None, feeds)[0]
    assert np.array_equal(shrinking.run(None, feeds)[0], expected)
    assert np.array_equal(expected, feeds["x"] ** 2)


def test_piper_voice_runs_on_a_shrinking_session() -> None:
    from fayd.models import check, resolve
    from fayd.speech.tts import PiperTts

    if not check("tts").ok:
        pytest.skip("the default Piper voice is not installed (fayd models install tts)")
    files = resolve("tts").files
    tts = PiperTts(files["model"], files.get("config"))
    assert isinstance(tts._voice.session, ShrinkingSession)
    assert len(b"".join(tts.synthesize("Ready."))) > 1000
