"""Speech to text: Whisper (CTranslate2 format) run by faster-whisper on the CPU."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from fayd.errors import ModelError


class AsrBackend(ABC):
    """What the ASR backends share: one utterance at a time (16 kHz float32 mono), under a
    lock, because one model already uses all its threads and concurrent calls would only
    contend. ``transcribe`` blocks: call it from a worker thread (``asyncio.to_thread``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def transcribe(self, samples: np.ndarray) -> str:
        """The text of one utterance, whitespace-stripped ("" for silence)."""
        audio = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
        if audio.size == 0:
            return ""
        with self._lock:
            return self._recognize(audio)

    @abstractmethod
    def _recognize(self, audio: np.ndarray) -> str:
        """The stripped text of ``audio`` (float32, 1-D, not empty); the lock is held."""


class WhisperAsr(AsrBackend):
    """Transcribes one utterance at a time (16 kHz float32 mono, as :class:`SileroVad` cuts).

    The model loads once here (~1 s); ``transcribe`` blocks (~0.3 s per utterance on 2
    cores whatever its length up to 30 s: Whisper pads every input to 30 s), so call it from
    a worker thread (``asyncio.to_thread``). Calls are serialised (:class:`AsrBackend`).
    """

    def __init__(
        self,
        model_dir: str | Path,
        language: str | None = "en",
        threads: int = 2,
        compute_type: str = "int8",
        beam_size: int = 1,
    ) -> None:
        path = Path(model_dir)
        if not (path / "model.bin").is_file():
            raise ModelError(f"not a CTranslate2 Whisper model directory: {path}")
        from faster_whisper import WhisperModel  # heavy: only when ASR is actually built

        try:
            self._model = WhisperModel(
                str(path), device="cpu", compute_type=compute_type, cpu_threads=threads
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise ModelError(f"cannot load Whisper model {path}: {exc}") from exc
        self.language = language
        self.beam_size = beam_size
        super().__init__()

    def _recognize(self, audio: np.ndarray) -> str:
        segments, _info = self._model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            without_timestamps=True,
            # The VAD already cut the utterance; each one stands alone, so earlier text
            # must not steer (or loop) the decoding of the next.
            vad_filter=False,
            condition_on_previous_text=False,
        )
        # ``segments`` is a lazy generator: decoding happens while it is consumed, so it
        # must be consumed here, while the caller holds the lock.
        return "".join(segment.text for segment in segments).strip()
