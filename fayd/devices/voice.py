"""A device's microphone: uplink audio frames → VAD → utterances (SpeechSegment: 16 kHz
float32 samples), final ones and, after a short pause, provisional ones."""

from __future__ import annotations

import logging

import numpy as np

from fayd.protocol import AudioChunk
from fayd.speech import SpeechSegment, Vad
from fayd.speech.audio import pcm16_to_float, resample

log = logging.getLogger(__name__)

ASR_RATE = 16000


class VoiceInput:
    """Feeds one device's audio to its own VAD (VAD state is per stream of audio)."""

    def __init__(self, device: str, vad: Vad) -> None:
        self.device = device
        self.vad = vad
        self.stream: int | None = None
        self.next_seq = 0
        #: Frames that arrived, and frames missing by their sequence numbers.
        self.received = 0
        self.lost = 0

    def accept(self, chunk: AudioChunk, samples: np.ndarray | None = None) -> list[SpeechSegment]:
        """The utterances this frame completes (usually none). ``samples``: the frame
        already converted by :meth:`samples_16k`, if the caller has it."""
        self.received += 1
        if chunk.start or chunk.stream != self.stream:
            self.stream, self.next_seq = chunk.stream, chunk.seq
        if chunk.seq != self.next_seq:
            # Frames lost on the way (MQTT QoS 0): keep going, the VAD copes with a gap.
            self.lost += max(0, chunk.seq - self.next_seq)
            log.debug("%s: audio seq %d, expected %d", self.device, chunk.seq, self.next_seq)
        self.next_seq = chunk.seq + 1
        segments = []
        if chunk.pcm:
            segments = self.vad.accept(samples if samples is not None else self.samples_16k(chunk))
        if chunk.end:
            segments += self.vad.flush()
            self.stream = None
        return segments

    def provisional(self, silence_ms: int = 250) -> SpeechSegment | None:
        """The utterance so far when the speaker has paused (see SileroVad.provisional)."""
        return self.vad.provisional(silence_ms)

    def resumed(self) -> bool:
        """Speech again after a pause (see SileroVad.resumed)."""
        return self.vad.resumed()

    def cut(self, at: int) -> SpeechSegment | None:
        """End the utterance at ``at`` now (see SileroVad.cut)."""
        return self.vad.cut(at)

    def counters(self) -> dict[str, int]:
        return {"received": self.received, "lost": self.lost}

    @staticmethod
    def samples_16k(chunk: AudioChunk) -> np.ndarray:
        samples = pcm16_to_float(chunk.pcm)
        return samples if chunk.rate == ASR_RATE else resample(samples, chunk.rate, ASR_RATE)
