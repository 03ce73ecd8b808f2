"""What the rest of fayd needs from a speech engine, as Protocols: any backend with these
methods fits (Whisper or sherpa-onnx ASR, Piper or sherpa-onnx TTS, Silero VAD), and so
does a test's stand-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from fayd.speech.vad import SpeechSegment


class Asr(Protocol):
    """Speech to text, one utterance at a time (:class:`fayd.speech.asr.WhisperAsr`,
    :class:`fayd.speech.asr_sherpa.SherpaAsr`,
    :class:`fayd.speech.asr_languages.LanguageAsr`). Blocks: call it from a worker thread."""

    def transcribe(self, samples: np.ndarray, language: str | None = None) -> str:
        """The text of one utterance of 16 kHz float32 mono ("" for silence). ``language``:
        "en", "zh", "auto" (detect which of the two) or None (the engine's default); an
        engine with one language built in ignores it."""
        ...


class Tts(Protocol):
    """Text to speech (:class:`fayd.speech.tts.PiperTts`,
    :class:`fayd.speech.tts_sherpa.SherpaTts`). Blocks: call it from a worker thread."""

    #: Hz of the PCM16 that ``synthesize`` yields.
    sample_rate: int

    def synthesize(self, text: str) -> Iterator[bytes]:
        """PCM16 mono chunks (one per sentence) for ``text``; nothing for blank text."""
        ...


class Vad(Protocol):
    """Cuts one 16 kHz float32 audio stream into utterances
    (:class:`fayd.speech.vad.SileroVad`); one instance per stream."""

    def accept(self, samples: np.ndarray) -> list[SpeechSegment]:
        """Feed audio; the utterances it completed (usually none)."""
        ...

    def flush(self) -> list[SpeechSegment]:
        """End of stream: what is left, then start afresh."""
        ...

    def provisional(self, silence_ms: int = 250) -> SpeechSegment | None:
        """The utterance so far once its speaker has paused, offered once per pause."""
        ...

    def resumed(self) -> bool:
        """True once when speech comes again after an offered pause or a cut."""
        ...

    def cut(self, at: int) -> SpeechSegment | None:
        """End the utterance now at sample ``at`` (None: nothing to end, or speech came
        again since); what follows is a new utterance."""
        ...


@dataclass(frozen=True)
class Ending:
    """How a pause may end an utterance early (docs/endpointing.md): ``end()`` ends it
    where the pause began (its final utterance then arrives as usual). The speaker has
    been silent ``silent_ms``; ``usual_ms`` is the wait when unsure whether they are done,
    ``longest_ms`` the wait for a sentence left unfinished."""

    end: Callable[[], None]
    silent_ms: int
    usual_ms: int
    longest_ms: int


class WakeDetector(Protocol):
    """Spots a wake word in one audio stream (:class:`fayd.speech.wake.WakeWord`)."""

    #: The wake word's name ("hey_jarvis"): its phrase is removed from the transcript.
    name: str
    #: True when the last ``accept`` call heard the wake word.
    detected: bool

    def accept(self, samples: np.ndarray) -> float:
        """Feed 16 kHz float32 audio; the highest score among the frames it completed."""
        ...

    def close(self) -> None: ...


class OnsetDetector(Protocol):
    """Notices the user starting to speak over fayd (:class:`fayd.speech.vad.SpeechOnset`)."""

    def accept(self, samples: np.ndarray) -> bool:
        """Feed 16 kHz float32 audio; True once speech has started (until ``reset``)."""
        ...

    def reset(self) -> None: ...
