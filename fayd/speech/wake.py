"""Wake word: openWakeWord's bundled models (pyopen-wakeword, TensorFlow Lite), streamed."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from fayd.errors import ModelError
from fayd.models.probe import probe_in_child
from fayd.models.user_files import BUILTIN_WAKE_WORDS
from fayd.speech.audio import float_to_pcm16

SAMPLE_RATE = 16000
#: The bundled models (pyopen-wakeword 1.1.0).
BUILTIN = BUILTIN_WAKE_WORDS
# pyopen-wakeword keeps 10 s of audio and breaks on a longer chunk: feed at most 1 s at once.
_PIECE = SAMPLE_RATE


# Loads a custom model and scores one second of silence, in a child process: TFLite
# segfaults (no exception) on a file that is not a valid model.
_PROBE = """
import sys
import numpy as np
from pyopen_wakeword import OpenWakeWord, OpenWakeWordFeatures
model, features = OpenWakeWord.from_model(sys.argv[1]), OpenWakeWordFeatures.from_builtin()
for f in features.process_streaming(np.zeros(16000, dtype=np.int16).tobytes()):
    list(model.process_streaming(f))
"""


def validate_wake_file(path: str | Path, timeout: float = 30.0) -> None:
    """Raise ModelError unless ``path`` loads and runs as an openWakeWord model."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"wake word model not found: {path}")
    with path.open("rb") as f:
        if f.read(8)[4:] != b"TFL3":  # the TFLite flatbuffer identifier
            raise ModelError(f"wake word model {path} is not a TensorFlow Lite file")
    probe_in_child(_PROBE, [str(path)], what=f"wake word model {path}", timeout=timeout)


class WakeWord:
    """Scores a stream of 16 kHz float32 audio for one wake word; one instance per device
    (it holds that microphone's feature history).

    The model scores every 80 ms of audio. ``accept`` returns the highest score of the
    audio it was given, and sets :attr:`detected` when that score reaches ``threshold``
    outside the refractory period: a wake word scores high for several frames in a row
    (~8 for "Hey Jarvis"), so after a detection further ones are ignored for
    ``refractory_s`` seconds *of audio* (counted in samples, so it is the same whether
    audio arrives in real time or faster). ``model_name`` is a bundled model, or
    ``model_path`` a custom openWakeWord ``.tflite`` model, checked in a child process
    first unless ``validate`` is off (TFLite segfaults on a bad file).

    Cost: ~5 ms of CPU per 80 ms frame here (~6 % of a core per listening device),
    so feed it only while a device streams audio.
    """

    def __init__(
        self,
        model_name: str = "hey_jarvis",
        threshold: float = 0.5,
        refractory_s: float = 2.0,
        model_path: str | Path | None = None,
        validate: bool = True,
    ) -> None:
        if not 0.0 < threshold < 1.0:
            raise ModelError(f"wake word threshold must be between 0 and 1, got {threshold}")
        if refractory_s < 0:
            raise ModelError(f"wake word refractory_s must be >= 0, got {refractory_s}")
        from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures

        try:
            if model_path is not None:
                path = Path(model_path)
                if validate:  # skip only for a file already checked (e.g. by sha256)
                    validate_wake_file(path)
                elif not path.is_file():
                    raise ModelError(f"wake word model not found: {path}")
                # Why the factories: OpenWakeWord's plain constructor needs the TFLite
                # library path, which only they find (the README's example fails).
                self._model = OpenWakeWord.from_model(path)
                self.name = path.stem
            else:
                if model_name not in BUILTIN:
                    raise ModelError(
                        f"unknown wake word {model_name!r}; bundled: {', '.join(BUILTIN)}"
                    )
                self._model = OpenWakeWord.from_builtin(Model(model_name))
                self.name = model_name
            self._features = OpenWakeWordFeatures.from_builtin()
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelError(f"cannot load wake word {model_path or model_name}: {exc}") from exc
        self.threshold = threshold
        self.refractory_samples = round(refractory_s * SAMPLE_RATE)
        #: True when the last ``accept`` call detected the wake word.
        self.detected = False
        #: The last ``accept`` call's highest score (0.0 before any full 80 ms frame).
        self.score = 0.0
        self._fed = 0  # samples since the last reset
        self._quiet_until = 0  # no detection before this sample count
        self._lock = threading.Lock()

    def accept(self, samples: np.ndarray) -> float:
        """Feed audio; the highest wake word score (0..1) among the frames it completed."""
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        best = 0.0
        with self._lock:
            for i in range(0, x.size, _PIECE):
                pcm = float_to_pcm16(x[i : i + _PIECE])  # the model takes int16 levels
                for features in self._features.process_streaming(pcm):
                    for score in self._model.process_streaming(features):
                        best = max(best, float(score))
            self._fed += x.size
            self.score = best
            self.detected = best >= self.threshold and self._fed >= self._quiet_until
            if self.detected:
                self._quiet_until = self._fed + self.refractory_samples
        return best

    def reset(self) -> None:
        """Forget the audio history and any refractory period (e.g. a new session)."""
        with self._lock:
            self._model.reset()
            self._features.reset()
            self._fed = self._quiet_until = 0
            self.detected = False
            self.score = 0.0

    def close(self) -> None:
        """Free the TFLite interpreters now rather than at garbage collection."""
        with self._lock:
            self._model.close()
            self._features.close()
