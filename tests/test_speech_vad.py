"""Silero VAD through sherpa-onnx, on speech made at test time."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.models import load_manifest
from fayd.speech.vad import SileroVad, validate_vad_file

pytestmark = pytest.mark.models

RATE = 16000


@pytest.fixture(scope="module")
def vad(vad_model_path):
    return SileroVad(vad_model_path)


def feed(vad: SileroVad, x: np.ndarray, chunk: int = 480) -> list:
    # 30 ms chunks: not a multiple of the 512-sample window, so leftovers are exercised.
    segments = []
    for i in range(0, x.size, chunk):
        segments += vad.accept(x[i : i + chunk])
    return segments + vad.flush()


@pytest.mark.parametrize("voice", ["piper_speech_16k", "espeak_speech_16k"])
def test_one_segment_in_padded_speech(vad, voice, request):
    speech = request.getfixturevalue(voice)
    pad = np.zeros(RATE, dtype=np.float32)
    segments = feed(vad, np.concatenate([pad, speech, pad]))
    assert len(segments) == 1
    seg = segments[0]
    assert seg.samples.dtype == np.float32
    # Where the voice really starts and ends (espeak leads with ~0.3 s of quiet).
    loud = np.flatnonzero(np.abs(speech) > 0.02)
    onset, offset = RATE + loud[0], RATE + loud[-1]
    # The segment starts a little before the voice: sherpa's look-back plus our pre-roll.
    assert onset - 0.6 * RATE <= seg.start_sample <= onset + 0.1 * RATE
    end = seg.start_sample + seg.samples.size
    assert offset - 0.3 * RATE <= end <= offset + 0.9 * RATE
    assert seg.duration_s == pytest.approx(seg.samples.size / RATE)


def test_pre_roll_prepends_the_audio_before_the_detected_start(vad_model_path, espeak_speech_16k):
    padded = np.concatenate([np.zeros(RATE, np.float32), espeak_speech_16k])
    (plain,) = feed(SileroVad(vad_model_path, pre_roll_ms=0), padded)
    (rolled,) = feed(SileroVad(vad_model_path, pre_roll_ms=300), padded)
    lead = int(0.3 * RATE)
    assert rolled.start_sample == plain.start_sample - lead
    assert np.array_equal(rolled.samples[lead:], plain.samples)
    assert np.array_equal(rolled.samples[:lead], padded[rolled.start_sample : plain.start_sample])


def test_no_segment_in_silence_or_faint_noise(vad):
    rng = np.random.default_rng(0)
    assert feed(vad, np.zeros(3 * RATE, dtype=np.float32)) == []
    hiss = (rng.standard_normal(3 * RATE) * 0.003).astype(np.float32)
    assert feed(vad, hiss) == []


def test_speaking_during_an_utterance_and_flush_ends_it(vad, piper_speech_16k):
    pad = np.zeros(RATE, dtype=np.float32)
    half = piper_speech_16k[: piper_speech_16k.size // 2]
    assert vad.accept(np.concatenate([pad, half])) == []
    assert vad.speaking
    segments = vad.flush()
    assert len(segments) == 1
    assert not vad.speaking


def test_reset_forgets_an_ongoing_utterance(vad, piper_speech_16k):
    vad.accept(piper_speech_16k[: RATE // 2])
    assert vad.speaking
    vad.reset()
    assert not vad.speaking
    assert vad.flush() == []


def test_only_16k_is_accepted(vad_model_path):
    with pytest.raises(ValueError):
        SileroVad(vad_model_path, sample_rate=8000)


def test_validator_accepts_the_pinned_model(vad_model_path):
    sha = load_manifest().role("vad").files["model"].digests[0].sha256
    validate_vad_file(vad_model_path, expected_sha256=sha)


def test_validator_rejects_a_wrong_digest_without_loading(vad_model_path):
    with pytest.raises(ModelError, match="sha256"):
        validate_vad_file(vad_model_path, expected_sha256="0" * 64)


def test_validator_rejects_garbage(tmp_path):
    bad = tmp_path / "garbage.onnx"
    bad.write_bytes(np.random.default_rng(1).bytes(4096))
    with pytest.raises(ModelError, match="not usable"):
        validate_vad_file(bad)


def test_validator_survives_a_file_that_kills_sherpa(tmp_path):
    # silero_vad_half.onnx makes sherpa-onnx call exit(): in-process it would end pytest.
    spec = importlib.util.find_spec("silero_vad")
    half = Path(spec.submodule_search_locations[0]) / "data" / "silero_vad_half.onnx"
    if not half.is_file():
        pytest.skip("silero_vad_half.onnx not shipped by this silero-vad version")
    with pytest.raises(ModelError, match="not usable"):
        validate_vad_file(half)


def test_validator_missing_file(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        validate_vad_file(tmp_path / "nope.onnx")


def test_a_monologue_is_split_without_overlap(vad_model_path, piper_speech_16k):
    vad = SileroVad(vad_model_path, max_speech_s=2.0)
    talk = np.concatenate([np.zeros(RATE, np.float32)] + [piper_speech_16k] * 3)
    segments = feed(vad, talk)
    # max_speech_s is soft: past it sherpa-onnx ends the segment at the next dip in the voice.
    assert len(segments) >= 2
    for a, b in itertools.pairwise(segments):
        assert a.start_sample + a.samples.size <= b.start_sample


def test_speech_onset_fires_early_and_not_on_silence(vad_model_path, piper_speech_16k) -> None:
    from fayd.speech.vad import SpeechOnset

    onset = SpeechOnset(vad_model_path)
    assert not onset.accept(np.zeros(16000 * 3, dtype=np.float32))
    onset.reset()
    audio = np.concatenate([np.zeros(16000, dtype=np.float32), piper_speech_16k])
    fired_at = None
    for i in range(0, audio.size, 512):
        if onset.accept(audio[i : i + 512]):
            fired_at = i + 512
            break
    assert fired_at is not None
    # Long before the segmenting VAD could end the utterance: within the first second.
    assert 16000 < fired_at < 16000 + 16000
    assert onset.accept(np.zeros(512, dtype=np.float32))  # latched until reset
    onset.reset()
    assert not onset.detected


def _feed_all(vad, audio):
    """(provisional segments, final segments), each with the sample count it came at."""
    provisional, final = [], []
    for i in range(0, audio.size, 512):
        final += [(i, s) for s in vad.accept(audio[i : i + 512])]
        if (p := vad.provisional()) is not None:
            provisional.append((i, p))
    return provisional, final


def test_provisional_utterance_comes_early_and_matches_the_final(
    vad_model_path, piper_speech_16k
) -> None:
    from fayd.speech.vad import SileroVad

    vad = SileroVad(vad_model_path)
    silence = np.zeros(16000, dtype=np.float32)
    provisional, final = _feed_all(vad, np.concatenate([silence, piper_speech_16k, silence]))
    [(final_at, segment)] = final
    at, early = provisional[-1]
    assert at < final_at  # offered while the VAD still waits for the end of the silence
    assert early.vad_start == segment.vad_start and segment.cut <= early.cut
    assert abs(early.samples.size - segment.samples.size) < 16000 * 0.3


def test_a_pause_mid_sentence_makes_a_provisional_that_does_not_match(
    vad_model_path, piper_tts
) -> None:
    from fayd.speech.audio import pcm16_to_float, resample
    from fayd.speech.vad import SileroVad

    def said(text: str) -> np.ndarray:
        pcm = b"".join(piper_tts.synthesize(text))
        return resample(pcm16_to_float(pcm), piper_tts.sample_rate, 16000)

    pause = np.zeros(int(16000 * 0.45), dtype=np.float32)  # longer than 250 ms, under 700
    silence = np.zeros(16000, dtype=np.float32)
    audio = np.concatenate(
        [silence, said("Please turn on"), pause, said("the kitchen light."), silence]
    )
    provisional, final = _feed_all(SileroVad(vad_model_path), audio)
    [(_, segment)] = final  # one utterance: the pause did not end it
    assert len(provisional) >= 2
    first = provisional[0][1]
    assert first.vad_start == segment.vad_start and segment.cut > first.cut  # stale
    last = provisional[-1][1]
    assert segment.cut <= last.cut  # the last one is the whole utterance


def test_a_cut_ends_the_utterance_at_the_pause_and_speech_after_it_is_new(
    vad_model_path, piper_tts
) -> None:
    """Semantic endpointing: someone decided at a pause that the speaker is done. The cut
    utterance is the provisional one, sample for sample (its transcription is reused);
    speech that follows is a new utterance, and resumed() says so once."""
    from fayd.speech.audio import pcm16_to_float, resample
    from fayd.speech.vad import SileroVad

    def said(text: str) -> np.ndarray:
        pcm = b"".join(piper_tts.synthesize(text))
        return resample(pcm16_to_float(pcm), piper_tts.sample_rate, 16000)

    vad = SileroVad(vad_model_path, min_silence_ms=2500)
    silence = np.zeros(16000, dtype=np.float32)
    first, second = said("What time is it?"), said("And what day is it?")
    early = None
    for i in range(0, silence.size + first.size + 8000, 512):
        chunk = np.concatenate([silence, first, silence])[i : i + 512]
        assert vad.accept(chunk) == []  # 2.5 s of silence would end it: not yet
        early = early or vad.provisional(200)
    assert early is not None and not vad.resumed()
    cut = vad.cut(early.cut)
    assert cut is not None
    assert (cut.vad_start, cut.cut) == (early.vad_start, early.cut)
    assert np.array_equal(cut.samples, early.samples)
    assert vad.cut(early.cut) is None  # nothing left to end

    resumed, finals = [], []
    for i in range(0, second.size + 40000, 512):
        chunk = np.concatenate([second, silence, silence, silence])[i : i + 512]
        finals += vad.accept(chunk)
        resumed.append(vad.resumed())
    assert resumed.count(True) == 1 and resumed.index(True) < 16000 * 0.5 / 512
    [after] = finals  # the detector's own silence ended the new one
    assert after.vad_start >= cut.cut  # not reaching back into the cut utterance
    assert after.samples.size < second.size + 16000 * 0.6


def test_a_stale_cut_is_refused_when_speech_came_again(vad_model_path, piper_tts) -> None:
    from fayd.speech.audio import pcm16_to_float, resample
    from fayd.speech.vad import SileroVad

    pcm = b"".join(piper_tts.synthesize("Set a timer for"))
    words = resample(pcm16_to_float(pcm), piper_tts.sample_rate, 16000)
    vad = SileroVad(vad_model_path, min_silence_ms=2500)
    pause = np.zeros(int(16000 * 0.5), dtype=np.float32)
    early = None
    audio = np.concatenate([pause, words, pause, words])
    for i in range(0, audio.size, 512):
        vad.accept(audio[i : i + 512])
        early = early or vad.provisional(200)
    assert early is not None
    assert vad.resumed()  # the second "Set a timer for" came after the pause
    assert vad.cut(early.cut) is None  # the decision at the pause is stale
    assert vad.speaking
