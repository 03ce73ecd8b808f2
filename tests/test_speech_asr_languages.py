"""English and Chinese heard by one household (fayd.speech.asr_languages): real Whisper
tiny.en and base over real speech (Piper for English, espeak-ng for Mandarin), the language
per utterance, simplified characters, and the models loaded only when a language needs them.

espeak-ng's Mandarin is poor (Whisper base mostly hears it as English): the sentences here
are ones it says clearly enough, checked by hand; the Baker voice (the tts_zh role) is used
too when installed. "auto" finds the language from the same pass of base's encoder that
is then decoded (fayd.speech.asr.WhisperAsr._encode): measured on 14 utterances on 2 busy
cores, it took what a fixed language takes (1.74 s against 1.65 s an utterance; faster-
whisper's own detection had taken 2.3 s against 1.6 s).
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fayd.config import load_config
from fayd.errors import ModelError, ModelMissing
from fayd.models import load_manifest
from fayd.models.choices import assemble
from fayd.speech.asr import WhisperAsr
from fayd.speech.asr_languages import LanguageAsr, device_language, language_asr
from fayd.speech.zh_script import to_simplified
from fayd.store.devices_records import DeviceSettings
from fayd.testing.speech import ESPEAK_INSTALL, missing_espeak_tools

WHISPER_BASE = load_manifest().choice("asr", "whisper-base")
MISSING = [p.dist for p in WHISPER_BASE.packages if not importlib.util.find_spec(p.module)]
pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"{', '.join(MISSING)} not installed (fayd models install asr --choice whisper-base)",
)
INSTALL = "fayd models install asr --choice whisper-base"


def han(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def mandarin(text: str, speed: int = 120) -> np.ndarray:
    """``text`` said by espeak-ng's Mandarin voice (pinyin reading), 16 kHz float32."""
    if missing_espeak_tools():
        pytest.skip(f"espeak-ng and sox are needed ({ESPEAK_INSTALL})")
    wav = subprocess.run(
        ["espeak-ng", "-v", "cmn-latn-pinyin", "-s", str(speed), "--stdout", text],
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    raw = subprocess.run(
        [
            "sox",
            "-t",
            "wav",
            "-",
            "-t",
            "raw",
            "-r",
            "16000",
            "-c",
            "1",
            "-b",
            "16",
            "-e",
            "signed",
            "-",
        ],
        input=wav,
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    return np.frombuffer(raw, dtype=np.int16).astype(np.float32) / 32768.0


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> WhisperAsr:
    folder = assemble(WHISPER_BASE, tmp_path_factory.mktemp("models") / "whisper-base")
    return WhisperAsr(folder, "auto", threads=2)


class Counted:
    """A factory handing out an already loaded model, counting the calls (the models are
    shared by the tests: loading base again per test would cost seconds)."""

    def __init__(self, model: WhisperAsr | None, error: ModelError | None = None) -> None:
        self.model, self.error, self.calls = model, error, 0

    def __call__(self) -> WhisperAsr:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.model is not None
        return self.model


def test_english_never_loads_whisper_base(whisper_asr: WhisperAsr, speak, key_words) -> None:
    english, multilingual = Counted(whisper_asr), Counted(None, ModelError("must not load"))
    asr = LanguageAsr(english, multilingual, default="en")
    heard = asr.transcribe(speak("Please turn on the kitchen light and play some music."))
    assert key_words <= set(heard.lower().replace(",", "").replace(".", "").split()), heard
    assert asr.transcribe(np.zeros(16000, dtype=np.float32), "en") is not None
    assert asr.transcribe(np.zeros(0, dtype=np.float32), "zh") == ""  # nothing to hear
    assert (english.calls, multilingual.calls, asr.loaded()) == (1, 0, ["en"])


def test_zh_hears_chinese_in_simplified_characters(base: WhisperAsr) -> None:
    asr = LanguageAsr(Counted(None, ModelError("not this one")), Counted(base), default="en")
    heard = asr.transcribe(mandarin("我爱你，谢谢你，我想听音乐。"), "zh")
    # Whisper base itself writes 謝謝 for this audio (seen by hand); the transcript must not.
    assert "我爱你" in heard and "谢谢你" in heard, heard
    assert heard == to_simplified(heard)
    assert asr.loaded() == ["multi"]


def test_auto_tells_chinese_from_english(base: WhisperAsr, whisper_asr: WhisperAsr, speak) -> None:
    english = Counted(whisper_asr)
    asr = LanguageAsr(english, Counted(base), default="auto")
    chinese = mandarin("请把客厅的灯打开，然后播放一些音乐。")
    assert base.detect_language(chinese) == "zh"
    assert han(asr.transcribe(chinese))
    assert english.calls == 0  # Chinese: base alone
    spoken = speak("What time is it now?")
    assert base.detect_language(spoken) == "en"
    heard = asr.transcribe(spoken, "auto")
    assert "time" in heard.lower() and not han(heard), heard
    # English too is decoded by base, from the encoding that told the language: tiny.en
    # is never loaded for "auto".
    assert english.calls == 0 and asr.loaded() == ["multi"]


def test_the_baker_voice_is_heard_as_chinese(base: WhisperAsr) -> None:
    try:
        from fayd.speech.tts_zh import BakerTts
    except ImportError:
        pytest.skip("no Chinese voice here (fayd.speech.tts_zh, fayd models install tts_zh)")
    from fayd.speech.audio import pcm16_to_float, resample

    try:
        tts = BakerTts(None, threads=2)
    except ModelError as exc:
        pytest.skip(f"the Chinese voice is not installed: {exc}")
    asr = LanguageAsr(None, Counted(base), default="auto")
    for text, words in (("帮我记住医生的电话号码", "医生的电话号码"), ("现在几点了", "现在")):
        pcm = b"".join(tts.synthesize(text))
        heard = asr.transcribe(resample(pcm16_to_float(pcm), tts.sample_rate, 16000))
        # Whisper base writes 醫生的電話號碼 and 現在 for these: simplified here.
        assert words in heard and heard == to_simplified(heard), heard


def test_tiny_en_missing_english_is_heard_by_base(base: WhisperAsr, speak) -> None:
    english = Counted(None, ModelMissing("asr", "/nope/tiny.en", "fayd models install asr"))
    asr = LanguageAsr(english, Counted(base), default="en")
    for _ in range(2):  # tried once, not per utterance
        assert "time" in asr.transcribe(speak("What time is it now?")).lower()
    assert english.calls == 1 and asr.loaded() == ["multi"]


def test_a_missing_whisper_base_is_named_with_its_install_command(
    tmp_path: Path, whisper_asr: WhisperAsr
) -> None:
    env = {"FAYD_PATHS_STATE_DIR": str(tmp_path), "FAYD_SPEECH_ASR_LANGUAGE": "auto"}
    with pytest.raises(ModelMissing, match=INSTALL):
        language_asr(load_config(environ=env), None)  # at start, not at the first word
    env["FAYD_SPEECH_ASR_LANGUAGE"] = "en"
    asr = language_asr(load_config(environ=env), None)
    with pytest.raises(ModelMissing, match=INSTALL):  # an English household, a zh device
        asr.transcribe(np.ones(1600, dtype=np.float32) * 0.01, "zh")
    only_english = LanguageAsr(Counted(whisper_asr), None)
    with pytest.raises(ModelError, match="needs the multilingual Whisper"):
        only_english.transcribe(np.ones(1600, dtype=np.float32) * 0.01, "auto")
    with pytest.raises(ValueError, match="must be one of en, zh, auto"):
        only_english.transcribe(np.ones(1600, dtype=np.float32), "fr")


def test_the_language_of_a_devices_utterance() -> None:
    household = load_config(environ={"FAYD_SPEECH_ASR_LANGUAGE": "auto"})
    assert device_language(household, DeviceSettings()) == "auto"
    assert device_language(household, DeviceSettings(language="zh")) == "zh"
    assert device_language(load_config(environ={}), DeviceSettings()) == "en"


@pytest.mark.parametrize(
    ("text", "simplified"),
    [
        ("記得現在吃藥", "记得现在吃药"),
        ("我爱你", "我爱你"),
        ("打開Wi-Fi 3次", "打开Wi-Fi 3次"),
        ("好😀\ud800", "好😀?"),  # a lone surrogate cannot reach OpenCC: replaced
        ("", ""),
    ],
)
def test_traditional_characters_become_simplified(text: str, simplified: str) -> None:
    assert to_simplified(text) == simplified
    assert to_simplified("現" * 10000) == "现" * 10000
