"""The Baker Mandarin voice (fayd.speech.tts_zh) said aloud and heard back by the
multilingual Whisper: an older person's everyday lines, times and numbers read right,
hostile text survived, broken files refused by name."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from fayd.errors import ModelError, ModelMissing
from fayd.models import load_manifest, resolve
from fayd.models.choices import assemble
from fayd.speech.audio import pcm16_to_float, resample
from fayd.testing.zh_score import (
    OPENCC_INSTALL,
    Listener,
    error_rate,
    have_opencc,
    spoken,
    syllables,
)

SPEC = load_manifest().role("tts_zh")
MISSING = [p.dist for p in SPEC.packages if importlib.util.find_spec(p.module) is None]
pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"{', '.join(MISSING)} not installed (fayd models install tts_zh fetches them)",
)
WHISPER_BASE = load_manifest().choice("asr", "whisper-base")

# (given to the voice, what a listener should hear). The second column is written by hand,
# not derived by fayd's own text rules, so a misread time or number counts as an error.
LINES = [
    ("早上好，您昨晚睡得好吗？", "早上好您昨晚睡得好吗"),
    ("现在是上午8:30。", "现在是上午八点三十分"),
    ("现在是上午八点半。", "现在是上午八点半"),
    ("该吃降压药了，记得吃2片。", "该吃降压药了记得吃两片"),
    ("您是不是摔倒了？我马上叫人来帮您。", "您是不是摔倒了我马上叫人来帮您"),
    ("今天是3月5日，血糖比昨天低了10%。", "今天是三月五日血糖比昨天低了百分之十"),
]
#: Measured over these lines: syllable errors 0.04, character errors 0.06 (Whisper base
#: hears 降压药了 as 将鸭药冷 and 了 as 门; the rest exact); espeak-ng's cmn voice scores
#: ~0.6 through the same Whisper. The bounds leave room for Whisper's own slips on another
#: CPU, while a voice that misreads a number or loses a clause in every other line fails.
MAX_SYLLABLE_ERRORS = 0.12
MAX_CHARACTER_ERRORS = 0.15


@pytest.fixture(scope="module")
def voice():
    from fayd.speech.tts_zh import BakerTts

    return BakerTts(threads=2)


@pytest.fixture(scope="module")
def whisper(tmp_path_factory):
    absent = [p.dist for p in WHISPER_BASE.packages if importlib.util.find_spec(p.module) is None]
    if absent:
        pytest.skip(
            f"{', '.join(absent)} not installed (fayd models install asr --choice whisper-base)"
        )
    if not have_opencc():
        pytest.skip(
            f"OpenCC not installed ({OPENCC_INSTALL}): Whisper writes traditional characters"
        )
    return Listener(assemble(WHISPER_BASE, tmp_path_factory.mktemp("whisper-base")))


def heard(voice, whisper, text: str) -> str:
    chunks = list(voice.synthesize(text))
    audio = pcm16_to_float(b"".join(chunks))
    return whisper.hear(resample(audio, voice.sample_rate, 16000))


def test_everyday_lines_are_heard_back_right(voice, whisper) -> None:
    pairs = [(said, heard(voice, whisper, text)) for text, said in LINES]
    assert error_rate(pairs, syllables) < MAX_SYLLABLE_ERRORS, pairs
    assert error_rate(pairs) < MAX_CHARACTER_ERRORS, pairs
    assert "上午八点三十分" in spoken(pairs[1][1]), pairs[1]  # 8:30, read as a time


def test_one_chunk_per_clause_with_a_pause_and_the_same_audio_each_time(voice) -> None:
    text = "我已经通知您的家人了，请别担心。"
    chunks = list(voice.synthesize(text))
    assert len(chunks) == 2 and voice.sample_rate == 24000
    first = pcm16_to_float(chunks[0])
    assert np.abs(first[-int(0.1 * 24000) :]).max() < 0.01  # the pause after the comma
    assert 0.1 < np.abs(first).max() <= 1.0  # speech, not silence, not clipped noise
    assert b"".join(voice.synthesize(text)) == b"".join(chunks)  # no dropout left: repeatable


@pytest.mark.parametrize("text", ["", "   \n", "Hello there!", "😀🙂", "\ud800\udfff", "，。！"])
def test_nothing_sayable_gives_nothing(voice, text: str) -> None:
    assert list(voice.synthesize(text)) == []


def test_hostile_text_is_said_in_short_chunks_without_a_crash(voice) -> None:
    mixed = "我叫Tom😀，今天\ud800吃了2片药呣〇㐀，体温-1.5度，血压140/90，电话13812345678"
    assert len(list(voice.synthesize(mixed))) == 6  # 140/90 is two readings
    long = "今天天气很好我们出去走走吧" * 800  # 10 400 characters, not one comma
    chunks = voice.synthesize(long)
    first = next(chunks)  # cut into clauses: the first comes quickly and is short
    assert 0 < len(first) // 2 < 24000 * 12
    chunks.close()


def test_the_patched_graph_runs_without_flex_ops() -> None:
    from fayd.speech.tflite_patch import flex_ops_in_use, read_verified, remove_dropouts

    model = resolve("tts_zh").files["model"]
    digest = SPEC.files["model"].digests[0]
    original = read_verified(model, digest.size, digest.sha256)
    assert flex_ops_in_use(original) == ["FlexRandomUniform"]
    assert flex_ops_in_use(remove_dropouts(original)) == []
    with pytest.raises(ModelError, match="found 0 training-mode dropouts"):
        remove_dropouts(remove_dropouts(original))  # only that exact graph is patched


def test_a_damaged_or_missing_file_is_named(tmp_path: Path) -> None:
    from fayd.speech.tts_zh import BakerTts

    files = {k: Path(p) for k, p in resolve("tts_zh").files.items()}
    for key in ("vocoder", "mapper"):
        bad = tmp_path / key / files[key].name
        bad.parent.mkdir()
        shutil.copyfile(files[key], bad)
        with bad.open("r+b") as f:  # same size, a few bytes changed
            f.seek(bad.stat().st_size // 2)
            f.write(b"\x00\xff\x00\xff")
        with pytest.raises(ModelError, match=str(bad)):
            BakerTts({**files, key: bad}, threads=1)
    gone = tmp_path / "nowhere.tflite"
    with pytest.raises(ModelMissing, match="fayd models install tts_zh") as exc:
        BakerTts({**files, "model": gone}, threads=1)
    assert exc.value.path == str(gone)
