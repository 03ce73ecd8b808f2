"""Text to speech: a Piper (VITS) voice run by sherpa-onnx instead of piper's own runtime.

sherpa-onnx 2.x has no built-in espeak-ng, so three things are prepared for it (MODELS.md):
a ``tokens.txt`` written from the voice's ``phoneme_id_map``, a copy of the .onnx with the
metadata sherpa-onnx reads (``model_type=vits``, ``comment=piper``, ``sample_rate``…), and
the phonemes themselves, made by piper's espeak-ng phonemizer and handed over as
``GenerationConfig.phoneme_codepoints``. Same interface as :class:`fayd.speech.tts.PiperTts`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from fayd.errors import ModelError
from fayd.models.probe import probe_in_child
from fayd.speech.audio import float_to_pcm16
from fayd.speech.tts import read_piper_voice

# Loads the prepared voice and speaks one phoneme, in a child process: sherpa-onnx calls
# exit() instead of raising on a graph it cannot use (missing metadata, not a VITS model),
# which would take the daemon down with it.
_PROBE = """
import sys
import sherpa_onnx
vits = sherpa_onnx.OfflineTtsVitsModelConfig(model=sys.argv[1], tokens=sys.argv[2])
config = sherpa_onnx.OfflineTtsConfig(model=sherpa_onnx.OfflineTtsModelConfig(vits=vits))
if not config.validate():
    sys.exit("sherpa-onnx rejected the voice config")
gen = sherpa_onnx.GenerationConfig()
gen.phoneme_codepoints = [[ord("a")]]
if len(sherpa_onnx.OfflineTts(config).generate("", gen).samples) == 0:
    sys.exit("the voice produced no audio")
"""


class SherpaTts:
    """Speaks text as PCM16 mono at :attr:`sample_rate`, one chunk per sentence.

    ``cache_dir`` receives the prepared copy of the voice (as large as the voice, ~60 MB)
    and its tokens; it is reused while the voice file is unchanged, and the first
    preparation is checked in a child process (a few seconds, once). Each chunk is
    peak-normalised, as piper does, so both backends sound the same: with the noise off,
    they produce the same samples. ``length_scale``, ``noise_scale``, ``noise_w_scale``
    default to the voice config's; ``speaker`` picks a voice of a multi-speaker model.
    """

    #: Hz of the PCM16 that ``synthesize`` yields (the voice's own rate).
    sample_rate: int

    def __init__(
        self,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        cache_dir: str | Path,
        threads: int = 1,
        length_scale: float | None = None,
        noise_scale: float | None = None,
        noise_w_scale: float | None = None,
        volume: float = 1.0,
        speaker: int = 0,
        probe_timeout_s: float = 60.0,
    ) -> None:
        voice = read_piper_voice(model_path, config_path)
        model, config = voice.model, voice.config
        from piper import PiperVoice  # heavy: only when a voice is actually built
        from piper.config import PhonemeType

        if config.phoneme_type not in (PhonemeType.ESPEAK, PhonemeType.TEXT):
            raise ModelError(
                f"voice {model}: sherpa-onnx backend supports espeak and text phonemes only, "
                f"not {config.phoneme_type.value} (use the piper backend)"
            )
        if config.vowel_clusters:  # multi-codepoint phonemes cannot go as codepoints
            raise ModelError(f"voice {model} uses vowel clusters: use the piper backend")
        if not 0 <= speaker < max(1, config.num_speakers):
            raise ModelError(f"voice {model} has {config.num_speakers} speaker(s), not #{speaker}")

        prepared, tokens = _prepare(model, voice.raw_config, config.sample_rate, Path(cache_dir))
        try:
            _probe_once(prepared, tokens, probe_timeout_s)
        except ModelError:
            for p in (prepared, tokens):  # no 60 MB of junk left behind
                p.unlink(missing_ok=True)
            raise
        import sherpa_onnx

        vits = sherpa_onnx.OfflineTtsVitsModelConfig(
            model=str(prepared),
            tokens=str(tokens),
            noise_scale=_pick(noise_scale, config.noise_scale),
            noise_scale_w=_pick(noise_w_scale, config.noise_w_scale),
            length_scale=_pick(length_scale, config.length_scale),
        )
        tts_config = sherpa_onnx.OfflineTtsConfig(
            model=sherpa_onnx.OfflineTtsModelConfig(vits=vits, num_threads=threads)
        )
        try:
            self._tts = sherpa_onnx.OfflineTts(tts_config)
        except RuntimeError as exc:
            raise ModelError(f"sherpa-onnx cannot load voice {model}: {exc}") from exc
        # Only for phonemize(): it shares piper's process-wide espeak-ng phonemizer and its
        # lock (espeak-ng is one global C state), so this and PiperTts can run side by side.
        self._phonemizer = PiperVoice(session=None, config=config)  # type: ignore[arg-type]
        self._sherpa = sherpa_onnx
        self._speaker = speaker
        self._volume = volume
        self.sample_rate = int(self._tts.sample_rate)
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Iterator[bytes]:
        """PCM16 mono chunks (one per sentence) for ``text``; nothing for blank text."""
        if not text.strip():
            return
        for phonemes in self._phonemizer.phonemize(text):
            if not phonemes:
                continue
            gen = self._sherpa.GenerationConfig()
            gen.sid = self._speaker
            gen.phoneme_codepoints = [[ord(p) for p in phonemes]]
            with self._lock:  # held per sentence only, as in PiperTts
                audio = np.asarray(self._tts.generate("", gen).samples, dtype=np.float32)
            peak = float(np.abs(audio).max()) if audio.size else 0.0
            if peak < 1e-8:
                continue
            yield float_to_pcm16(np.clip(audio / peak * self._volume, -1.0, 1.0))


def _pick(value: float | None, default: float) -> float:
    return float(default if value is None else value)


def _prepare(
    model: Path, raw: dict[str, Any], sample_rate: int, cache_dir: Path
) -> tuple[Path, Path]:
    """The voice copy with sherpa-onnx's metadata, and its tokens.txt, in ``cache_dir``."""
    meta = {
        "model_type": "vits",
        "comment": "piper",
        "language": str(raw.get("language", {}).get("name_english", "")),
        "voice": str(raw.get("espeak", {}).get("voice", "")),
        "has_espeak": "1",
        "n_speakers": str(int(raw.get("num_speakers", 1))),
        "sample_rate": str(sample_rate),
    }
    tail = b"".join(_metadata_entry(k, v) for k, v in meta.items())
    id_map: dict[str, list[int]] = raw.get("phoneme_id_map") or {}
    lines = []
    for symbol, ids in id_map.items():
        if len(symbol) != 1 or symbol == "\n" or not ids:
            raise ModelError(f"voice {model}: unusable phoneme_id_map entry {symbol!r}")
        lines.append(f"{symbol} {ids[0]}\n")
    st = model.stat()
    key = hashlib.sha256(
        f"{model.resolve()}|{st.st_size}|{st.st_mtime_ns}|".encode() + tail
    ).hexdigest()[:16]
    prepared = cache_dir / f"{model.stem}-{key}.onnx"
    tokens = cache_dir / f"{model.stem}-{key}.tokens.txt"
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(tokens, "".join(lines).encode("utf-8"))
        if not (prepared.is_file() and prepared.stat().st_size == st.st_size + len(tail)):
            for old in cache_dir.glob(f"{model.stem}-*"):  # earlier copies of this voice
                if key not in old.name:
                    old.unlink(missing_ok=True)
            prepared.with_name(prepared.name + ".ok").unlink(missing_ok=True)
            tmp = prepared.with_name(prepared.name + ".tmp")
            with model.open("rb") as src, tmp.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
                dst.write(tail)
            os.replace(tmp, prepared)
    except OSError as exc:
        raise ModelError(f"cannot prepare voice {model} in {cache_dir}: {exc}") from exc
    return prepared, tokens


def _metadata_entry(key: str, value: str) -> bytes:
    # Why raw bytes and not the onnx package: an ONNX file is a protobuf ModelProto, and a
    # repeated field appended to a serialized message is simply added to it by any parser.
    # metadata_props is field 14; each StringStringEntryProto has key=1, value=2.
    entry = _field(1, key.encode()) + _field(2, value.encode())
    return _field(14, entry)


def _field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _write_atomic(path: Path, data: bytes) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _probe_once(prepared: Path, tokens: Path, timeout: float) -> None:
    marker = prepared.with_name(prepared.name + ".ok")
    if marker.is_file():
        return
    probe_in_child(
        _PROBE,
        [str(prepared), str(tokens)],
        what=f"voice {prepared}",
        timeout=timeout,
        by=" by sherpa-onnx",
    )
    marker.touch()
