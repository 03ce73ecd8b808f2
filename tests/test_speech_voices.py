"""One reply, the right voice: script runs, and the two voices behind one Tts."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from fayd.speech.audio import pcm16_to_float
from fayd.speech.tts_espeak import EspeakTts
from fayd.speech.voices import ScriptVoices, script_runs

needs_espeak = pytest.mark.skipif(not shutil.which("espeak-ng"), reason="espeak-ng not installed")


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("早上好！", [("zh", "早上好！")]),
        ("Good morning.", [("en", "Good morning.")]),
        # Punctuation closes the run before it; a number goes with the next word.
        ("早上好！Good morning.", [("zh", "早上好！"), ("en", "Good morning.")]),
        ("好的，8点提醒您吃 Aspirin。", [("zh", "好的，8点提醒您吃 "), ("en", "Aspirin。")]),
        ("Aspirin 2片。", [("en", "Aspirin "), ("zh", "2片。")]),
        ("ring 小红 at 3", [("en", "ring "), ("zh", "小红 "), ("en", "at 3")]),
        ("下午3:30", [("zh", "下午3:30")]),
        ("3:30", [("en", "3:30")]),
        ("   ", []),
        ("", []),
    ],
)
def test_a_sentence_is_cut_by_script(text: str, runs: list[tuple[str, str]]) -> None:
    assert script_runs(text) == runs
    assert "".join(r for _, r in runs) == text.rstrip() or not runs


class Counting:
    """A real voice, counted: how often and with what each voice was asked."""

    def __init__(self, voice) -> None:
        self.voice = voice
        self.sample_rate = voice.sample_rate
        self.said: list[str] = []

    def synthesize(self, text: str):
        self.said.append(text)
        yield from self.voice.synthesize(text)


@pytest.mark.models
@needs_espeak
def test_each_script_is_spoken_by_its_voice_at_one_rate(piper_tts) -> None:
    english, chinese = Counting(piper_tts), Counting(EspeakTts())
    made = []
    voices = ScriptVoices(english, lambda: made.append(1) or chinese)
    assert b"".join(voices.synthesize("Good morning.")) and not made  # not loaded for English
    pcm = b"".join(voices.synthesize("早上好！Good morning."))
    assert chinese.said == ["早上好！"] and english.said[-1] == "Good morning."
    assert voices.sample_rate == piper_tts.sample_rate == 22050
    seconds = len(pcm) / 2 / voices.sample_rate
    assert 1.0 < seconds < 6.0
    assert np.sqrt(np.mean(pcm16_to_float(pcm) ** 2)) > 0.02  # speech, not silence
    b"".join(voices.synthesize("你好"))
    assert made == [1]  # made once


@pytest.mark.models
def test_a_chinese_voice_that_cannot_load_leaves_chinese_unsaid_not_garbled(piper_tts) -> None:
    def broken():
        raise OSError("no such file: fastspeech2_quan.tflite")

    voices = ScriptVoices(piper_tts, broken)
    assert b"".join(voices.synthesize("你好。")) == b""
    assert "fastspeech2_quan.tflite" in (voices.chinese_problem or "")
    assert b"".join(voices.synthesize("Hello. 你好。"))  # English still spoken


@needs_espeak
def test_the_espeak_floor_survives_hostile_text() -> None:
    voice = EspeakTts()
    for text in ["你好\ud800", "😀", "-v en", "一" * 2000]:
        for pcm in voice.synthesize(text):
            assert len(pcm) % 2 == 0
    assert list(voice.synthesize("\ud800 ")) == []
