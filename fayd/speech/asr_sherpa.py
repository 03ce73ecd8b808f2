"""Speech to text with sherpa-onnx offline recognizers, for the models its users bring:
Whisper-ONNX, Paraformer and SenseVoice (Chinese included), and zipformer transducers.

No registry package ships such a model, so fayd has no default one: this backend runs a
folder the user downloaded from sherpa-onnx's releases (``sherpa-onnx-whisper-tiny.en``,
``sherpa-onnx-paraformer-zh-…``, ``sherpa-onnx-sense-voice-…``, ``sherpa-onnx-zipformer-…``).
Same interface as :class:`fayd.speech.asr.WhisperAsr`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from fayd.errors import ModelError
from fayd.models.probe import probe_in_child
from fayd.speech.asr import AsrBackend

SAMPLE_RATE = 16000
#: kind → the files it needs: name → glob pattern in the model folder.
KINDS: dict[str, dict[str, str]] = {
    "whisper": {"encoder": "*encoder*.onnx", "decoder": "*decoder*.onnx", "tokens": "*tokens.txt"},
    "paraformer": {"model": "*model*.onnx", "tokens": "*tokens.txt"},
    "sense_voice": {"model": "*model*.onnx", "tokens": "*tokens.txt"},
    "zipformer": {
        "encoder": "*encoder*.onnx",
        "decoder": "*decoder*.onnx",
        "joiner": "*joiner*.onnx",
        "tokens": "*tokens.txt",
    },
}

# Builds the recognizer and decodes half a second of silence, in a child process: sherpa-onnx
# calls exit() instead of raising on a graph it cannot use (missing metadata, wrong model
# kind), which would take the daemon down with it.
_PROBE = """
import json, sys
import numpy as np
from fayd.speech.asr_sherpa import _build, _decode
recognizer = _build(**json.loads(sys.argv[1]))
_decode(recognizer, np.zeros(8000, dtype=np.float32))
"""


def find_model_files(model_dir: str | Path, kind: str, prefer_int8: bool = True) -> dict[str, Path]:
    """The files of a sherpa-onnx model folder of ``kind``, by role (ModelError if any is
    missing). Release folders often hold both ``x.onnx`` and ``x.int8.onnx``: the int8 one
    is taken when ``prefer_int8`` (faster on a CPU, near-identical accuracy)."""
    if kind not in KINDS:
        raise ModelError(f"unknown sherpa-onnx ASR kind {kind!r} (known: {', '.join(KINDS)})")
    folder = Path(model_dir)
    if not folder.is_dir():
        raise ModelError(f"sherpa-onnx {kind} model folder not found: {folder}")
    found, missing = {}, []
    for role, pattern in KINDS[kind].items():
        candidates = sorted(p for p in folder.glob(pattern) if p.is_file())
        if role == "decoder":  # "*decoder*" would also match a "…-decoder-joiner…" oddity
            candidates = [p for p in candidates if "joiner" not in p.name]
        if not candidates:
            missing.append(pattern)
            continue
        int8 = [p for p in candidates if ".int8." in p.name]
        full = [p for p in candidates if ".int8." not in p.name]
        found[role] = ((int8 or full) if prefer_int8 else (full or int8))[0]
    if missing:
        raise ModelError(
            f"sherpa-onnx {kind} model folder {folder} is incomplete: no {', '.join(missing)}"
        )
    return found


class SherpaAsr(AsrBackend):
    """Transcribes one utterance at a time (16 kHz float32 mono, as :class:`SileroVad` cuts).

    ``kind`` says which recognizer the folder holds. ``language``: Whisper takes a code
    ("en", "zh"; None detects it), SenseVoice "zh", "en", "yue", "ja", "ko" (None: auto);
    Paraformer and zipformer models have one language built in and ignore it.
    ``validate`` first builds the model in a child process (its load time again), because
    sherpa-onnx exits the process on a file it cannot use; turn it off only for a folder
    already known good. ``transcribe`` blocks: call it from a worker thread. Calls are
    serialised, as in WhisperAsr (:class:`AsrBackend`).

    Tested here with Whisper tiny.en only (fayd's default weights converted to sherpa-onnx's
    Whisper ONNX layout by the tests); no Paraformer, SenseVoice or zipformer model can be
    obtained offline, so those kinds are built exactly as sherpa-onnx documents but have
    not recognised speech here.
    """

    def __init__(
        self,
        model_dir: str | Path,
        kind: str = "whisper",
        language: str | None = "en",
        threads: int = 2,
        prefer_int8: bool = True,
        validate: bool = True,
        probe_timeout_s: float = 120.0,
    ) -> None:
        files = find_model_files(model_dir, kind, prefer_int8)
        self.kind = kind
        self.language = language
        self.files = files
        options = {
            "kind": kind,
            "files": {k: str(v) for k, v in files.items()},
            "language": language,
            "threads": threads,
        }
        if validate:
            probe_in_child(
                _PROBE,
                [json.dumps(options)],
                what=f"sherpa-onnx {kind} model {Path(model_dir)}",
                timeout=probe_timeout_s,
            )
        try:
            self._recognizer = _build(**options)
        except (RuntimeError, ValueError, AssertionError) as exc:
            raise ModelError(f"cannot load sherpa-onnx {kind} model {model_dir}: {exc}") from exc
        super().__init__()

    def _recognize(self, audio: np.ndarray, language: str | None) -> str:
        # A recognizer's language is fixed when it is built (sherpa-onnx takes it then, not
        # per stream): a per-call ``language`` is ignored; the constructor's one applies.
        return _decode(self._recognizer, audio)


def _build(kind: str, files: dict[str, str], language: str | None, threads: int) -> Any:
    import sherpa_onnx  # heavy: only when a recognizer is actually built

    make = sherpa_onnx.OfflineRecognizer
    if kind == "whisper":
        return make.from_whisper(
            encoder=files["encoder"],
            decoder=files["decoder"],
            tokens=files["tokens"],
            language=language or "",  # "" = detect the language
            task="transcribe",
            num_threads=threads,
        )
    if kind == "paraformer":
        return make.from_paraformer(
            paraformer=files["model"], tokens=files["tokens"], num_threads=threads
        )
    if kind == "sense_voice":
        return make.from_sense_voice(
            model=files["model"],
            tokens=files["tokens"],
            num_threads=threads,
            language=language or "auto",
            use_itn=True,  # "twenty five" → "25", with punctuation: reads better in a reply
        )
    if kind == "zipformer":
        return make.from_transducer(
            encoder=files["encoder"],
            decoder=files["decoder"],
            joiner=files["joiner"],
            tokens=files["tokens"],
            num_threads=threads,
        )
    raise ModelError(f"unknown sherpa-onnx ASR kind {kind!r}")


def _decode(recognizer: Any, audio: np.ndarray) -> str:
    stream = recognizer.create_stream()
    stream.accept_waveform(SAMPLE_RATE, audio)
    recognizer.decode_stream(stream)
    return str(stream.result.text).strip()
