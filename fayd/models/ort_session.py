"""onnxruntime sessions as fayd runs them: on the CPU, with the threads the caller gives,
one inter-op thread, and no busy-waiting between runs (spinning threads took ~25 ms of CPU
after every Piper sentence, measured: CPU the LLM and the event loop needed).

A model whose runs need large tensors (a Piper voice: ~90 MB for a long sentence) is run
with ``shrink_arena``: onnxruntime's memory arena grows to a run's largest tensors and keeps
them for good; shrunk at the end of each run (and the C heap trimmed), it gives them back.
Over ten voice turns the daemon's peak RSS fell by ~100 MB (benchmarks/footprint.py), for
some more CPU per sentence (~15-30 %, measured on a loaded machine: the pages are touched
again). No arena at all kept as little but cost ~70 % more CPU per sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fayd.models.native_heap import trim

#: onnxruntime's run option: the CPU arena frees its unused regions when a run ends.
SHRINK_ENTRY = ("memory.enable_memory_arena_shrinkage", "cpu:0")


class ShrinkingSession:
    """An ``InferenceSession`` whose every ``run`` ends with its arena shrunk (callers that
    pass no run options of their own, such as piper's PiperVoice, get it too)."""

    def __init__(self, session: Any) -> None:
        import onnxruntime as ort

        self.session = session
        self.run_options = ort.RunOptions()
        self.run_options.add_run_config_entry(*SHRINK_ENTRY)

    def run(self, output_names: Sequence[str] | None, feeds: dict[str, Any], *_: Any) -> Any:
        result = self.session.run(output_names, feeds, self.run_options)
        # The arena's regions go back to malloc, which keeps those below its mmap threshold.
        trim()
        return result

    def __getattr__(self, name: str) -> Any:  # get_inputs, get_outputs, ...
        return getattr(self.session, name)


def cpu_session(
    model: str | Path | bytes, threads: int | None = 1, shrink_arena: bool = False
) -> Any:
    """An ``InferenceSession`` for ``model`` (a path or the model's bytes); ``threads`` None
    leaves the intra-op count to onnxruntime; ``shrink_arena``: a :class:`ShrinkingSession`
    (above). Raises onnxruntime's own errors."""
    import onnxruntime as ort  # heavy: only when a model is actually built

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return ShrinkingSession(session) if shrink_arena else session
