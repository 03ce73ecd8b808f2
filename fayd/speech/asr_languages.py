"""Hearing English and Chinese in one household: Whisper tiny.en for English (fast), the
multilingual Whisper base (the ``whisper-base`` choice) for Chinese and for telling the two
apart. Each model is built on first use, so a household that only speaks English never
loads base (~145 MB, ~0.5 s a load); which language an utterance is heard in comes from the
config and the device (:func:`utterance_language`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from fayd.config_check import ASR_LANGUAGES
from fayd.errors import ModelError, ModelMissing
from fayd.models.choices import MULTILINGUAL_ASR, choice_dir, choice_installed, install_hint
from fayd.models.manifest import load_manifest
from fayd.speech.asr import AUTO_AMONG, WhisperAsr

log = logging.getLogger(__name__)

#: ``speech.asr_language``: English, Chinese, or detect which of the two per utterance.
LANGUAGES = ASR_LANGUAGES
#: A device's ``language`` setting: the above, or "" (None when stored) = the household's.
DEVICE_LANGUAGES = ("", *LANGUAGES)

#: Builds a model (blocking; raises ModelError or ModelMissing when it cannot).
Factory = Callable[[], WhisperAsr]


def utterance_language(household: str, device: str | None) -> str:
    """What to pass to ``transcribe`` for an utterance from a device: its own ``language``
    setting when set, else the household's ``speech.asr_language``."""
    return device or household


def device_language(cfg: Any, settings: Any) -> str:
    """:func:`utterance_language` for a :class:`fayd.config.Config` and a device's
    :class:`fayd.store.devices_records.DeviceSettings`."""
    return utterance_language(cfg.speech.asr_language, settings.language)


class LanguageAsr:
    """Transcribes with the model that fits the language asked for (see :func:`_pick`).
    ``english`` or ``multilingual`` may be None: a household with only one of them. Each
    factory runs once, under a lock, on the first utterance that needs it; a factory that
    failed is not retried (its error is raised again), so a missing model costs no reload
    per utterance. ``default`` is the language of calls that name none."""

    def __init__(
        self,
        english: Factory | None,
        multilingual: Factory | None,
        default: str = "en",
    ) -> None:
        if default not in LANGUAGES:
            raise ValueError(f"ASR language must be one of {', '.join(LANGUAGES)}: {default!r}")
        if english is None and multilingual is None:
            raise ValueError("LanguageAsr needs at least one model")
        self.default = default
        self._factories: dict[str, Factory | None] = {"en": english, "multi": multilingual}
        self._built: dict[str, WhisperAsr] = {}
        self._failed: dict[str, ModelError] = {}
        self._lock = threading.Lock()

    def transcribe(self, samples: np.ndarray, language: str | None = None) -> str:
        language = language or self.default
        if language not in LANGUAGES:
            raise ValueError(f"ASR language must be one of {', '.join(LANGUAGES)}: {language!r}")
        if np.asarray(samples).size == 0:  # nothing to hear: no model is loaded for it
            return ""
        if language == "auto":
            # Base finds the language and decodes it from the same pass of its encoder
            # (WhisperAsr): cheaper than running tiny.en after it for English.
            return self._model(self._pick("auto")).transcribe(samples, "auto")
        return self._model(self._pick(language)).transcribe(samples, language)

    def load(self) -> LanguageAsr:
        """Build now the models the default language needs (a broken one raises here, at
        start, not at the first utterance); the others stay lazy."""
        needs = {"en": ["en"], "zh": ["zh"], "auto": ["auto"]}[self.default]
        for language in needs:
            self._model(self._pick(language))
        return self

    def loaded(self) -> list[str]:
        """The models built so far ("en", "multi"): for the log and the tests."""
        return sorted(self._built)

    def _pick(self, language: str) -> str:
        """English: tiny.en when there is one (base only if tiny.en is missing); Chinese and
        "auto" (its detection): base."""
        if language == "en" and self._factories["en"] is not None and "en" not in self._failed:
            return "en"
        if self._factories["multi"] is None:
            if language == "en":
                return "en"  # its failure is raised again by _model
            raise ModelError(
                f"ASR language {language!r} needs the multilingual Whisper, and none is set up"
                ' (speech.asr_language is "en", or speech.asr_model is an English-only'
                ' model): set speech.asr_language = "auto" and'
                " run: fayd models install asr --choice whisper-base"
            )
        return "multi"

    def _model(self, which: str) -> WhisperAsr:
        with self._lock:
            try:
                return self._build(which)
            except ModelError as exc:
                if which != "en" or self._factories["multi"] is None:
                    raise
                log.warning("English ASR model unusable (%s): Whisper base hears English", exc)
                return self._build("multi")

    def _build(self, which: str) -> WhisperAsr:
        """The model, built now if need be; the lock is held."""
        if which in self._built:
            return self._built[which]
        if which in self._failed:
            raise self._failed[which]
        factory = self._factories[which]
        assert factory is not None  # _pick chose only a model that has a factory
        try:
            model = factory()
        except ModelError as exc:
            self._failed[which] = exc
            raise
        self._built[which] = model
        log.info("ASR model for %s loaded", "English" if which == "en" else "en and zh")
        return model


def multilingual_dir(state_dir: Path) -> Path:
    """The installed whisper-base choice's folder (ModelMissing, with the install command,
    when it is not installed)."""
    choice = load_manifest().choice(*MULTILINGUAL_ASR)
    folder = choice_dir(state_dir, choice)
    if not choice_installed(choice, state_dir):
        raise ModelMissing("asr", str(folder), install_hint(choice))
    return folder


def language_asr(cfg: Any, english_model: Path | None) -> LanguageAsr:
    """The daemon's ASR for ``cfg`` (a :class:`fayd.config.Config`; whisper engine only):
    ``english_model`` is tiny.en's folder (the manifest default; None when not installed).
    With ``speech.asr_model`` set, that one model hears everything, as before. Otherwise,
    when ``speech.asr_language`` is not "en", whisper-base must be installed (checked now:
    a clear error at start, not at the first Chinese utterance); with "en" it is looked
    for only if a device asks for Chinese."""
    speech = cfg.speech
    threads, window = speech.asr_threads, speech.asr_window_s

    def whisper(folder: Callable[[], Path], language: str) -> Factory:
        return lambda: WhisperAsr(folder(), language, threads, window_s=window)

    if speech.asr_model:
        own = Path(speech.asr_model)
        if speech.asr_language == "en":
            return LanguageAsr(whisper(lambda: own, "en"), None, "en")
        return LanguageAsr(None, whisper(lambda: own, "auto"), speech.asr_language)
    if speech.asr_language != "en":
        multilingual_dir(cfg.state_dir)
    english = whisper(lambda: english_model, "en") if english_model else None
    multilingual = whisper(lambda: multilingual_dir(cfg.state_dir), "auto")
    return LanguageAsr(english, multilingual, speech.asr_language)


__all__ = [
    "AUTO_AMONG",
    "DEVICE_LANGUAGES",
    "LANGUAGES",
    "LanguageAsr",
    "device_language",
    "language_asr",
    "multilingual_dir",
    "utterance_language",
]
