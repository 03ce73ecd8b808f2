"""Loads the models once, before the daemon says it is ready, and hands each part the ones
it uses (the agent: ASR, TTS, LLM; the devices: VAD, wake word; memory: the embedder). A
missing or broken default model is reported (file + install command) and the daemon carries
on with what still works; a model of the user's own (``llm.model_path``, ``speech.*_model``,
a wake-word file) that cannot be loaded stops the start with its setting named: the user
asked for that model, and replies saying it "is not installed" would hide the mistake."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from fayd.agent import AgentEngines, prompt_prefix
from fayd.config import Config
from fayd.devices.ports import VoiceModels
from fayd.embedding import EmbedderLike
from fayd.errors import ConfigError, FaydError, ModelError
from fayd.llm import ChatLlm
from fayd.llm.local import LocalLlm
from fayd.models import check, resolve
from fayd.models.user_files import value
from fayd.speech import Asr, Tts, WakeDetector

log = logging.getLogger(__name__)
#: In the state's cache folder: the LLM's read prompt prefix (fayd.llm.prefix_file).
LLM_PREFIX_FILE = "llm-prefix.bin"
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

    def for_agent(self) -> AgentEngines:
        return AgentEngines(asr=self.asr, tts=self.tts, llm=self.llm)

    def for_devices(self) -> VoiceModels:
        return VoiceModels(vad_path=self.vad_path, wake=self.wake)


def load_engines(cfg: Config) -> Engines:
    """Blocking: call it with asyncio.to_thread. Each role is loaded independently."""
    engines = Engines()
    speech, llm = cfg.speech, cfg.llm
    began = time.monotonic()
    seconds: dict[str, float] = {}  # per role, for the log: a slow start says where

    def attempt(role: str, key: str, load: Callable[[dict[str, Path]], T]) -> T | None:
        started = time.monotonic()
        try:
            return load_checked(role, key, load)
        finally:
            seconds[role] = time.monotonic() - started

    def load_checked(role: str, key: str, load: Callable[[dict[str, Path]], T]) -> T | None:
        override = value(cfg, key) if key else ""
        try:
            if not override:  # a default model: its sha256 must match the manifest
                verified = check(role, verify_sha=True, cache_dir=cfg.state_dir / "cache")
                if not verified.ok:
                    raise ModelError(
                        f"{role} model {verified.path}: {verified.status} ({verified.detail});"
                        f" reinstall it with: {verified.install_hint}"
                    )
            model = resolve(role, override or None)
            engines.files[role] = str(next(iter(model.files.values())))
            return load(model.files)
        except FaydError as exc:
            if override:
                raise ConfigError(f"{cfg.setting(key)}: {_one_line(exc)}") from exc
            engines.problems[role] = str(exc)
        except Exception as exc:  # a broken file: say which, keep the rest working
            if override:
                raise ConfigError(
                    f"{cfg.setting(key)}: cannot load it: {type(exc).__name__}: {exc}"
                ) from exc
            engines.problems[role] = f"{role} model failed to load: {type(exc).__name__}: {exc}"
        log.error("%s", engines.problems[role])
        return None

    def load_vad(files: dict[str, Path]) -> Path:
        from fayd.speech.vad import validate_vad_file

        path = files["model"]
        if speech.vad_model:  # a user's own file: sherpa-onnx would abort on a bad one
            validate_vad_file(path)
        # Imported now (tens of ms, more from a cold disk), not at a device's first audio.
        import sherpa_onnx  # noqa: F401

        return path

    def load_asr(files: dict[str, Path]) -> Asr:
        if speech.asr_engine == "sherpa":
            from fayd.speech.asr_sherpa import SherpaAsr

            return SherpaAsr(
                files["model"], speech.asr_kind, speech.asr_language, speech.asr_threads
            )
        from fayd.speech.asr import WhisperAsr

        language = None if speech.asr_language in ("", "auto") else speech.asr_language
        return WhisperAsr(files["model"], language, speech.asr_threads)

    def load_tts(files: dict[str, Path]) -> Tts:
        config = Path(speech.tts_config) if speech.tts_config else files.get("config")
        if speech.tts_engine == "sherpa":
            from fayd.speech.tts_sherpa import SherpaTts

            return SherpaTts(files["model"], config, cache_dir=cfg.state_dir / "cache" / "tts")
        from fayd.speech.tts import PiperTts

        return PiperTts(files["model"], config)

    def load_embedder(files: dict[str, Path]) -> EmbedderLike:
        from fayd.embedding import Embedder

        return Embedder(files["model"], files["tokenizer"], threads=1)

    def load_llm(files: dict[str, Path]) -> ChatLlm:
        from fayd.llm.local import LocalLlm

        return LocalLlm(files["model"], n_ctx=llm.n_ctx, threads=llm.threads)

    engines.vad_path = attempt("vad", "speech.vad_model", load_vad)
    engines.asr = attempt("asr", "speech.asr_model", load_asr)
    engines.tts = attempt("tts", "speech.tts_model", load_tts)
    if llm.url:
        engines.llm = remote_llm(cfg, engines)
    else:
        engines.llm = attempt("llm", "llm.model_path", load_llm)
    engines.embedder = attempt("embed", "", load_embedder)
    if speech.wake_word:
        engines.wake = wake_factory(cfg, engines)
    started = time.monotonic()
    warm_up(engines, prompt_prefix(cfg.agent), cfg.state_dir / "cache" / LLM_PREFIX_FILE)
    seconds["warm-up"] = time.monotonic() - started
    log.info(
        "models ready in %.1f s (%s)",
        time.monotonic() - began,
        ", ".join(f"{role} {s:.1f}" for role, s in seconds.items()),
    )
    return engines


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
    from fayd.speech.wake import BUILTIN, WakeWord, validate_wake_file

    speech = cfg.speech
    options = {"threshold": speech.wake_threshold, "refractory_s": speech.wake_refractory_s}
    try:
        if speech.wake_word in BUILTIN:
            make = partial(WakeWord, speech.wake_word, **options)
        else:  # a .tflite of the user's: checked once in a child (a bad one segfaults)
            validate_wake_file(speech.wake_word)
            make = partial(WakeWord, model_path=speech.wake_word, validate=False, **options)
        make().close()  # loads: a missing package or file shows up now, not per device
        engines.files["wake"] = speech.wake_word
        return make
    except (FaydError, OSError, ValueError) as exc:
        if speech.wake_word not in BUILTIN:  # the user's own file
            raise ConfigError(f"{cfg.setting('speech.wake_word')}: {_one_line(exc)}") from exc
        engines.problems["wake"] = f"wake word {speech.wake_word!r} unavailable: {exc}"
        log.error("%s", engines.problems["wake"])
        return None


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
