"""Audio helpers: PCM16 ↔ float32, WAV files, resampling and an energy-based mouth track.

Everything here is numpy plus the standard library: it runs in the audio path, so no
heavyweight DSP dependency and no model.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np

#: OVR (Oculus) viseme set; Fay's avatars take these names.
VISEMES = ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou")


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    """Signed 16-bit little-endian mono PCM → float32 in [-1, 1)."""
    if len(pcm) % 2:
        raise ValueError(f"PCM16 needs an even byte count, got {len(pcm)}")
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(samples: np.ndarray) -> bytes:
    """float in [-1, 1] → PCM16 bytes (clipped). Exact inverse of :func:`pcm16_to_float`."""
    scaled = np.rint(np.asarray(samples, dtype=np.float64) * 32768.0)
    return np.clip(scaled, -32768, 32767).astype("<i2").tobytes()


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Read a PCM WAV file as float32 mono (channels averaged) and its sample rate."""
    with wave.open(str(path), "rb") as w:
        channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
        raw = w.readframes(w.getnframes())
    samples = _decode(raw, width)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1, dtype=np.float32)
    return samples.astype(np.float32, copy=False), rate


def _decode(raw: bytes, width: int) -> np.ndarray:
    if width == 1:  # WAV's 8-bit PCM is unsigned
        return (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    if width == 2:
        return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    if width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
        return v.astype(np.float32) / float(1 << 23)
    if width == 4:
        return (np.frombuffer(raw, dtype="<i4").astype(np.float64) / 2.0**31).astype(np.float32)
    raise ValueError(f"unsupported WAV sample width: {width} bytes")


def write_wav(path: str | Path, pcm16: bytes, rate: int, channels: int = 1) -> None:
    """Write PCM16 bytes as a WAV file."""
    Path(path).write_bytes(wav_bytes(pcm16, rate, channels))


def wav_bytes(pcm16: bytes, rate: int, channels: int = 1) -> bytes:
    """PCM16 bytes as the bytes of a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm16)
    return buffer.getvalue()


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Resample float audio by linear interpolation, low-passed first when downsampling.

    Why this and not a polyphase resampler: fayd only moves speech between 16, 22.05, 44.1
    and 48 kHz, where linear interpolation is inaudible for ASR/VAD and avatar playback, and it
    keeps scipy/soxr out of the daemon. Interpolation alone aliases on the way down (a 48 kHz
    mic's 8–24 kHz hiss would fold into the 16 kHz speech band), so a short windowed-sinc
    FIR at the new Nyquist frequency runs first.
    """
    x = np.asarray(samples, dtype=np.float32)
    if src_rate == dst_rate or x.size == 0:
        return x.copy()
    if src_rate <= 0 or dst_rate <= 0:
        raise ValueError(f"sample rates must be positive: {src_rate} → {dst_rate}")
    if dst_rate < src_rate:
        x = _lowpass(x, cutoff=0.5 * dst_rate / src_rate)
    n_out = max(1, round(x.size * dst_rate / src_rate))
    # Sample positions in the source's time base; endpoints clamp rather than wrap.
    pos = np.arange(n_out, dtype=np.float64) * (src_rate / dst_rate)
    return np.interp(pos, np.arange(x.size), x).astype(np.float32)


def _lowpass(x: np.ndarray, cutoff: float, taps: int = 63) -> np.ndarray:
    """Hann-windowed sinc FIR; ``cutoff`` is a fraction of the sample rate (0 … 0.5)."""
    n = np.arange(taps) - (taps - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hanning(taps)
    h /= h.sum()  # unity gain at DC
    return np.convolve(x, h.astype(np.float32), mode="same")


# --- mouth track --------------------------------------------------------------------------

#: Frames quieter than this RMS (≈ -46 dBFS) are silence whatever the chunk's own peak.
NOISE_FLOOR = 0.005
#: Frames below this fraction of the chunk's loudest frame are treated as silence too.
RELATIVE_FLOOR = 0.1
#: Openness thresholds → viseme, from nearly closed to wide open.
_OPEN_VISEMES = ((0.25, "ih"), (0.5, "E"), (0.75, "oh"), (1.01, "aa"))


def lips_track(pcm16: bytes, rate: int, step_ms: int = 33) -> list[dict]:
    """An energy-based mouth track for one chunk of speech, in Fay's format:
    ``[{"Lip": viseme, "Time": ms from the chunk's start, "Open": 0..1}]``, one entry per
    ``step_ms`` frame.

    It does not recognise phonemes: each frame's RMS is normalised against the chunk's own
    loudest frame (TTS output is peak-normalised per sentence, so relative loudness is what
    carries the mouth movement), frames under a noise floor are "sil", and louder frames open
    the mouth more: "ih" < "E" < "oh" < "aa". Good enough for an avatar's lips to move in time
    with the voice; a phoneme-aligned track would need the TTS's alignments.
    """
    if step_ms <= 0 or rate <= 0:
        raise ValueError("step_ms and rate must be positive")
    x = pcm16_to_float(pcm16)
    step = max(1, round(rate * step_ms / 1000))
    n_frames = -(-x.size // step)  # ceil: a short last frame still gets an entry
    if n_frames == 0:
        return []
    padded = np.zeros(n_frames * step, dtype=np.float32)
    padded[: x.size] = x
    rms = np.sqrt(np.mean(padded.reshape(n_frames, step) ** 2, axis=1))
    floor = max(NOISE_FLOOR, float(rms.max()) * RELATIVE_FLOOR)
    span = float(rms.max()) - floor
    track = []
    for i, level in enumerate(rms):
        opening = 0.0 if level <= floor or span <= 0 else min(1.0, (level - floor) / span)
        opening = round(float(opening), 2)  # a plain float: it goes into JSON
        # Time from the real frame start: step is rounded to whole samples.
        track.append(
            {"Lip": _viseme(opening), "Time": round(i * step * 1000 / rate), "Open": opening}
        )
    return track


def _viseme(opening: float) -> str:
    if opening <= 0.0:
        return "sil"
    return next(v for limit, v in _OPEN_VISEMES if opening < limit)
