"""Speech to text: Whisper (CTranslate2 format) run by faster-whisper on the CPU."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fayd.errors import ModelError
from fayd.models.native_heap import trim
from fayd.speech.zh_script import tidy_times, to_simplified

#: The languages "auto" chooses between: the household's (fayd understands en and zh only;
#: Whisper's own detection over ~100 languages would also pick Japanese or Cantonese).
AUTO_AMONG = ("en", "zh")


#: Whisper's longest output (tokens) for one window.
MAX_TOKENS = 224
#: Samples in Whisper's one 30 s window: a longer utterance goes through faster-whisper's
#: own segment loop.
MAX_ONE_WINDOW = 30 * 16000
#: ``window_s`` below 30: the encoder reads that much for an utterance that fits in it with
#: a second to spare. Half of Whisper's 30 s costs half the encoder's time (tiny.en on 2
#: cores: 247 against 512 ms an utterance), what semantic endpointing waits for at each
#: pause, but words were lost (benchmarks/asr_wer.py, espeak: WER 0.110 at 30 s through
#: the same path, 0.134 at 20 s, 0.144 at 15 s); under 10 s Whisper repeated itself
#: ("Good night. Good night. Good night"). 30 (speech.asr_window_s) unless set.
SHORTEST_WINDOW_S = 10
#: faster-whisper's defaults for "no speech in this window".
NO_SPEECH, LOW_LOGPROB = 0.6, -1.0


class AsrBackend(ABC):
    """What the ASR backends share: one utterance at a time (16 kHz float32 mono), under a
    lock, because one model already uses all its threads and concurrent calls would only
    contend. ``transcribe`` blocks: call it from a worker thread (``asyncio.to_thread``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def transcribe(self, samples: np.ndarray, language: str | None = None) -> str:
        """The text of one utterance, whitespace-stripped ("" for silence). ``language``:
        "en", "zh", "auto" (detect it among :data:`AUTO_AMONG`) or None (the engine's own)."""
        audio = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
        if audio.size == 0:
            return ""
        with self._lock:
            text = self._recognize(audio, language)
            trim()  # the utterance's buffers back to the system (fayd.models.native_heap)
        return text

    @abstractmethod
    def _recognize(self, audio: np.ndarray, language: str | None) -> str:
        """The stripped text of ``audio`` (float32, 1-D, not empty); the lock is held."""


class WhisperAsr(AsrBackend):
    """Transcribes one utterance at a time (16 kHz float32 mono, as :class:`SileroVad` cuts).

    ``language`` is the default for calls that name none ("auto": detect en or zh; None:
    Whisper's own detection). Chinese comes out in simplified characters (Whisper base often
    writes traditional ones: 記得 for 记得), as fayd's Chinese understanding expects.

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
        window_s: float = 30,
    ) -> None:
        if not SHORTEST_WINDOW_S <= window_s <= 30:
            raise ValueError(f"window_s must be {SHORTEST_WINDOW_S}-30 seconds, not {window_s}")
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
        self.window_s = window_s
        self.multilingual = bool(self._model.model.is_multilingual)
        super().__init__()

    def detect_language(self, samples: np.ndarray, among: Sequence[str] = AUTO_AMONG) -> str:
        """The most probable of ``among`` for this utterance (an English-only model: "en")."""
        audio = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
        if not self.multilingual or audio.size == 0:
            return "en"
        with self._lock:
            return self._encode(audio, among)[1]

    def _recognize(self, audio: np.ndarray, language: str | None) -> str:
        language = language or self.language
        if not self.multilingual:
            language = "en"  # tiny.en would log a warning for anything else
        short = self.window_s < 30 and audio.size <= (self.window_s - 1) * 16000
        if language == "auto" or short:
            among = AUTO_AMONG if language == "auto" else (language,)
            encoded, language = self._encode(audio, among, self.window_s if short else 30)
            if audio.size <= MAX_ONE_WINDOW:  # one window: decoded from the same encoding
                return self._decode(encoded, language)
        segments, info = self._model.transcribe(
            audio,
            language=language,
            beam_size=self.beam_size,
            without_timestamps=True,
            # The VAD already cut the utterance; each one stands alone, so earlier text
            # must not steer (or loop) the decoding of the next.
            vad_filter=False,
            condition_on_previous_text=False,
            # No initial_prompt ("以下是普通话的句子。"): measured on the Baker voice it did
            # give simplified characters, but dropped short replies ("晚安" → "") and was
            # sometimes echoed as the transcript; OpenCC's conversion has neither fault.
        )
        # ``segments`` is a lazy generator: decoding happens while it is consumed, so it
        # must be consumed here, while the caller holds the lock.
        text = "".join(segment.text for segment in segments).strip()
        return tidy_times(to_simplified(text)) if info.language == "zh" else text

    def _encode(
        self, audio: np.ndarray, among: Sequence[str], window_s: float = 30
    ) -> tuple[Any, str]:
        """The encoder's output for the first window and the most probable of ``among``
        by it (the one language asked, without detecting). Why not faster-whisper's
        transcribe(language=None): it encodes the window twice (once to detect, once to
        decode), which on 2 cores doubled the time to hear an utterance; here "auto" costs
        what a fixed language does."""
        from faster_whisper.audio import pad_or_trim

        whisper = self._model
        frames = int(window_s * 100)
        encoded = whisper.encode(pad_or_trim(whisper.feature_extractor(audio), frames))
        if len(among) == 1:
            return encoded, among[0]
        ranked = {token[2:-2]: p for token, p in whisper.model.detect_language(encoded)[0]}
        return encoded, max(among, key=lambda code: ranked.get(code, 0.0))

    def _decode(self, encoded: Any, language: str) -> str:
        """One window's text in ``language``: greedy, no timestamps, as the fixed
        languages run here."""
        from faster_whisper.tokenizer import Tokenizer

        whisper = self._model
        if self.multilingual:
            tokenizer = Tokenizer(whisper.hf_tokenizer, True, task="transcribe", language=language)
        else:  # tiny.en: no language or task tokens
            tokenizer = Tokenizer(whisper.hf_tokenizer, False)
        found = whisper.model.generate(
            encoded,
            [[*tokenizer.sot_sequence, tokenizer.no_timestamps]],
            beam_size=self.beam_size,
            max_length=MAX_TOKENS,
            suppress_blank=True,
            suppress_tokens=[-1],  # CTranslate2's default set: symbols, not speech
            return_scores=True,
            return_no_speech_prob=True,
        )
        # faster-whisper's rule for a window without speech (a cough, a door): likely no
        # speech and an unsure decoding → nothing heard, not "Thank you."
        if found[0].no_speech_prob > NO_SPEECH and found[0].scores[0] < LOW_LOGPROB:
            return ""
        text = tokenizer.decode(found[0].sequences_ids[0]).strip()
        return tidy_times(to_simplified(text)) if language == "zh" else text
