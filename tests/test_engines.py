"""The engines loader: backend choices from config, each role on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from fayd.config import load_config
from fayd.errors import ConfigError
from fayd.service.engines import check_choices, load_engines


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FAYD_SPEECH_ASR_ENGINE": "vosk"}, "speech.asr_engine"),
        ({"FAYD_SPEECH_TTS_ENGINE": "festival"}, "speech.tts_engine"),
        ({"FAYD_SPEECH_ASR_ENGINE": "sherpa"}, "needs speech.asr_model"),
    ],
)
def test_bad_choices_are_config_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_choices(load_config(environ=env))


def test_sherpa_tts_and_a_wake_word_from_config(tmp_path: Path) -> None:
    cfg = load_config(
        environ={
            "FAYD_PATHS_STATE_DIR": str(tmp_path),
            "FAYD_SPEECH_TTS_ENGINE": "sherpa",
            "FAYD_SPEECH_WAKE_WORD": "hey_jarvis",
        }
    )
    engines = load_engines(cfg)
    assert engines.problems == {}
    assert type(engines.tts).__name__ == "SherpaTts"
    assert b"".join(engines.tts.synthesize("Hello there.")), "no speech"
    assert engines.wake is not None
    first, second = engines.wake(), engines.wake()  # one detector per device
    assert first is not second


def test_a_missing_wake_model_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    cfg = load_config(
        environ={
            "FAYD_PATHS_STATE_DIR": str(tmp_path),
            "FAYD_SPEECH_WAKE_WORD": str(tmp_path / "nope.tflite"),
            "FAYD_LLM_MODEL_PATH": str(tmp_path / "none.gguf"),
        }
    )
    engines = load_engines(cfg)
    assert engines.wake is None and "nope.tflite" in engines.problems["wake"]
    assert engines.llm is None and "none.gguf" in engines.problems["llm"]
    assert engines.asr is not None and engines.tts is not None
