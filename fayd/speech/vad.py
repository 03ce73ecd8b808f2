"""Voice activity detection: Silero VAD run by sherpa-onnx, fed fixed 512-sample windows."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fayd.errors import ModelError
from fayd.models.probe import probe_in_child

#: Silero v5 takes exactly 512 samples per step at 16 kHz (32 ms).
WINDOW = 512

# Loads the model and runs one window, in a child process: sherpa-onnx calls exit() on a
# silero export it does not support (fp16, op18 "ifless", faster-whisper's copy) instead of
# raising, which would take the whole daemon (or pytest) down with it.
_PROBE = """
import sys
import numpy as np
import sherpa_onnx
config = sherpa_onnx.VadModelConfig()
config.silero_vad.model = sys.argv[1]
config.sample_rate = 16000
if not config.validate():
    sys.exit("sherpa-onnx rejected the VAD config")
vad = sherpa_onnx.VoiceActivityDetector(config, buffer_size_in_seconds=2)
vad.accept_waveform(np.zeros(512, dtype=np.float32))
"""


def validate_vad_file(
    path: str | Path, expected_sha256: str | None = None, timeout: float = 30.0
) -> None:
    """Raise ModelError unless sherpa-onnx can load ``path`` as a Silero VAD.

    Call it before :class:`SileroVad` on any file that is not the manifest's pinned one (a
    user's own model). With ``expected_sha256`` the file's digest is compared first, which
    is all the pinned default needs.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"VAD model not found: {path}")
    if expected_sha256 is not None:
        from fayd.models.check import sha256_file

        digest = sha256_file(path)
        if digest != expected_sha256:
            raise ModelError(f"VAD model {path} has sha256 {digest}, expected {expected_sha256}")
    probe_in_child(
        _PROBE, [str(path)], what=f"VAD model {path}", timeout=timeout, by=" by sherpa-onnx"
    )


@dataclass(frozen=True)
class SpeechSegment:
    """One utterance: float32 samples starting ``start_sample`` samples into the stream."""

    start_sample: int
    samples: np.ndarray
    sample_rate: int = 16000
    #: Where the detector saw speech begin, and where this audio's speech ends (absolute
    #: sample indexes, pre-roll not counted): a provisional utterance matches the final
    #: one when both start alike and the final one ends no later.
    vad_start: int = -1
    cut: int = -1

    @property
    def duration_s(self) -> float:
        return self.samples.size / self.sample_rate


#: Samples of the previous window Silero v5 reads along with each new one.
CONTEXT = 64


class SileroVad:
    """Cuts a 16 kHz float32 stream into speech segments.

    ``min_silence_ms`` (default 700) is how long a pause must last before an utterance is
    considered finished. sherpa-onnx's own default (500 ms) cuts slow speakers mid-sentence
    when they pause to think ("turn on the … kitchen light"); much longer makes every reply
    feel late, since the pause is pure added latency. 700 ms is the usual compromise of
    voice assistants; raise it for hesitant speakers.

    ``min_speech_ms`` drops clicks and coughs shorter than that. ``max_speech_s`` splits a
    monologue, softly: past it sherpa-onnx ends the segment at the next dip in the voice, so
    segments can run longer (measured: 4.8 s with a 2 s limit). Whisper reads 30 s windows:
    keep it well below 30.

    ``pre_roll_ms`` (default 300) of audio from before the detected start is prepended to
    each segment: Silero's probability rises late on soft onsets ("Please…", "Hey…"), and
    without it Whisper loses the first word (measured: espeak's "Please turn on…" came out
    as "turn on…"). Leading quiet costs Whisper nothing.

    Not re-entrant: one audio stream per instance. A lock guards the calls anyway, so a
    ``reset()`` from a control thread is safe.
    """

    def __init__(
        self,
        model_path: str | Path,
        sample_rate: int = 16000,
        threshold: float = 0.5,
        min_silence_ms: int = 700,
        min_speech_ms: int = 250,
        max_speech_s: float = 20.0,
        pre_roll_ms: int = 300,
        threads: int = 1,
    ) -> None:
        if sample_rate != 16000:
            # Silero also has an 8 kHz mode, but its window is 256; fayd resamples to 16 kHz.
            raise ValueError(f"SileroVad runs at 16000 Hz, not {sample_rate}")
        path = Path(model_path)
        if not path.is_file():
            raise ModelError(f"VAD model not found: {path}")
        import sherpa_onnx  # heavy: only when a VAD is actually built

        config = sherpa_onnx.VadModelConfig()
        config.silero_vad.model = str(path)
        config.silero_vad.threshold = threshold
        config.silero_vad.min_silence_duration = min_silence_ms / 1000
        config.silero_vad.min_speech_duration = min_speech_ms / 1000
        config.silero_vad.max_speech_duration = max_speech_s
        config.silero_vad.window_size = WINDOW
        config.sample_rate = sample_rate
        config.num_threads = threads
        if not config.validate():
            raise ModelError(f"sherpa-onnx rejected the VAD config for {path}")
        # The ring buffer must hold the longest segment plus the silence that ends it.
        buffer_s = max_speech_s + min_silence_ms / 1000 + 5
        try:
            self._vad = sherpa_onnx.VoiceActivityDetector(config, buffer_size_in_seconds=buffer_s)
        except RuntimeError as exc:  # damaged files raise; unsupported ones exit: see above
            raise ModelError(f"cannot load VAD model {path}: {exc}") from exc
        self.sample_rate = sample_rate
        self._pre_roll = sample_rate * pre_roll_ms // 1000
        # The pre-roll is read when a segment ends, up to max_speech + silence after its start.
        self._history = _Ring(int(sample_rate * (buffer_s + 1)) + self._pre_roll)
        self._pending = np.zeros(0, dtype=np.float32)
        self._last_end = 0  # where the previous segment ended: pre-roll never reaches back past it
        self._lock = threading.Lock()
        # A second, quick-to-decide copy of the model tells where speech last was, so an
        # utterance can be transcribed provisionally before the full silence has passed.
        probe = sherpa_onnx.VadModelConfig()
        probe.silero_vad.model = str(path)
        probe.silero_vad.threshold = threshold
        probe.silero_vad.min_speech_duration = 0.01
        probe.silero_vad.min_silence_duration = 0.1
        probe.silero_vad.window_size = WINDOW
        probe.sample_rate = sample_rate
        probe.num_threads = threads
        self._probe = sherpa_onnx.VadModel.create(probe)
        self._probe_context = np.zeros(CONTEXT, dtype=np.float32)
        self._fed = 0  # samples given to the detector since the last reset
        self._last_speech = 0  # end of the last window the probe heard speech in
        self._offered = 0  # the cut of the last provisional utterance handed out
        # The detector counts samples from its last reset; a cut (see cut()) resets it
        # mid-stream, so its positions are moved by where that happened.
        self._base = 0
        self._paused_at = 0  # the last pause offered or cut at, until speech resumes

    def accept(self, samples: np.ndarray) -> list[SpeechSegment]:
        """Feed audio; return the segments completed by it (usually none)."""
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            if self._pending.size:
                x = np.concatenate([self._pending, x])
            usable = x.size - x.size % WINDOW
            for i in range(0, usable, WINDOW):
                self._feed_window(x[i : i + WINDOW])
            self._history.write(x[:usable])
            self._pending = x[usable:].copy()
            return self._drain()

    def flush(self) -> list[SpeechSegment]:
        """End of stream: finish any ongoing utterance, return what is left, and reset."""
        with self._lock:
            if self._pending.size:
                tail = np.zeros(WINDOW, dtype=np.float32)  # pad the last partial window
                tail[: self._pending.size] = self._pending
                self._feed_window(tail)
                self._history.write(tail)
            self._vad.flush()
            # The stream's end cuts the last utterance wherever it was: its silent tail is
            # dropped, so it matches the provisional one transcribed at the pause.
            segments = [self._without_tail(s) for s in self._drain()]
            self._reset()
            return segments

    def reset(self) -> None:
        """Forget all state (e.g. after the microphone was muted). Sample counts restart."""
        with self._lock:
            self._reset()

    @property
    def speaking(self) -> bool:
        """True while an utterance is in progress (started, not yet ended by silence)."""
        with self._lock:
            return bool(self._vad.is_speech_detected())

    def provisional(self, silence_ms: int = 250) -> SpeechSegment | None:
        """The utterance so far, once ``silence_ms`` of silence followed its speech but
        before ``min_silence_ms`` ends it: transcribing it now hides ASR inside that wait.
        Offered once per pause; None otherwise."""
        with self._lock:
            if not self._vad.is_speech_detected() or self._last_speech <= self._offered:
                return None
            if self._fed - self._last_speech < self.sample_rate * silence_ms // 1000:
                return None
            start = int(self._vad.current_segment.start) + self._base
            if start < self._base or start >= self._last_speech:
                return None
            self._offered = self._paused_at = self._last_speech
            lead = self._history.read(max(self._last_end, start - self._pre_roll), start)
            body = self._history.read(start, self._last_speech)
            return SpeechSegment(
                start_sample=start - lead.size,
                samples=np.concatenate([lead, body]),
                sample_rate=self.sample_rate,
                vad_start=start,
                cut=self._last_speech,
            )

    def resumed(self) -> bool:
        """True once when speech comes again after a pause offered by :meth:`provisional`
        (or a :meth:`cut`): the speaker was not done."""
        with self._lock:
            if self._paused_at and self._last_speech > self._paused_at:
                self._paused_at = 0
                return True
            return False

    def cut(self, at: int) -> SpeechSegment | None:
        """End the utterance in progress at ``at`` (a provisional utterance's ``cut``) without
        waiting out ``min_silence_ms``: someone decided the speaker is done. None when
        there is nothing to end or speech came again after ``at`` (the decision is stale).
        Speech that follows starts a new utterance."""
        with self._lock:
            if not self._vad.is_speech_detected() or self._last_speech > at:
                return None
            start = int(self._vad.current_segment.start) + self._base
            if not self._base <= start < at:
                return None
            lead = self._history.read(max(self._last_end, start - self._pre_roll), start)
            body = self._history.read(start, at)
            self._vad.reset()  # its count restarts with the next window, at _fed
            self._base = self._fed
            self._last_end = at
            self._paused_at = at
            return SpeechSegment(
                start_sample=start - lead.size,
                samples=np.concatenate([lead, body]),
                sample_rate=self.sample_rate,
                vad_start=start,
                cut=at,
            )

    def _feed_window(self, window: np.ndarray) -> None:
        self._vad.accept_waveform(window)
        # Silero v5 reads each window with the 64 samples before it (576 in all).
        framed = np.concatenate([self._probe_context, window])
        self._probe_context = framed[-CONTEXT:]
        self._fed += window.size
        if self._probe.is_speech(framed):
            self._last_speech = self._fed

    def _reset(self) -> None:
        self._vad.reset()  # sherpa-onnx restarts its sample count too
        self._probe.reset()
        self._probe_context = np.zeros(CONTEXT, dtype=np.float32)
        self._fed = self._last_speech = self._offered = self._base = self._paused_at = 0
        self._history.clear()
        self._pending = np.zeros(0, dtype=np.float32)
        self._last_end = 0

    def _without_tail(self, segment: SpeechSegment) -> SpeechSegment:
        end = self._last_speech
        if not segment.vad_start < end < segment.cut:
            return segment
        keep = segment.samples.size - (segment.cut - end)
        return dataclasses.replace(segment, samples=segment.samples[:keep], cut=end)

    def _drain(self) -> list[SpeechSegment]:
        out = []
        while not self._vad.empty():
            front = self._vad.front  # a reference into the detector: copy before pop()
            start = int(front.start) + self._base
            samples = np.array(front.samples, dtype=np.float32)
            self._vad.pop()
            # (max_speech_s splits a monologue into back-to-back segments: no overlap then.)
            lead = self._history.read(max(self._last_end, start - self._pre_roll), start)
            self._last_end = start + samples.size
            out.append(
                SpeechSegment(
                    start_sample=start - lead.size,
                    samples=np.concatenate([lead, samples]) if lead.size else samples,
                    sample_rate=self.sample_rate,
                    vad_start=start,
                    cut=start + samples.size,
                )
            )
        return out


class _Ring:
    """The last ``size`` samples of a stream, addressed by absolute sample index."""

    def __init__(self, size: int) -> None:
        self._buf = np.zeros(size, dtype=np.float32)
        self._total = 0  # samples written since the last clear()

    def clear(self) -> None:
        self._total = 0

    def write(self, x: np.ndarray) -> None:
        size = self._buf.size
        if x.size >= size:
            self._total += x.size - size  # the part that would be overwritten still counts
            x = x[-size:]
        pos = self._total % size
        first = min(x.size, size - pos)
        self._buf[pos : pos + first] = x[:first]
        self._buf[: x.size - first] = x[first:]
        self._total += x.size

    def read(self, start: int, end: int) -> np.ndarray:
        """Samples [start, end) of the stream, clipped to what is still held."""
        start = max(start, self._total - self._buf.size, 0)
        end = min(end, self._total)
        if end <= start:
            return np.zeros(0, dtype=np.float32)
        idx = np.arange(start, end) % self._buf.size
        return self._buf[idx]


class SpeechOnset:
    """A fast speech-onset detector for barge-in: Silero's per-window decision at a higher
    threshold, latched after ``windows`` consecutive speech windows (32 ms each).

    The segmenting VAD above only reports speech after ``min_speech_ms`` (~370 ms measured
    with 250 ms); an interruption must stop playback within ~200 ms of the user's first
    word (measured here: 150-180 ms after the first loud sample of Piper's "Stop, …").
    Silero ignores loudness, so it cannot tell fayd's own voice echoing from the speaker
    from the user's: devices that play and listen at once need echo cancellation (or the
    wake word) for barge-in, which the device hub decides.
    """

    def __init__(self, model_path: str | Path, threshold: float = 0.6, windows: int = 2) -> None:
        import sherpa_onnx

        config = sherpa_onnx.VadModelConfig()
        config.silero_vad.model = str(model_path)
        config.silero_vad.threshold = threshold
        # Counting windows is done here; sherpa-onnx's own minimum would add its delay.
        config.silero_vad.min_speech_duration = 0.01
        config.silero_vad.min_silence_duration = 0.1
        config.silero_vad.window_size = WINDOW
        config.sample_rate = 16000
        config.num_threads = 1
        try:
            self._model = sherpa_onnx.VadModel.create(config)
        except RuntimeError as exc:
            raise ModelError(f"cannot load VAD model {model_path}: {exc}") from exc
        self.windows = windows
        self.reset()

    def accept(self, samples: np.ndarray) -> bool:
        """Feed 16 kHz audio; True once speech has started (latched until reset())."""
        x = np.concatenate([self._pending, np.asarray(samples, dtype=np.float32).reshape(-1)])
        usable = x.size - x.size % WINDOW
        for i in range(0, usable, WINDOW):
            if self.detected:
                break
            # Silero v5 reads each window with the 64 samples before it (576 in all).
            window = np.concatenate([self._context, x[i : i + WINDOW]])
            self._context = window[-CONTEXT:]
            self._run = self._run + 1 if self._model.is_speech(window) else 0
            self.detected = self._run >= self.windows
        self._pending = x[usable:].copy()
        return self.detected

    def reset(self) -> None:
        self._model.reset()
        self._run = 0
        self._pending = np.zeros(0, dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self.detected = False
