"""Text to speech: a Piper voice (VITS ONNX + espeak-ng phonemes) via piper-tts 1.8."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fayd.errors import ModelError
from fayd.models.ort_session import cpu_session

if TYPE_CHECKING:
    from piper.config import PiperConfig


@dataclass(frozen=True)
class PiperVoiceFiles:
    """A Piper voice's .onnx file and its config (``<model>.onnx.json`` by default)."""

    model: Path
    config: PiperConfig
    #: The config file as read: sherpa-onnx needs fields piper's PiperConfig leaves out.
    raw_config: dict[str, Any]


def read_piper_voice(
    model_path: str | Path, config_path: str | Path | None = None
) -> PiperVoiceFiles:
    """The voice's files, checked to exist, and its parsed config (ModelError if not)."""
    model = Path(model_path)
    config_file = Path(config_path) if config_path is not None else Path(f"{model}.json")
    for p in (model, config_file):
        if not p.is_file():
            raise ModelError(f"Piper voice file not found: {p}")
    from piper.config import PiperConfig  # heavy: only when a voice is actually built

    try:
        raw = json.loads(config_file.read_text(encoding="utf-8"))
        config = PiperConfig.from_dict(raw)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"bad Piper voice config {config_file}: {exc!r}") from exc
    return PiperVoiceFiles(model, config, raw)


class PiperTts:
    """Speaks text as PCM16 mono at :attr:`sample_rate` (22050 Hz for the default voice).

    ``synthesize`` yields one chunk per sentence as piper produces it (piper splits the text
    into sentences itself), so playback can start after the first sentence. Each chunk is
    peak-normalised by piper. The lock is held for each chunk's synthesis only, never while
    the caller holds a yielded chunk, so an abandoned iterator cannot block other callers.

    ``threads`` caps onnxruntime's threads (default: all cores); ``length_scale`` > 1 speaks
    slower; ``resources_dir`` holds extra phonemizer data (g2pW for Chinese voices),
    by default the voice's own folder. Piper voices are random by design (VITS noise, from
    the voice config unless given): the same text sounds slightly different each time.
    ``noise_scale=0, noise_w_scale=0`` makes the output repeatable (flatter), for tests.
    """

    #: Hz of the PCM16 that ``synthesize`` yields (the voice's own rate).
    sample_rate: int

    def __init__(
        self,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        resources_dir: str | Path | None = None,
        threads: int | None = None,
        length_scale: float | None = None,
        noise_scale: float | None = None,
        noise_w_scale: float | None = None,
        volume: float = 1.0,
    ) -> None:
        voice = read_piper_voice(model_path, config_path)
        model, config = voice.model, voice.config
        from piper import PiperVoice
        from piper.config import PhonemeType, SynthesisConfig

        # Chinese (pinyin) voices need the g2pW model, which piper *downloads* into
        # ``<download_dir>/g2pW`` on first use: refuse rather than reach for the network.
        resources = Path(resources_dir) if resources_dir is not None else model.parent
        g2pw = resources / "g2pW" / "g2pw.onnx"
        if config.phoneme_type == PhonemeType.PINYIN and not g2pw.is_file():
            raise ModelError(f"Chinese Piper voice {model} needs {g2pw} (piper would download it)")
        try:
            # Why not PiperVoice.load(): it gives onnxruntime every core, and the daemon
            # shares them with ASR and the LLM. No spinning (cpu_session): ~10 % more time
            # per sentence, ~25 ms less CPU taken from the LLM after each. Its arena is
            # shrunk after each sentence: a long one's ~90 MB of tensors are not kept.
            session = cpu_session(model, threads, shrink_arena=True)
        except Exception as exc:  # onnxruntime raises its own untyped Fail/InvalidGraph errors
            raise ModelError(f"cannot load Piper voice {model}: {exc}") from exc
        self._voice = PiperVoice(session=session, config=config, download_dir=resources)
        self._syn = SynthesisConfig(
            length_scale=length_scale,
            noise_scale=noise_scale,
            noise_w_scale=noise_w_scale,
            volume=volume,
        )
        self.sample_rate = config.sample_rate
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Iterator[bytes]:
        """PCM16 mono chunks (one per sentence) for ``text``; nothing for blank text."""
        if not text.strip():
            return
        chunks = iter(self._voice.synthesize(text, syn_config=self._syn))
        while True:
            with self._lock:
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk.audio_int16_bytes
