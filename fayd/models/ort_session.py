"""onnxruntime sessions as fayd runs them: on the CPU, with the threads the caller gives,
one inter-op thread, and no busy-waiting between runs (spinning threads took ~25 ms of CPU
after every Piper sentence, measured: CPU the LLM and the event loop needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(model: str | Path | bytes, threads: int | None = 1) -> Any:
    """An ``InferenceSession`` for ``model`` (a path or the model's bytes); ``threads`` None
    leaves the intra-op count to onnxruntime. Raises onnxruntime's own errors."""
    import onnxruntime as ort  # heavy: only when a model is actually built

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
