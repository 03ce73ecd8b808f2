"""``fayd models check --verify`` for a model of the user's own: it is loaded as the daemon
would load it, not only found. A default model has a pinned sha256 (fayd.models.check); one's
own has none, so the only proof that it is whole is that its runtime takes it.

A GGUF file is read in this process (its header and tensor table: fayd.models.gguf; loading
a large language model only to check it would take its whole size in memory). Every other
role is built in a child process by the very code the daemon runs
(fayd.service.engines.build_model): some runtimes end the process on a bad file (sherpa-onnx
calls exit(), TFLite segfaults), and only the child dies then.
"""

from __future__ import annotations

from pathlib import Path

from fayd.config import Config
from fayd.errors import ModelError
from fayd.models.gguf import check_gguf
from fayd.models.probe import probe_in_child

#: Seconds a child may take to load a model (a large Whisper from a cold SD card).
LOAD_TIMEOUT_S = 180.0

# argv: config file ("" = none), role, the model's path. The environment is inherited, so
# FAYD_* settings apply as they do to the daemon.
_BUILD = """
import sys
from fayd.config import load_config
from fayd.models import resolve
from fayd.service.engines import build_model
cfg = load_config(sys.argv[1] or None)
role, path = sys.argv[2], sys.argv[3]
try:
    build_model(cfg, role, resolve(role, path).files, own=True)
except Exception as exc:  # fayd's own errors say what is wrong; others need their type
    line = " ".join(str(exc).split())
    sys.exit(line if type(exc).__module__ == "fayd.errors" else f"{type(exc).__name__}: {line}")
"""


def verify_own(cfg: Config, role: str, path: str) -> str:
    """What was found (a short description) when ``path`` loads as ``role``'s model;
    ModelError naming the path and what is wrong otherwise."""
    if role == "llm":
        return check_gguf(Path(path).expanduser())
    if role == "vad":
        from fayd.speech.vad import validate_vad_file

        validate_vad_file(Path(path).expanduser())
        return "loads in sherpa-onnx"
    if role == "wake":
        from fayd.speech.wake import validate_wake_file

        validate_wake_file(Path(path).expanduser())
        return "loads in openWakeWord"
    probe_in_child(
        _BUILD,
        [str(cfg.source or ""), role, path],
        what=f"{role} model {path}",
        timeout=LOAD_TIMEOUT_S,
    )
    return "loads as fayd runs it"


def verified(cfg: Config, role: str, path: str) -> tuple[bool, str]:
    """(whole, detail) of the user's own model: ``verify_own`` without the exception."""
    try:
        return True, verify_own(cfg, role, path)
    except ModelError as exc:
        return False, " ".join(str(exc).split())
