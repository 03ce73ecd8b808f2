"""The engines loader: backend choices from config, each role on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from fayd.config import load_config
from fayd.errors import ConfigError
from fayd.service.engines import load_engines


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FAYD_SPEECH_ASR_ENGINE": "vosk"}, 'FAYD_SPEECH_ASR_ENGINE="vosk": must be one of'),
        ({"FAYD_SPEECH_TTS_ENGINE": "festival"}, 'FAYD_SPEECH_TTS_ENGINE="festival"'),
        ({"FAYD_SPEECH_ASR_ENGINE": "sherpa"}, "needs speech.asr_model"),
    ],
)
def test_bad_choices_are_config_errors(env: dict[str, str], message: str) -> None:
    # Checked with every other value when the settings are read (fayd.config_check).
    with pytest.raises(ConfigError) as info:
        load_config(environ=env)
    assert message in str(info.value)


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
    assert type(engines.tts.default).__name__ == "SherpaTts"  # English; Chinese has its own
    assert b"".join(engines.tts.synthesize("Hello there.")), "no speech"
    assert engines.wake is not None
    first, second = engines.wake(), engines.wake()  # one detector per device
    assert first is not second


@pytest.mark.parametrize(
    ("name", "setting"),
    [("nope.tflite", "FAYD_SPEECH_WAKE_WORD"), ("none.gguf", "FAYD_LLM_MODEL_PATH")],
)
def test_a_users_own_model_that_is_missing_stops_the_start(
    tmp_path: Path, name: str, setting: str
) -> None:
    path = tmp_path / name
    cfg = load_config(environ={"FAYD_PATHS_STATE_DIR": str(tmp_path), setting: str(path)})
    with pytest.raises(ConfigError) as info:
        load_engines(cfg)
    assert f'{setting}="{path}"' in str(info.value)


def test_a_users_own_model_that_cannot_load_falls_back_to_the_default(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file at all" * 100)
    env = {"FAYD_PATHS_STATE_DIR": str(tmp_path), "FAYD_LLM_MODEL_PATH": str(broken)}
    engines = load_engines(load_config(environ=env))
    why = engines.fallbacks["llm"]
    assert why.startswith(f'environment: FAYD_LLM_MODEL_PATH="{broken}": cannot load it: ')
    assert "no GGUF header" in why
    assert "llm" not in engines.problems and engines.llm is not None  # the default runs
    assert engines.files["llm"] != str(broken) and "llm" not in engines.own
    assert f"{why}; the default llm model is used instead" in caplog.text
