"""Loads the models once, before the daemon says it is ready. A missing or broken model
is reported (file + install command) and the daemon carries on with what still works."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fayd.config import Config
from fayd.errors import FaydError, ModelError
from fayd.models import check, resolve

log = logging.getLogger(__name__)


@dataclass
class Engines:
    vad_path: Path | None = None
    asr: Any = None
    tts: Any = None
    llm: Any = None
    embedder: Any = None
    #: role → what is wrong with it (missing file and how to install it, load error).
    problems: dict[str, str] = field(default_factory=dict)
    #: role → the model file or folder in use.
    files: dict[str, str] = field(default_factory=dict)


def load_engines(cfg: Config) -> Engines:
    """Blocking: call it with asyncio.to_thread. Each role is loaded independently."""
    engines = Engines()
    speech, llm = cfg.speech, cfg.llm

    def attempt(role: str, override: str, load: Any) -> Any:
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
            engines.problems[role] = str(exc)
        except Exception as exc:  # a broken file: say which, keep the rest working
            engines.problems[role] = f"{role} model failed to load: {type(exc).__name__}: {exc}"
        log.error("%s", engines.problems[role])
        return None

    def load_vad(files: dict[str, Path]) -> Path:
        from fayd.speech.vad import validate_vad_file

        path = files["model"]
        if speech.vad_model:  # a user's own file: sherpa-onnx would abort on a bad one
            validate_vad_file(path)
        return path

    def load_asr(files: dict[str, Path]) -> Any:
        from fayd.speech.asr import WhisperAsr

        return WhisperAsr(files["model"], speech.asr_language, speech.asr_threads)

    def load_tts(files: dict[str, Path]) -> Any:
        from fayd.speech.tts import PiperTts

        config = Path(speech.tts_config) if speech.tts_config else files.get("config")
        return PiperTts(files["model"], config)

    def load_embedder(files: dict[str, Path]) -> Any:
        from fayd.llm.embed import Embedder

        return Embedder(files["model"], files["tokenizer"], threads=1)

    def load_llm(files: dict[str, Path]) -> Any:
        from fayd.llm.local import LocalLlm

        return LocalLlm(files["model"], n_ctx=llm.n_ctx, threads=llm.threads)

    engines.vad_path = attempt("vad", speech.vad_model, load_vad)
    engines.asr = attempt("asr", speech.asr_model, load_asr)
    engines.tts = attempt("tts", speech.tts_model, load_tts)
    engines.llm = attempt("llm", llm.model_path, load_llm)
    engines.embedder = attempt("embed", "", load_embedder)
    warm_up(engines, cfg.agent.persona)
    return engines


def warm_up(engines: Engines, persona: str) -> None:
    """One tiny inference per model before READY: the first call of each pays for page-ins
    and graph set-up (seconds for the LLM), which a user's first question should not. The
    LLM is warmed with the persona so its prompt prefix is already evaluated."""
    import numpy as np

    jobs = {  # role: (Engines attribute, one inference)
        "asr": ("asr", lambda: engines.asr.transcribe(np.zeros(16000, dtype=np.float32))),
        "tts": ("tts", lambda: b"".join(engines.tts.synthesize("Ready."))),
        "embed": ("embedder", lambda: engines.embedder.embed(["ready"])),
        "llm": (
            "llm",
            lambda: engines.llm.chat(
                [{"role": "system", "content": persona}, {"role": "user", "content": "Hi"}],
                max_tokens=1,
            ),
        ),
    }
    for role, (attribute, job) in jobs.items():
        if getattr(engines, attribute) is None:
            continue
        try:
            job()
        except Exception as exc:
            engines.problems[role] = f"{role} model failed its first inference: {exc}"
            log.error("%s", engines.problems[role])
            setattr(engines, attribute, None)
