"""Settings: one TOML file read once into frozen dataclasses, one per subsystem.

Precedence: environment (``FAYD_<SECTION>_<KEY>``, e.g. ``FAYD_MQTT_URL``) over the file over the
defaults below. Every error names the key and where the value came from.

With no file at all fayd runs on these embedded defaults: a private mosquitto on loopback, the
default models from ``models/manifest.toml``, state under ``$STATE_DIRECTORY`` (systemd's
``StateDirectory=``, i.e. ``/var/lib/fayd``) or ``$XDG_STATE_HOME/fayd`` in development.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fayd.config_check import surrogate_at, validate
from fayd.errors import ConfigError
from fayd.logwords import hide_secrets

#: Settings whose value an error message does not repeat.
SECRET_SETTINGS = frozenset({"mqtt.password", "llm.api_key"})


@dataclass(frozen=True)
class PathsConfig:
    """Where fayd keeps its state."""

    #: Folder for the database and runtime files; empty = $STATE_DIRECTORY or XDG state home.
    state_dir: str = ""
    #: ``fayd status`` and an alert to the devices say the disk is nearly full when the state
    #: folder's disk has less free than this (MB) or than disk_warn_percent of its size.
    disk_warn_mb: int = 200
    disk_warn_percent: float = 2.0
    #: MB kept free in a reserve file, given up when the disk fills so a care alert can
    #: still be written (fayd.store.reserve); 0: none.
    disk_reserve_mb: int = 8


@dataclass(frozen=True)
class MqttConfig:
    """The device link over MQTT."""

    #: ``mqtt://host:port`` of an existing broker, or ``embedded`` for fayd's private mosquitto.
    url: str = "embedded"
    username: str = ""
    password: str = ""
    #: Topic prefix; devices use ``<prefix>/dev/<id>/up/<kind>`` (see docs/protocol.md).
    prefix: str = "fayd/v1"
    keepalive_s: int = 30
    #: Embedded broker: address to listen on. Set 0.0.0.0 to let Wi-Fi devices on the LAN in.
    embedded_host: str = "127.0.0.1"
    #: Embedded broker port (1884: Debian's own mosquitto.service takes 1883); 0 = any
    #: free port (written to the runtime file).
    embedded_port: int = 1884
    #: Embedded broker: a TLS listener for devices on this port (0 = none; 8883 is MQTT's
    #: TLS port). fayd makes a certificate authority of its own for it (docs/security.md);
    #: the plain listener then serves loopback only.
    tls_port: int = 0
    #: Host names and addresses devices use to reach the box, written into the broker's
    #: certificate; empty = localhost, 127.0.0.1, this host's name and name.local.
    tls_names: tuple[str, ...] = ()
    #: Path of the mosquitto binary for the embedded broker.
    mosquitto_bin: str = "mosquitto"
    #: Frames waiting to be published before new ones are dropped with a warning.
    queue_size: int = 4096
    #: A broker that is not fayd's own (``url``): answer only the devices added on this box
    #: (``fayd devices add``: their key is in its database), so that several boxes can share
    #: one household broker (docs/several-boxes.md). false: any device on ``prefix``.
    only_added: bool = True


@dataclass(frozen=True)
class SerialConfig:
    """Devices on USB/UART serial ports (the same frames as MQTT; docs/protocol.md)."""

    enabled: bool = True
    #: Ports to watch: the udev rules' /dev/fayd/… names, and the kernel's USB serial nodes
    #: so a board works before the rules are installed. fayd opens every matching port (and
    #: answers what is not a board's hello with an error frame): set ("/dev/fayd/*",) when
    #: other serial gadgets (a Zigbee stick, a GPS) are plugged in.
    patterns: tuple[str, ...] = ("/dev/fayd/*", "/dev/ttyUSB*", "/dev/ttyACM*")
    baudrate: int = 921600
    #: How often the ports are looked for (hot-plug), seconds. 2 s: the other pollers' period,
    #: so an idle daemon wakes once every 2 s (a board is found within 2 s of plugging in).
    poll_s: float = 2.0
    queue_size: int = 256
    max_backoff_s: float = 5.0


@dataclass(frozen=True)
class ApiConfig:
    """The local control API used by the CLI (``fayd status``, ``fayd say``)."""

    host: str = "127.0.0.1"
    #: 0 picks a free port (written to the runtime file).
    port: int = 8731
    #: Other names the box answers to when ``host`` is on the LAN (e.g. "fayd.local",
    #: "192.168.1.20"): a request whose Host is none of these nor loopback is refused.
    names: tuple[str, ...] = ()
    #: Pages served elsewhere that may open a door with the token (a Fay avatar frontend:
    #: "http://192.168.1.30:8080"); any other site's page is refused.
    origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class LlmConfig:
    """The language model."""

    #: A GGUF file; empty = the manifest's default (SmolLM2-135M-Instruct).
    model_path: str = ""
    #: An OpenAI-compatible server instead of the local model (e.g. llama.cpp's server on
    #: your LAN: http://192.168.1.20:8080). Empty = the local model.
    url: str = ""
    api_key: str = ""
    #: The model name the server expects, if it serves several.
    remote_model: str = ""
    #: Fay's dual-model mode: an OpenAI-compatible server on the LAN that runs the tool loop
    #: (fayd.agent.tools) while the model above writes the reply; empty = the same model.
    tools_url: str = ""
    #: Longest wait for the server (connect, first token, between tokens), seconds.
    timeout_s: float = 30.0
    n_ctx: int = 2048
    threads: int = 2
    max_tokens: int = 96
    temperature: float = 0.6
    #: llama.cpp's repeat penalty on recent tokens (1.0 = off, not sent to a server): a small
    #: model left alone goes round in loops.
    repeat_penalty: float = 1.15
    #: Languages the model can talk in, comma separated ("en,zh"); empty = English for the
    #: default model (SmolLM2-135M writes no sense in Chinese), any for a model of yours or
    #: a LAN server. A turn in another language hears a listening line, never the model.
    languages: str = ""


@dataclass(frozen=True)
class SpeechConfig:
    """VAD, ASR and TTS."""

    #: "whisper" (faster-whisper, the default model) or "sherpa" (a sherpa-onnx model of
    #: yours in asr_model: whisper, paraformer, sense_voice or zipformer, see asr_kind).
    asr_engine: str = "whisper"
    asr_kind: str = "whisper"
    #: "piper" or "sherpa" (the same Piper voice through sherpa-onnx).
    tts_engine: str = "piper"
    #: Wake word for devices that want one: a bundled name (hey_jarvis, alexa, hey_mycroft,
    #: hey_rhasspy, okay_nabu) or a .tflite file; empty = no wake word.
    wake_word: str = ""
    wake_threshold: float = 0.5
    wake_refractory_s: float = 2.0
    #: Override files/folders; empty = the manifest's defaults.
    vad_model: str = ""
    asr_model: str = ""
    tts_model: str = ""
    tts_config: str = ""
    #: "en", "zh" or "auto" (en or zh per utterance); a device's ``language`` setting wins.
    #: Not "en": Whisper base (the whisper-base choice) unless asr_model is set.
    asr_language: str = "en"
    asr_threads: int = 2
    #: Seconds of audio Whisper's encoder reads for a short utterance (10-30): under 30 it
    #: hears faster and less well (docs/endpointing.md).
    asr_window_s: float = 30
    #: Silence after speech that ends an utterance. Long enough that slow, pausing
    #: speakers (the elderly) are not cut off mid-sentence. With semantic endpointing, the
    #: wait when the words so far do not say whether the speaker is done.
    vad_min_silence_ms: int = 700
    #: "semantic": at each short pause, what was said so far decides (docs/endpointing.md):
    #: a finished request is answered after ``endpoint_pause_ms``, an unfinished sentence
    #: is waited for up to ``endpoint_longest_ms``. "fixed": every utterance ends after
    #: ``vad_min_silence_ms`` of silence.
    endpointing: str = "semantic"
    endpoint_pause_ms: int = 200
    endpoint_longest_ms: int = 1500
    vad_threshold: float = 0.5
    #: Stop speaking when the user talks over fayd. Needs devices that do not hear their
    #: own voice (echo cancellation); a device can opt out with caps {"barge_in": false}.
    barge_in: bool = True
    #: Silero probability that counts as the user starting to speak, for barge-in.
    barge_in_threshold: float = 0.6


@dataclass(frozen=True)
class AgentConfig:
    """The conversation."""

    agent_name: str = "Fay"
    default_user: str = "User"
    persona: str = (
        "You are Fay, a warm companion living in a small box at home, talking with an older "
        "person. You answer in one or two short, friendly sentences that are easy to say out "
        "loud. You are not connected to the internet: you cannot know the weather, the news "
        "or the time, and you say so honestly. Never make up facts, names, numbers or "
        "memories."
    )
    #: Example exchanges of warm, brief answers after the persona (few-shot:
    #: fayd.agent.guard.EXAMPLES); read once, then reused from llama.cpp's cache.
    few_shot: bool = True
    #: A chit-chat reply stops after this many sentences (the model is stopped there).
    max_sentences: int = 2
    #: … or this many words (CJK: characters), whichever comes first.
    max_words: int = 35
    #: An empty, looping, echoing or malformed reply is generated again this many times
    #: (other sampling, without the history); then a short honest line is said instead
    #: ("Tell me more?").
    reply_retries: int = 1
    #: Earlier exchanges of the same conversation sent to the model.
    history_turns: int = 4
    #: Most tokens of memory (rules, portrait, facts, recalled memories…) in each prompt.
    #: More remembers more but the model reads it before every answer (~0.5 ms a token on
    #: 2 cores with the default model).
    memory_tokens: int = 256
    #: After every this many turns of a conversation the model notes what it learnt in the
    #: MemoryFS documents (personas, events, digest), in the background; 0 = never.
    extract_every_turns: int = 6
    #: Your own action_rules.csv (seed 000's format); empty = the one fayd ships.
    action_rules: str = ""
    #: The household's time zone for the clock and times said aloud (e.g. Europe/London);
    #: empty = the system's.
    timezone: str = ""
    #: A qa.csv in Fay's format (phrases → fixed answer and/or skill:NAME); empty = the one
    #: fayd ships (docs/understanding.md).
    qa_csv: str = ""
    #: More example phrases for the intents (the form of fayd/agent/language/intents.toml).
    intents: str = ""


@dataclass(frozen=True)
class BackupConfig:
    """The nightly backup of the database into <state>/backups (README, "Backups")."""

    #: When, as HH:MM local time (agent.timezone, else the system's).
    time: str = "03:30"
    #: How many daily backups are kept (1-365); the oldest beyond that are removed once a
    #: new one has passed its check.
    keep_days: int = 7


@dataclass(frozen=True)
class HomeAssistantConfig:
    """Home Assistant MQTT discovery (docs/homeassistant.md): fayd's devices, readings,
    people's last activity and open alerts appear in Home Assistant with no YAML."""

    #: Off by default. On: fayd publishes discovery and states, and (embedded broker) makes
    #: Home Assistant a broker account (``fayd homeassistant`` shows its login).
    enabled: bool = False
    #: Home Assistant's discovery prefix (its MQTT integration's setting).
    discovery_prefix: str = "homeassistant"
    #: The caregiver whose Home Assistant login presses *Acknowledge*: an alert is then
    #: taken "by" them, and only if they are on its ladder. Empty: Home Assistant is the
    #: household's administration, as the CLI with the token is (docs/security.md).
    person: str = ""


@dataclass(frozen=True)
class RemindersConfig:
    """Reminders, timers and medication check-ins (docs/reminders.md)."""

    #: A medication reminder's "Did you take them?" is asked again after this many minutes
    #: without an answer …
    checkin_after_min: int = 10
    #: … and after this many questions in all, an ``unconfirmed_medication`` care event.
    checkin_tries: int = 2
    #: A timer's alarm is said again every this many seconds until the user speaks …
    alarm_repeat_s: int = 30
    #: … for at most this many seconds.
    alarm_max_s: int = 300


@dataclass(frozen=True)
class CareConfig:
    """Eldercare (docs/care.md): the daily digest to caregivers."""

    #: When each person's daily digest goes to their caregivers, HH:MM local time
    #: (agent.timezone); empty = no digest is sent (``fayd care digest`` still shows it).
    digest_time: str = ""
    #: A person's own time, or "off": e.g. ["dad=19:30", "ben=off"].
    digest_times: tuple[str, ...] = ()


@dataclass(frozen=True)
class LogConfig:
    """The daemon's log (docs/security.md, "Logs")."""

    level: str = "INFO"
    #: People's words (what they said, replies, memories, reminders, model prompts and
    #: output) in DEBUG lines; off: a turn is logged by its id, intent, lengths and timings.
    words: bool = False


@dataclass(frozen=True)
class ToolsConfig:
    """What the model may look up before it answers (docs/tools.md): the household's
    documents, its own MCP servers, calls made before every turn (Fay's prestart tools)."""

    #: "auto": the model may call tools when there are any the router does not already
    #: cover (documents in the knowledge base, an MCP server); "off": never.
    loop: str = "auto"
    #: At most this many tool calls in a turn (Fay's 30).
    steps: int = 30
    #: Longest wait for one tool call, seconds.
    timeout_s: float = 10.0
    #: A tool's result is cut to this many characters before the model reads it.
    result_chars: int = 1500
    #: Calls made before the model answers, "{{question}}" and "{{user}}" filled in; each a
    #: table: tool = "kb_search", args = { query = "{{question}}" }, include_history = false.
    prestart: tuple[dict[str, Any], ...] = ()
    #: A folder of the household's documents (text, Markdown, HTML, PDF) kept in the
    #: knowledge base; empty: only what ``fayd kb add`` added.
    kb_folder: str = ""
    #: The household's MCP servers (docs/mcp-client.md), one table each.
    mcp_servers: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Config:
    """All of fayd's settings."""

    paths: PathsConfig = field(default_factory=PathsConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)
    serial: SerialConfig = field(default_factory=SerialConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    speech: SpeechConfig = field(default_factory=SpeechConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    backup: BackupConfig = field(default_factory=BackupConfig)
    homeassistant: HomeAssistantConfig = field(default_factory=HomeAssistantConfig)
    reminders: RemindersConfig = field(default_factory=RemindersConfig)
    care: CareConfig = field(default_factory=CareConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    log: LogConfig = field(default_factory=LogConfig)
    #: The file these settings came from, if any.
    source: str = ""
    #: Where each setting that is not a default came from: "section.key" → the file's path
    #: or the environment variable (FAYD_…). Not part of equality: same values, same config.
    origins: dict[str, str] = field(default_factory=dict, compare=False)

    def given(self, key: str) -> bool:
        """The user set ``key`` ("section.key"), in the file or the environment."""
        return key in self.origins

    def setting(self, key: str) -> str:
        """A setting as an error message names it: where it came from, key and value,
        e.g. ``/etc/fayd/fayd.toml: mqtt.url = "mqtt:/x"``."""
        section, name = key.split(".", 1)
        raw = getattr(getattr(self, section), name)
        value = json.dumps(raw, ensure_ascii=False)
        if surrogate_at(value) is not None:  # a byte that is not UTF-8: shown as its escape
            value = json.dumps(raw)
        # The message goes to the terminal and the journal: a secret is not repeated.
        value = '"…"' if key in SECRET_SETTINGS and raw else hide_secrets(value)
        origin = self.origins.get(key)
        if origin is None:
            return f"{key} = {value} (the default)"
        if origin.startswith("FAYD_"):
            return f"environment: {origin}={value}"
        return f"{origin}: {key} = {value}"

    @property
    def state_dir(self) -> Path:
        if self.paths.state_dir:
            return Path(self.paths.state_dir).expanduser()
        if os.environ.get("STATE_DIRECTORY"):
            # systemd may pass several colon-separated folders; the first is ours.
            return Path(os.environ["STATE_DIRECTORY"].split(":")[0])
        xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(xdg) / "fayd"

    @property
    def db_path(self) -> Path:
        return self.state_dir / "fayd.db"

    @property
    def runtime_path(self) -> Path:
        """Where the running daemon writes its pid, API and broker addresses."""
        return self.state_dir / "runtime.json"


def _sections() -> dict[str, type]:
    hints = typing.get_type_hints(Config)
    fields = dataclasses.fields(Config)
    return {f.name: hints[f.name] for f in fields if dataclasses.is_dataclass(hints[f.name])}


def _resolved_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


_BOOLS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


def _coerce(value: Any, typ: Any, where: str) -> Any:
    """Turn a TOML or environment value into the field's type, or say which key is wrong."""
    is_bool = isinstance(value, bool)
    if typ is bool and is_bool:
        return value
    if typ is int and isinstance(value, int) and not is_bool:
        return value
    if typ is float and isinstance(value, int | float) and not is_bool:
        return float(value)
    if typ is str and isinstance(value, str):
        return value
    if typ == tuple[str, ...]:
        if isinstance(value, str):  # from the environment: comma-separated
            return tuple(part.strip() for part in value.split(",") if part.strip())
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
    if typ == tuple[dict[str, Any], ...]:
        if isinstance(value, str):  # from the environment: JSON
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: expected a JSON list of tables: {exc}") from exc
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            return tuple(value)
        raise ConfigError(f"{where}: expected a list of tables ([[...]]), got {value!r}")
    if isinstance(value, str):  # environment values are always strings
        if typ is bool and value.lower() in _BOOLS:
            return _BOOLS[value.lower()]
        if typ in (int, float):
            try:
                return typ(value)
            except ValueError:
                pass
    raise ConfigError(f"{where}: expected {typ.__name__}, got {value!r}")


def _env_overrides(environ: dict[str, str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    sections = _sections()
    for name, value in environ.items():
        if not name.startswith("FAYD_") or name in ("FAYD_CONFIG",):
            continue
        rest = name[len("FAYD_") :].lower()
        section = next((s for s in sections if rest.startswith(s + "_")), None)
        if section is None:
            continue
        found.setdefault(section, {})[rest[len(section) + 1 :]] = value
    return found


def load_config(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """Read settings from ``path`` (or ``$FAYD_CONFIG``), then the environment.

    A missing explicit file is an error; no file at all means the embedded defaults.
    """
    environ = dict(os.environ if environ is None else environ)
    path = path or environ.get("FAYD_CONFIG") or None
    data: dict[str, Any] = {}
    if path:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"config file not found: {path}") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    origin = str(path) if path else "defaults"
    sections = _sections()
    built: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key in data:
        if key not in sections:
            raise ConfigError(f"{origin}: unknown section [{key}] (known: {', '.join(sections)})")
    env = _env_overrides(environ)
    for section, cls in sections.items():
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{origin}: [{section}] must be a table")
        fields = _resolved_types(cls)
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in fields:
                raise ConfigError(
                    f"{origin}: unknown key {section}.{key} (known: {', '.join(fields)})"
                )
            values[key] = _coerce(value, fields[key], f"{origin}: {section}.{key}")
            origins[f"{section}.{key}"] = origin
        for key, value in env.get(section, {}).items():
            env_name = f"FAYD_{section.upper()}_{key.upper()}"
            if key not in fields:
                raise ConfigError(f"environment: unknown setting {env_name}")
            values[key] = _coerce(value, fields[key], f"environment: {env_name}")
            origins[f"{section}.{key}"] = env_name
        built[section] = cls(**values)
    cfg = Config(**built, source=str(path) if path else "", origins=origins)
    validate(cfg)  # every value makes sense: a wrong one stops here, named
    return cfg
