"""Audio helpers: exact PCM round-trips, WAV I/O, resampling, and the mouth track."""

from __future__ import annotations

import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from fayd.speech.audio import (
    VISEMES,
    float_to_pcm16,
    lips_track,
    pcm16_to_float,
    read_wav,
    resample,
    write_wav,
)


def tone(freq: float, rate: int, seconds: float = 1.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def dominant_hz(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    return float(np.argmax(spectrum) * rate / x.size)


def test_pcm16_float_round_trip_is_exact_for_every_sample_value():
    pcm = np.arange(-32768, 32768, dtype="<i2").tobytes()
    floats = pcm16_to_float(pcm)
    assert floats.dtype == np.float32
    assert floats.min() == -1.0 and floats.max() < 1.0
    assert float_to_pcm16(floats) == pcm


def test_float_to_pcm16_clips_out_of_range():
    out = np.frombuffer(float_to_pcm16(np.array([2.0, -2.0, 0.0])), dtype="<i2")
    assert out.tolist() == [32767, -32768, 0]


def test_odd_pcm_byte_count_is_rejected():
    with pytest.raises(ValueError):
        pcm16_to_float(b"\x00\x01\x02")


def test_wav_round_trip(tmp_path):
    pcm = float_to_pcm16(tone(440, 16000, 0.25))
    path = tmp_path / "t.wav"
    write_wav(path, pcm, 16000)
    samples, rate = read_wav(path)
    assert rate == 16000
    assert float_to_pcm16(samples) == pcm


def test_read_wav_downmixes_stereo(tmp_path):
    left = tone(300, 8000, 0.1, amp=0.8)
    frames = np.stack([left, np.zeros_like(left)], axis=1).reshape(-1)
    path = tmp_path / "stereo.wav"
    write_wav(path, float_to_pcm16(frames), 8000, channels=2)
    samples, rate = read_wav(path)
    assert rate == 8000 and samples.size == left.size
    np.testing.assert_allclose(samples, left / 2, atol=1 / 32768)


@pytest.mark.parametrize("width", [1, 3, 4])
def test_read_wav_other_sample_widths(tmp_path, width):
    x = tone(200, 8000, 0.05, amp=0.5)
    if width == 1:
        raw = np.clip(np.rint(x * 128 + 128), 0, 255).astype(np.uint8).tobytes()
    elif width == 3:
        v = np.rint(x * (1 << 23)).astype(np.int32)
        raw = np.stack([v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF], 1).astype(np.uint8).tobytes()
    else:
        raw = np.rint(x * 2.0**31).astype("<i4").tobytes()
    path = tmp_path / f"w{width}.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(width)
        w.setframerate(8000)
        w.writeframes(raw)
    samples, _ = read_wav(path)
    np.testing.assert_allclose(samples, x, atol=1 / 100)


@pytest.mark.parametrize(("src", "dst"), [(22050, 16000), (16000, 48000), (48000, 16000)])
def test_resample_keeps_length_ratio_and_frequency(src, dst):
    x = tone(440, src)
    y = resample(x, src, dst)
    assert y.dtype == np.float32
    assert y.size == dst  # one second in, one second out
    assert abs(dominant_hz(y, dst) - 440) <= 1.5
    assert 0.3 < float(np.abs(y).max()) < 0.55  # amplitude kept


def test_downsampling_filters_instead_of_aliasing():
    # 12 kHz cannot exist at 16 kHz; interpolation alone would fold it to 4 kHz.
    x = tone(12000, 48000)
    y = resample(x, 48000, 16000)
    assert np.sqrt(np.mean(y[200:-200] ** 2)) < 0.02 * np.sqrt(np.mean(x**2))


def test_resample_same_rate_and_empty():
    x = tone(100, 8000, 0.01)
    y = resample(x, 8000, 8000)
    assert y is not x and np.array_equal(x, y)
    assert resample(np.zeros(0, np.float32), 16000, 22050).size == 0


def test_lips_on_silence_is_closed():
    track = lips_track(bytes(2 * 16000), 16000)
    assert len(track) == 31  # ceil(1000 ms / 33 ms)
    assert {f["Lip"] for f in track} == {"sil"}
    assert {f["Open"] for f in track} == {0.0}
    assert [f["Time"] for f in track[:3]] == [0, 33, 66]
    assert all(set(f) == {"Lip", "Time", "Open"} for f in track)


def test_lips_follow_loudness():
    rate = 16000
    quiet = np.zeros(rate // 2, dtype=np.float32)
    loud = tone(220, rate, 0.5, amp=0.8)
    track = lips_track(float_to_pcm16(np.concatenate([quiet, loud, quiet])), rate)
    lips = [f["Lip"] for f in track]
    assert lips[:14] == ["sil"] * 14
    assert lips[-14:] == ["sil"] * 14
    middle = track[17:29]
    assert {f["Lip"] for f in middle} == {"aa"}
    assert all(f["Open"] >= 0.9 for f in middle)
    assert set(lips) <= set(VISEMES)


def test_lips_openness_grows_with_level():
    rate = 16000
    ramp = tone(220, rate, 1.0, amp=1.0) * np.linspace(0, 1, rate, dtype=np.float32)
    track = lips_track(float_to_pcm16(ramp), rate, step_ms=20)
    opens = [f["Open"] for f in track]
    assert opens == sorted(opens)
    assert all(isinstance(v, float) and round(v, 2) == v for v in opens)
    assert {"sil", "ih", "E", "oh", "aa"} <= {f["Lip"] for f in track}


def test_lips_empty_input():
    assert lips_track(b"", 16000) == []


def test_importing_fayd_speech_llm_models_loads_no_model_runtime():
    # The daemon imports these at start-up; the runtimes load only when a model is built.
    code = (
        "import sys, fayd.speech, fayd.llm, fayd.models\n"
        "heavy = ['sherpa_onnx', 'faster_whisper', 'ctranslate2', 'piper', 'llama_cpp',"
        " 'onnxruntime']\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[1],  # the checkout, where `fayd` imports from
    )
    assert out.stdout.strip() == "[]"


def test_public_names():
    import fayd.speech

    for name in fayd.speech.__all__:
        assert getattr(fayd.speech, name) is not None
