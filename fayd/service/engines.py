"""Loads the models once, before the daemon says it is ready, and hands each part the ones
it uses (the agent: ASR, TTS, LLM; the devices: VAD, wake word; memory: the embedder). A
missing or broken default model is reported (file + install command) and the daemon carries
on with what still works. A model of the user's own (``llm.model_path``, ``speech.*_model``,
a wake-word file) that is there but cannot be loaded (corrupt, cut short, not that kind of
model) is an error in the log naming the setting and the path, and the role falls back to
the manifest's default model, said by ``fayd status`` (``models.<role>.fallback``): a
household keeps its companion while the file is fixed, rather than a daemon that stops for
good (exit 78 is never restarted). A path that is not there at all still stops the start
(fayd.service.preflight): that is a typo in the settings, not a broken file."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from fayd.agent import AgentEngines, prompt_prefix
from fayd.config import Config
from fayd.devices.ports import VoiceModels
from fayd.embedding import EmbedderLike
from fayd.errors import ConfigError, FaydError, ModelError, ModelMissing
from fayd.llm import ChatLlm
from fayd.llm.local import LocalLlm
from fayd.models import MISSING, check, resolve
from fayd.models.user_files import value
from fayd.service.heap import trim
from fayd.speech import Asr, Tts, WakeDetector
from fayd.speech.voices import ScriptVoices

log = logging.getLogger(__name__)
#: In the state's cache folder: the LLM's read prompt prefix (fayd.llm.prefix_file).
LLM_PREFIX_FILE = "llm-prefix.bin"
#: The manifest's default wake word, taken when a wake-word file of one's own is broken.
DEFAULT_WAKE = "hey_jarvis"
T = TypeVar("T")


@dataclass
class Engines:
    """Every model fayd loaded (None: missing or broken, see ``problems``)."""

    vad_path: Path | None = None
    asr: Asr | None = None
    tts: Tts | None = None
    llm: ChatLlm | None = None
    embedder: EmbedderLike | None = None
    #: Makes one wake-word detector per device (they hold per-stream state); None = off.
    wake: Callable[..., WakeDetector] | None = None
    #: role → what is wrong with it (missing file and how to install it, load error).
    problems: dict[str, str] = field(default_factory=dict)
    #: role → the model file or folder in use.
    files: dict[str, str] = field(default_factory=dict)
    #: role → why the user's own model is not used and the default is, instead.
    fallbacks: dict[str, str] = field(default_factory=dict)
    #: role → the setting that names the user's own model in use (not the default).
    own: dict[str, str] = field(default_factory=dict)

    def for_agent(self) -> AgentEngines:
        return AgentEngines(asr=self.asr, tts=self.tts, llm=self.llm)

    def for_devices(self) -> VoiceModels:
        return VoiceModels(vad_path=self.vad_path, wake=self.wake)


def build_model(cfg: Config, role: str, files: dict[str, Path], own: bool) -> Any:
    """The engine of ``role`` over ``files``, as the daemon runs it (VAD: its path, since
    each device makes its own). ``own``: the user's model, with their engine settings; else
    the manifest's default, with its own engine. Blocking; raises what the runtime raises.
    Also run in a child by ``fayd models check --verify`` (fayd.service.model_verify)."""
    speech = cfg.speech
    if role == "vad":
        from fayd.speech.vad import validate_vad_file

        path = files["model"]
        if own:  # a user's own file: sherpa-onnx would abort on a bad one
            validate_vad_file(path)
        # Imported now (tens of ms, more from a cold disk), not at a device's first audio.
        import sherpa_onnx  # noqa: F401

        return path
    if role == "asr":
        if own and speech.asr_engine == "sherpa":
            from fayd.speech.asr_sherpa import SherpaAsr

            return SherpaAsr(
                files["model"], speech.asr_kind, speech.asr_language, speech.asr_threads
            )
        from fayd.speech.asr_languages import language_asr

        # tiny.en for English, Whisper base (the whisper-base choice) for Chinese and for
        # telling the two apart, each loaded when first needed (speech.asr_language).
        return language_asr(cfg, None if own else files["model"]).load()
    if role == "tts":
        config = Path(speech.tts_config) if own and speech.tts_config else files.get("config")
        if speech.tts_engine == "sherpa":  # it speaks the default voice too
            from fayd.speech.tts_sherpa import SherpaTts

            return SherpaTts(files["model"], config, cache_dir=cfg.state_dir / "cache" / "tts")
        from fayd.speech.tts import PiperTts

        return PiperTts(files["model"], config)
    if role == "tts_zh":
        from fayd.speech.tts_zh import BakerTts

        return BakerTts(files)
    if role == "embed":
        from fayd.embedding import Embedder

        return Embedder(files["model"], files["tokenizer"], threads=1)
    if role == "llm":
        if own:  # llama.cpp reads a damaged file's header as it comes: checked first
            from fayd.models.gguf import check_gguf

            check_gguf(files["model"])
        return LocalLlm(files["model"], n_ctx=cfg.llm.n_ctx, threads=cfg.llm.threads)
    raise ValueError(f"no engine for the {role} model")


def load_engines(cfg: Config) -> Engines:
    """Blocking: call it with asyncio.to_thread. Each role is loaded independently."""
    engines = Engines()
    began = time.monotonic()
    seconds: dict[str, float] = {}  # per role, for the log: a slow start says where

    def attempt(role: str, key: str) -> Any:
        started = time.monotonic()
        try:
            override = value(cfg, key) if key else ""
            if override:
                found = load_own(cfg, engines, role, key, override)
                if role not in engines.fallbacks:
                    return found
            return load_default(cfg, engines, role)
        finally:
            trim()  # a loader's freed buffers back before the next model loads (heap.py)
            seconds[role] = time.monotonic() - started

    engines.vad_path = attempt("vad", "speech.vad_model")
    engines.asr = attempt("asr", "speech.asr_model")
    if engines.asr is not None and cfg.speech.asr_language != "en" and "asr" not in engines.own:
        from fayd.speech.asr_languages import multilingual_dir

        # What hears the household's speech: Whisper base (tiny.en only for "en" devices).
        engines.files["asr"] = str(multilingual_dir(cfg.state_dir))
    engines.tts = attempt("tts", "speech.tts_model")
    if engines.tts is not None:  # one reply, the right voice: Chinese runs by the Chinese one
        engines.tts = ScriptVoices(engines.tts, chinese_voice(cfg, engines))
    if cfg.llm.url:
        engines.llm = remote_llm(cfg, engines)
    else:
        engines.llm = attempt("llm", "llm.model_path")
    engines.embedder = attempt("embed", "")
    if cfg.speech.wake_word:
        engines.wake = wake_factory(cfg, engines)
    started = time.monotonic()
    warm_up(engines, prompt_prefix(cfg.agent), cfg.state_dir / "cache" / LLM_PREFIX_FILE)
    trim()
    seconds["warm-up"] = time.monotonic() - started
    log.info(
        "models ready in %.1f s (%s)",
        time.monotonic() - began,
        ", ".join(f"{role} {s:.1f}" for role, s in seconds.items()),
    )
    return engines


def chinese_voice(cfg: Config, engines: Engines) -> Callable[[], Tts] | None:
    """The voice of Chinese replies: the ``tts_zh`` model when it is installed, else
    espeak-ng's Mandarin (robotic, but never English Piper reading "Chinese letter" for
    each character). Loaded now when the household speaks Chinese (``speech.asr_language``
    zh or auto); else only at the first Chinese reply, so English homes never pay for it."""
    from fayd.speech.tts_espeak import EspeakTts

    found = check("tts_zh")  # sizes only: BakerTts checks each file's sha256 as it reads it
    make: Callable[[], Tts] = EspeakTts
    if found.ok:
        engines.files["tts_zh"] = found.path
        make = partial(build_model, cfg, "tts_zh", resolve("tts_zh").files, False)
    else:
        engines.files["tts_zh"] = f"espeak-ng cmn (the Chinese voice: {found.install_hint})"
        if found.problem:  # installed, but damaged
            engines.problems["tts_zh"] = f"{found.path}: {found.status} ({found.detail})"
    if cfg.speech.asr_language not in ("zh", "auto"):
        return make
    try:
        voice = make()
        b"".join(voice.synthesize("好。"))  # pages in and sets up its graphs before READY
        return lambda: voice
    except Exception as exc:  # said, and the floor instead
        engines.problems["tts_zh"] = f"the Chinese voice failed to load: {_one_line(exc)}"
        log.error("%s", engines.problems["tts_zh"])
        return EspeakTts if make is not EspeakTts else None


def load_own(cfg: Config, engines: Engines, role: str, key: str, path: str) -> Any:
    """The user's own model of ``role``; None with ``engines.fallbacks[role]`` set when it
    does not load (the caller then loads the default)."""
    try:
        model = resolve(role, path)
    except ModelMissing as exc:  # a path that is not there: the settings' mistake
        raise ConfigError(f"{cfg.setting(key)}: {_one_line(exc)}") from exc
    try:
        engines.files[role] = str(next(iter(model.files.values())))
        found = build_model(cfg, role, model.files, own=True)
        engines.own[role] = key
        return found
    except Exception as exc:  # a broken file of any kind: said, and the default instead
        why = _one_line(exc) if isinstance(exc, FaydError) else f"{type(exc).__name__}: {exc}"
        engines.fallbacks[role] = f"{cfg.setting(key)}: cannot load it: {why}"
        log.error("%s; the default %s model is used instead", engines.fallbacks[role], role)
        engines.files.pop(role, None)
        return None


def load_default(cfg: Config, engines: Engines, role: str) -> Any:
    """The manifest's model of ``role``, whose sha256 must match; None with
    ``engines.problems[role]`` set when it is missing or broken."""
    try:
        verified = check(role, verify_sha=True, cache_dir=cfg.state_dir / "cache")
        if not verified.ok:
            if verified.status != MISSING:  # there, but broken: status names the file
                engines.files[role] = verified.path
            raise ModelError(
                f"{role} model {verified.path}: {verified.status} ({verified.detail});"
                f" reinstall it with: {verified.install_hint}"
            )
        model = resolve(role)
        engines.files[role] = str(next(iter(model.files.values())))
        return build_model(cfg, role, model.files, own=False)
    except FaydError as exc:
        engines.problems[role] = str(exc)
    except Exception as exc:  # a broken file: say which, keep the rest working
        engines.problems[role] = f"{role} model failed to load: {type(exc).__name__}: {exc}"
    if role in engines.fallbacks:
        engines.problems[role] = (
            f"{engines.fallbacks[role]}; nor the default: {engines.problems[role]}"
        )
    log.error("%s", engines.problems[role])
    return None


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def remote_llm(cfg: Config, engines: Engines) -> ChatLlm:
    """A server on the LAN: kept even when it does not answer yet (it may start later)."""
    from fayd.llm.remote import RemoteLlm

    llm = cfg.llm
    client = RemoteLlm(
        llm.url, model=llm.remote_model, api_key=llm.api_key, timeout_s=llm.timeout_s
    )
    engines.files["llm"] = llm.url
    try:
        client.models()
    except FaydError as exc:
        engines.problems["llm"] = f"LLM server {llm.url} not answering yet: {exc}"
        log.warning("%s", engines.problems["llm"])
    return client


def wake_factory(cfg: Config, engines: Engines) -> Callable[..., WakeDetector] | None:
    from fayd.speech.wake import BUILTIN

    word = cfg.speech.wake_word
    if word not in BUILTIN:  # a .tflite of the user's own
        if not Path(word).expanduser().is_file():  # a typo: the settings' mistake
            raise ConfigError(f"{cfg.setting('speech.wake_word')}: no such file")
        try:
            return _wake_maker(cfg, engines, word)
        except (FaydError, OSError, ValueError) as exc:
            key = "speech.wake_word"
            engines.fallbacks["wake"] = f"{cfg.setting(key)}: cannot load it: {_one_line(exc)}"
            why = engines.fallbacks["wake"]
            log.error("%s; the default wake word %s is used instead", why, DEFAULT_WAKE)
            word = DEFAULT_WAKE
    try:
        return _wake_maker(cfg, engines, word)
    except (FaydError, OSError, ValueError) as exc:
        engines.problems["wake"] = f"wake word {word!r} unavailable: {exc}"
        log.error("%s", engines.problems["wake"])
        return None


def _wake_maker(cfg: Config, engines: Engines, word: str) -> Callable[..., WakeDetector]:
    """A maker of ``word``'s detectors (a bundled name or a .tflite path), tried once."""
    from fayd.speech.wake import BUILTIN, WakeWord, validate_wake_file

    speech = cfg.speech
    options = {"threshold": speech.wake_threshold, "refractory_s": speech.wake_refractory_s}
    if word in BUILTIN:
        make = partial(WakeWord, word, **options)
    else:  # checked once in a child (a bad one segfaults)
        validate_wake_file(word)
        make = partial(WakeWord, model_path=word, validate=False, **options)
    make().close()  # loads: a missing package or file shows up now, not per device
    engines.files["wake"] = word
    if word == speech.wake_word and word not in BUILTIN:
        engines.own["wake"] = "speech.wake_word"
    return make


def warm_up(engines: Engines, prefix: list[dict[str, str]], llm_cache: Path | None = None) -> None:
    """One tiny inference per model before READY: the first call of each pays for page-ins
    and graph set-up (seconds for the LLM), which a user's first question should not. The
    LLM is warmed with the chat's prompt prefix (persona and examples) so that it is
    already evaluated (1.8 s of the first model turn in benchmarks/voice_turn.py); the read
    prefix is kept in ``llm_cache`` and taken from there at the next start (a restart's
    recovery: fayd.llm.prefix_file)."""
    import numpy as np

    warm = [*prefix, {"role": "user", "content": "Hi"}]
    llm = engines.llm if isinstance(engines.llm, LocalLlm) and llm_cache is not None else None
    keep = llm is not None and "llm" not in engines.problems
    if keep and llm.recall_prefix(llm_cache, warm):
        log.info("LLM: the prompt's prefix is taken from %s, not read again", llm_cache)
        keep = False

    def warm_llm() -> None:
        # Also when the prefix was taken from the file: one token touches every weight.
        engines.llm.chat(warm, max_tokens=1)
        if keep:
            try:
                llm.keep_prefix(llm_cache, warm)
            except OSError as exc:  # a full disk: the next start reads the prompt again
                log.warning("LLM prefix cache not kept: %s", exc)

    jobs = {  # role: (Engines attribute, one inference)
        "asr": ("asr", lambda: engines.asr.transcribe(np.zeros(16000, dtype=np.float32))),
        "tts": ("tts", lambda: b"".join(engines.tts.synthesize("Ready."))),
        "embed": ("embedder", lambda: engines.embedder.embed(["ready"])),
        "llm": ("llm", warm_llm),
    }
    for role, (attribute, job) in jobs.items():
        if getattr(engines, attribute) is None or role in engines.problems:
            continue
        try:
            job()
        except Exception as exc:
            engines.problems[role] = f"{role} model failed its first inference: {exc}"
            log.error("%s", engines.problems[role])
            setattr(engines, attribute, None)
