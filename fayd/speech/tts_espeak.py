"""The floor for Chinese speech: Debian's espeak-ng with its Mandarin voice (``cmn``).

Robotic (Whisper base mishears most of it: benchmarks/asr_wer.py --lang zh), but it is
always there, so a household without the Chinese voice (``fayd models install tts_zh``)
hears its Chinese replies rather than English Piper reading "Chinese letter" for every
character."""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from collections.abc import Iterator

from fayd.errors import ModelMissing

#: Each sentence is one espeak-ng run (~15 ms); a stuck one must not hold a reply forever.
TIMEOUT_S = 20.0


class EspeakTts:
    """Speaks ``voice`` (espeak-ng's name, "cmn" for Mandarin) as PCM16 mono."""

    sample_rate = 22050  # espeak-ng's own output rate

    def __init__(self, voice: str = "cmn", program: str = "espeak-ng") -> None:
        found = shutil.which(program)
        if found is None:
            raise ModelMissing("tts_zh", program, "apt-get install espeak-ng")
        self.program = found
        self.voice = voice

    def synthesize(self, text: str) -> Iterator[bytes]:
        # Lone surrogates cannot be passed to a process: dropped, like other unsayables.
        text = text.encode("utf-8", "ignore").decode("utf-8").strip()
        if not text:
            return
        done = subprocess.run(
            [self.program, "-v", self.voice, "--stdout", "--", text],
            capture_output=True,
            timeout=TIMEOUT_S,
            check=True,
        )
        with wave.open(io.BytesIO(done.stdout)) as wav:
            yield wav.readframes(wav.getnframes())
