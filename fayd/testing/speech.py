"""Speech made at run time for tests and benchmarks, never read from checked-in audio:
espeak-ng's robotic voice, converted by sox to what the VAD and ASR take (16 kHz mono).
Support code for tests and benchmarks; the daemon does not use it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from fayd.speech.audio import read_wav

#: The programs :func:`espeak_16k` runs, and how to get them.
ESPEAK_TOOLS = ("espeak-ng", "sox")
ESPEAK_INSTALL = "apt-get install espeak-ng sox"


def missing_espeak_tools() -> list[str]:
    """Those of :data:`ESPEAK_TOOLS` not on the PATH."""
    return [tool for tool in ESPEAK_TOOLS if shutil.which(tool) is None]


def espeak_16k(text: str, wav_path: Path, voice: str | None = None) -> np.ndarray:
    """``text`` said by espeak-ng (its ``voice``, e.g. "cmn"; by default English), as
    16 kHz float32 mono (also left in ``wav_path``)."""
    chosen = ["-v", voice] if voice else []
    wav = subprocess.run(
        ["espeak-ng", *chosen, "--stdout", text], capture_output=True, check=True, timeout=30
    ).stdout
    subprocess.run(
        ["sox", "-t", "wav", "-", "-r", "16000", "-c", "1", "-b", "16", str(wav_path)],
        input=wav,
        capture_output=True,
        check=True,
        timeout=30,
    )
    samples, rate = read_wav(wav_path)
    assert rate == 16000
    return samples
