"""SherpaTts: the default Piper voice run by sherpa-onnx (MODELS.md's recipe), heard back by
Whisper and compared sample by sample with piper's own runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts_sherpa import SherpaTts
from tests.conftest import SPOKEN


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sherpa-tts-cache")


@pytest.fixture(scope="module")
def sherpa_tts(cache_dir: Path) -> SherpaTts:
    files = resolve("tts").files
    return SherpaTts(
        files["model"], files["config"], cache_dir=cache_dir, threads=2,
        noise_scale=0, noise_w_scale=0,
    )  # fmt: skip


def test_whisper_hears_the_key_words(sherpa_tts: SherpaTts, whisper_asr, key_words) -> None:
    chunks = list(sherpa_tts.synthesize(SPOKEN))
    assert sherpa_tts.sample_rate == 22050
    assert chunks and all(len(c) % 2 == 0 for c in chunks)
    speech = resample(pcm16_to_float(b"".join(chunks)), sherpa_tts.sample_rate, 16000)
    heard = set(whisper_asr.transcribe(speech).lower().replace(".", "").split())
    assert key_words <= heard


def test_same_samples_as_piper_with_the_noise_off(sherpa_tts: SherpaTts, piper_tts) -> None:
    text = "Good morning. It is time for your tea."
    ours = [pcm16_to_float(c) for c in sherpa_tts.synthesize(text)]
    theirs = [pcm16_to_float(c) for c in piper_tts.synthesize(text)]
    assert len(ours) == len(theirs) == 2  # one chunk per sentence, as piper
    for a, b in zip(ours, theirs, strict=True):
        assert a.size == b.size
        assert np.corrcoef(a, b)[0, 1] > 0.999


def test_blank_text_gives_nothing(sherpa_tts: SherpaTts) -> None:
    assert list(sherpa_tts.synthesize("  \n")) == []


def test_prepared_voice_is_reused(sherpa_tts: SherpaTts, cache_dir: Path) -> None:
    (copy,) = cache_dir.glob("*.onnx")
    before = copy.stat().st_mtime_ns
    files = resolve("tts").files
    again = SherpaTts(files["model"], files["config"], cache_dir=cache_dir)
    assert copy.stat().st_mtime_ns == before and len(list(cache_dir.glob("*.onnx"))) == 1
    assert next(again.synthesize("Hello there."))


def test_a_graph_sherpa_would_die_on_is_refused(tmp_path: Path) -> None:
    # sherpa-onnx exit()s on a model it cannot use; the check runs in a child process, so
    # this is an exception here and pytest lives on.
    not_a_voice = resolve("vad").files["model"]
    config = resolve("tts").files["config"]
    with pytest.raises(ModelError, match="not usable by sherpa-onnx"):
        SherpaTts(not_a_voice, config, cache_dir=tmp_path)


def test_missing_voice_is_named(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        SherpaTts(tmp_path / "nope.onnx", cache_dir=tmp_path)
