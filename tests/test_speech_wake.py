"""WakeWord: openWakeWord's bundled "hey jarvis" on Piper speech, fed like a microphone."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.speech.wake import BUILTIN, WakeWord

CHUNK = 1280  # 80 ms at 16 kHz, a typical device frame


def feed(wake: WakeWord, audio: np.ndarray) -> tuple[int, float]:
    """Feed ``audio`` in microphone-sized chunks: (detections, highest score)."""
    hits, best = 0, 0.0
    for i in range(0, audio.size, CHUNK):
        best = max(best, wake.accept(audio[i : i + CHUNK]))
        hits += wake.detected
    return hits, best


@pytest.fixture(scope="module")
def with_wake(speak) -> np.ndarray:
    return speak("Hey Jarvis, what time is it?")


@pytest.fixture(scope="module")
def without_wake(speak) -> np.ndarray:
    return speak("What time is it?")


def test_wake_word_is_detected_once(with_wake: np.ndarray) -> None:
    hits, best = feed(WakeWord("hey_jarvis", threshold=0.5), with_wake)
    assert hits == 1  # it scores high over several frames; the refractory period merges them
    assert best >= 0.5


def test_same_question_without_it_is_not(without_wake: np.ndarray) -> None:
    hits, best = feed(WakeWord("hey_jarvis", threshold=0.5), without_wake)
    assert hits == 0 and best < 0.5


def test_refractory_period_is_counted_in_audio(with_wake: np.ndarray) -> None:
    twice = np.concatenate([with_wake, np.zeros(16000, dtype=np.float32), with_wake])
    assert feed(WakeWord(refractory_s=2.0), twice)[0] == 2  # ~5 s apart
    assert feed(WakeWord(refractory_s=10.0), twice)[0] == 1


def test_one_big_chunk_and_reset(with_wake: np.ndarray) -> None:
    wake = WakeWord()
    long = np.concatenate([np.zeros(16000 * 12, dtype=np.float32), with_wake])  # > 10 s
    assert wake.accept(long) >= 0.5 and wake.detected
    wake.accept(np.zeros(CHUNK, dtype=np.float32))
    assert not wake.detected
    wake.reset()
    assert wake.score == 0.0 and not wake.detected
    assert feed(wake, with_wake)[0] == 1  # works again after a reset
    wake.close()


def test_custom_model_file(with_wake: np.ndarray) -> None:
    spec = importlib.util.find_spec("pyopen_wakeword")
    assert spec and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "models" / "hey_jarvis.tflite"
    wake = WakeWord(model_path=path)
    assert wake.name == "hey_jarvis" and feed(wake, with_wake)[0] == 1


def test_bad_models_are_refused_without_crashing(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="bundled: " + ", ".join(BUILTIN)):
        WakeWord("hey_computer")
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(bytes(range(256)) * 20)
    with pytest.raises(ModelError, match="not a TensorFlow Lite file"):
        WakeWord(model_path=junk)
    # A TFLite header on garbage: TFLite would segfault; the check runs in a child process.
    fake = tmp_path / "fake.tflite"
    fake.write_bytes(b"\x1c\x00\x00\x00TFL3" + bytes(range(256)) * 20)
    with pytest.raises(ModelError, match="not usable"):
        WakeWord(model_path=fake)
    with pytest.raises(ModelError, match="not found"):
        WakeWord(model_path=tmp_path / "gone.tflite", validate=False)
    with pytest.raises(ModelError, match="threshold"):
        WakeWord(threshold=1.5)
