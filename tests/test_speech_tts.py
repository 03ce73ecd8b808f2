"""The Piper voice through piper-tts 1.8."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.models import resolve
from fayd.speech.audio import lips_track, pcm16_to_float
from fayd.speech.tts import PiperTts

pytestmark = pytest.mark.models


def test_sample_rate_comes_from_the_voice_config(piper_tts):
    assert piper_tts.sample_rate == 22050


def test_one_chunk_per_sentence_of_plausible_duration(piper_tts):
    text = "Good morning. The weather today is sunny and warm."
    chunks = list(piper_tts.synthesize(text))
    assert len(chunks) == 2
    assert all(isinstance(c, bytes) and c and len(c) % 2 == 0 for c in chunks)
    pcm = b"".join(chunks)
    seconds = len(pcm) / 2 / piper_tts.sample_rate
    n_words = len(text.split())
    assert 0.15 * n_words < seconds < 1.0 * n_words
    x = pcm16_to_float(pcm)
    assert np.sqrt(np.mean(x**2)) > 0.03  # speech, not silence


def test_default_voice_varies_and_noiseless_voice_repeats(piper_tts):
    files = resolve("tts").files
    default = PiperTts(files["model"], files["config"], threads=2)
    text = "Hello there, how are you?"
    assert b"".join(default.synthesize(text)) != b"".join(default.synthesize(text))
    assert b"".join(piper_tts.synthesize(text)) == b"".join(piper_tts.synthesize(text))


def test_blank_text_yields_nothing(piper_tts):
    assert list(piper_tts.synthesize("   \n")) == []


def test_an_abandoned_stream_does_not_block_the_next(piper_tts):
    stream = piper_tts.synthesize("One sentence here. And a second one.")
    assert next(stream)
    del stream
    assert b"".join(piper_tts.synthesize("Still working."))


def test_mouth_moves_with_the_voice(piper_tts):
    pcm = b"".join(piper_tts.synthesize("Hello there, how are you?"))
    track = lips_track(pcm, piper_tts.sample_rate)
    lips = {f["Lip"] for f in track}
    assert "sil" in lips and len(lips - {"sil"}) >= 2


def test_missing_files_and_download_needing_voices(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        PiperTts(tmp_path / "voice.onnx")
    files = resolve("tts").files
    model = tmp_path / "zh.onnx"
    model.symlink_to(files["model"])
    config = json.loads(files["config"].read_text())
    config["phoneme_type"] = "pinyin"
    (tmp_path / "zh.onnx.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="download"):
        PiperTts(model)


def test_config_defaults_to_model_path_plus_json(tmp_path):
    files = resolve("tts").files
    shutil.copy(files["config"], tmp_path / "v.onnx.json")
    (tmp_path / "v.onnx").symlink_to(files["model"])
    assert PiperTts(tmp_path / "v.onnx", threads=1).sample_rate == 22050
