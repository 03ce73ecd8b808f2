"""Whisper tiny.en through faster-whisper, on speech made at test time."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.speech.asr import WhisperAsr

pytestmark = pytest.mark.models


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def test_transcribes_piper_speech(whisper_asr, piper_speech_16k, key_words):
    text = whisper_asr.transcribe(piper_speech_16k)
    assert text == text.strip()
    assert key_words <= words(text), text


def test_vad_segment_keeps_the_first_word(whisper_asr, vad_model_path, espeak_speech_16k):
    # espeak's soft "Please" starts before Silero notices it: the VAD's pre-roll keeps it.
    from fayd.speech.vad import SileroVad

    vad = SileroVad(vad_model_path)
    pad = np.zeros(16000, dtype=np.float32)
    segments = vad.accept(np.concatenate([pad, espeak_speech_16k, pad])) + vad.flush()
    assert len(segments) == 1
    text = whisper_asr.transcribe(segments[0].samples)
    assert {"please", "kitchen", "music"} <= words(text), text


def test_empty_and_silent_input(whisper_asr):
    assert whisper_asr.transcribe(np.zeros(0, dtype=np.float32)) == ""
    assert len(whisper_asr.transcribe(np.zeros(16000, dtype=np.float32)).split()) <= 2


def test_concurrent_calls_are_serialised(whisper_asr, piper_speech_16k, key_words):
    results: list[str] = []

    def work() -> None:
        results.append(whisper_asr.transcribe(piper_speech_16k))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 2
    assert all(key_words <= words(r) for r in results), results


def test_not_a_model_directory(tmp_path):
    with pytest.raises(ModelError):
        WhisperAsr(tmp_path)


@pytest.mark.parametrize("window_s", [9.9, 30.5, -1])
def test_an_encoder_window_outside_10_to_30_s_is_refused(window_s):
    with pytest.raises(ValueError, match="window_s must be 10-30"):
        WhisperAsr("/nonexistent", "en", window_s=window_s)


def test_a_short_window_hears_a_short_utterance_and_no_speech_as_nothing(
    piper_speech_16k, key_words
):
    from fayd.models import resolve

    short = WhisperAsr(resolve("asr").files["model"], "en", threads=2, window_s=15)
    assert key_words <= words(short.transcribe(piper_speech_16k))
    assert short.transcribe(np.zeros(16000, dtype=np.float32)) == ""
    # Longer than the window less a second: the whole 30 s path, the same words.
    long = np.concatenate([np.zeros(16000 * 15, dtype=np.float32), piper_speech_16k])
    assert key_words <= words(short.transcribe(long))
