from __future__ import annotations

from pathlib import Path

import pytest

from fayd.config import Config, load_config
from fayd.errors import ConfigError

EXAMPLE = Path(__file__).parents[1] / "fayd" / "fayd.example.toml"


def test_no_file_gives_embedded_defaults() -> None:
    cfg = load_config(environ={})
    assert cfg == Config()
    assert cfg.mqtt.url == "embedded"
    assert cfg.source == ""


def test_the_shipped_example_loads_and_equals_the_defaults() -> None:
    cfg = load_config(EXAMPLE, environ={})
    assert cfg.source == str(EXAMPLE)
    # The example documents every default, so it must not drift from the code.
    assert cfg == Config(source=str(EXAMPLE))


def test_file_then_environment(tmp_path: Path) -> None:
    f = tmp_path / "fayd.toml"
    f.write_text('[mqtt]\nurl = "mqtt://10.0.0.2:1884"\n[llm]\nthreads = 4\n')
    cfg = load_config(f, environ={"FAYD_LLM_THREADS": "3", "FAYD_LLM_MODEL_PATH": "/m.gguf"})
    assert cfg.mqtt.url == "mqtt://10.0.0.2:1884"
    assert cfg.llm.threads == 3
    assert cfg.llm.model_path == "/m.gguf"


def test_fayd_config_variable_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "x.toml"
    f.write_text("[api]\nport = 9999\n")
    assert load_config(environ={"FAYD_CONFIG": str(f)}).api.port == 9999


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("[mqtt]\nurll = 1\n", {}, "unknown key mqtt.urll"),
        ("[mqttt]\n", {}, "unknown section [mqttt]"),
        ("[llm]\nthreads = 'two'\n", {}, "llm.threads: expected int"),
        ("[llm]\nthreads = true\n", {}, "llm.threads: expected int"),
        ("[speech]\nvad_threshold = 'x'\n", {}, "speech.vad_threshold: expected float"),
        ("mqtt = 3\n", {}, "[mqtt] must be a table"),
        ("[mqtt\n", {}, "not valid TOML"),
        ("", {"FAYD_LLM_THREADS": "many"}, "FAYD_LLM_THREADS: expected int"),
        ("", {"FAYD_LLM_THREDS": "2"}, "unknown setting FAYD_LLM_THREDS"),
    ],
)
def test_errors_name_the_key_and_source(tmp_path: Path, text, env, message) -> None:
    f = tmp_path / "fayd.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(f, environ=env)
    assert message in str(info.value)
    if not env:
        assert str(f) in str(info.value)


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", environ={})


def test_state_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/fayd")
    assert load_config(environ={}).state_dir == Path("/var/lib/fayd")
    monkeypatch.delenv("STATE_DIRECTORY")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert load_config(environ={}).state_dir == tmp_path / "fayd"
    cfg = load_config(environ={"FAYD_PATHS_STATE_DIR": "/srv/f"})
    assert cfg.db_path == Path("/srv/f/fayd.db")


def test_lists_from_file_and_environment(tmp_path: Path) -> None:
    f = tmp_path / "fayd.toml"
    f.write_text('[serial]\npatterns = ["/dev/fayd/*", "/dev/ttyACM*"]\n')
    assert load_config(f, environ={}).serial.patterns == ("/dev/fayd/*", "/dev/ttyACM*")
    env = {"FAYD_SERIAL_PATTERNS": "/dev/ttyUSB*, /dev/ttyACM*"}
    assert load_config(environ=env).serial.patterns == ("/dev/ttyUSB*", "/dev/ttyACM*")
    f.write_text("[serial]\npatterns = [1]\n")
    with pytest.raises(ConfigError, match=r"serial\.patterns: expected a list of strings"):
        load_config(f, environ={})


def test_a_setting_is_named_with_where_it_came_from(tmp_path: Path) -> None:
    f = tmp_path / "fayd.toml"
    f.write_text("[api]\nport = 9999\n")
    cfg = load_config(f, environ={"FAYD_LLM_THREADS": "3"})
    assert cfg.setting("api.port") == f"{f}: api.port = 9999"
    assert cfg.setting("llm.threads") == "environment: FAYD_LLM_THREADS=3"
    assert cfg.setting("mqtt.url") == 'mqtt.url = "embedded" (the default)'
    assert cfg.given("api.port") and cfg.given("llm.threads") and not cfg.given("mqtt.url")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[mqtt]\nurl = "mqtt:/x"\n', 'mqtt.url = "mqtt:/x": not a URL like mqtt://host:1883'),
        ('[mqtt]\nurl = "http://h:1883"\n', "not a URL like mqtt://host:1883"),
        ('[mqtt]\nurl = "mqtt://h:1883/x"\n', "a broker URL has no path"),
        ("[mqtt]\nembedded_port = 65536\n", "mqtt.embedded_port = 65536: not a port: 1-65535"),
        ("[mqtt]\ntls_port = 1884\n", "mqtt.tls_port = 1884: the same port as"),
        ('[mqtt]\nembedded_host = "my host"\n', "not an address like 127.0.0.1"),
        ('[serial]\npatterns = ["ttyUSB*"]\n', "'ttyUSB*' is not a device path"),
        ('[llm]\nurl = "ftp://x"\n', "not a URL like http://192.168.1.20:8080"),
        ("[llm]\nthreads = 0\n", "llm.threads = 0: must be 1-256 threads"),
        ("[speech]\nvad_threshold = 1.5\n", "must be between 0 and 1"),
        ('[speech]\nasr_kind = "moonshine"\n', "must be one of 'whisper', 'paraformer'"),
        ('[speech]\nasr_engine = "sherpa"\n', "needs speech.asr_model"),
        ('[speech]\nasr_language = "chinese"\n', "not a language code like en or zh"),
        ('[speech]\nasr_language = "fr"\n', 'must be "en", "zh" or "auto"'),
        ('[speech]\nasr_language = ""\n', "fayd models install asr --choice whisper-base"),
        ('[agent]\ndefault_user = "ann\\u0007"\n', "not a user name"),
        ('[agent]\nagent_name = ""\n', "an empty name"),
        ("[paths]\ndisk_warn_mb = -1\n", "paths.disk_warn_mb = -1: must be 0-1000000 MB"),
        ("[paths]\ndisk_warn_percent = 60\n", "paths.disk_warn_percent = 60.0: must be 0-50"),
        ('[care]\ndigest_time = "8pm"\n', 'care.digest_time = "8pm": not a time like 03:30'),
        ('[care]\ndigest_times = ["dad 19:30"]\n', "'dad 19:30' is not user=HH:MM"),
        ('[care]\ndigest_times = ["dad=25:00"]\n', "'dad=25:00': not a time like 03:30"),
    ],
)
def test_wrong_values_are_refused_naming_file_and_key(tmp_path: Path, text, message) -> None:
    f = tmp_path / "fayd.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(f, environ={})
    assert str(info.value).startswith(f"{f}: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        # A byte that is not UTF-8 reaches Python as a lone surrogate (surrogateescape).
        (
            {"FAYD_MQTT_PREFIX": "fayd/\udcff"},
            'FAYD_MQTT_PREFIX="fayd/\\udcff": not UTF-8 text (the byte 0xff at character 5)',
        ),
        ({"FAYD_AGENT_PERSONA": "kind\udcc3"}, "FAYD_AGENT_PERSONA="),
        ({"FAYD_MQTT_PASSWORD": "pa\udfffss"}, "not UTF-8 text (a lone surrogate at character 2)"),
        ({"FAYD_SERIAL_PATTERNS": "/dev/a,/dev/\x00b"}, "item 2: has a NUL character"),
        ({"FAYD_LLM_MODEL_PATH": "/m" * 9000}, "characters long, over 16000"),
        ({"FAYD_LLM_THREADS": "-3"}, "FAYD_LLM_THREADS=-3: must be 1-256 threads"),
        ({"FAYD_SPEECH_ASR_THREADS": "4096"}, "must be 1-256 threads"),
        ({"FAYD_LLM_MAX_TOKENS": "0"}, "FAYD_LLM_MAX_TOKENS=0: must be at least 1"),
        ({"FAYD_LLM_MAX_TOKENS": "4096"}, "must be less than llm.n_ctx (2048)"),
        ({"FAYD_MQTT_EMBEDDED_PORT": "70000"}, "=70000: not a port: 1-65535"),
        ({"FAYD_LLM_TIMEOUT_S": "inf"}, "FAYD_LLM_TIMEOUT_S=Infinity: must be a finite number"),
        ({"FAYD_SPEECH_VAD_THRESHOLD": "nan"}, "must be a finite number"),
        ({"FAYD_LLM_TEMPERATURE": "40"}, "must be 0-5"),
    ],
)
def test_every_string_and_number_is_checked_naming_the_variable(env, message) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(environ=env)
    text = str(info.value)
    assert text.startswith(f"environment: {next(iter(env))}="), text
    assert message in text
    text.encode("utf-8")  # the message itself can be written anywhere


def test_the_asr_kinds_are_the_sherpa_backends() -> None:
    from fayd.config_check import ASR_KINDS
    from fayd.speech.asr_sherpa import KINDS

    assert set(ASR_KINDS) == set(KINDS)
