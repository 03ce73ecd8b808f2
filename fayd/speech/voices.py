"""One reply, the right voice: a sentence is cut into runs of one script each, Chinese runs
are spoken by the Chinese voice and the rest by the default (English) one, at one sample
rate. "好的，8点提醒您吃 Aspirin。" is two runs: "好的，8点提醒您吃 " and "Aspirin。".

Digits, spaces and punctuation belong to no script. Punctuation and spaces close the run
before them ("早上好！" is Chinese); a number goes with the next letter's script ("8点" is
Chinese, "at 8 o'clock" English) and, at the end, with the run before it."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator

from fayd.speech.audio import float_to_pcm16, pcm16_to_float, resample
from fayd.speech.ports import Tts

log = logging.getLogger(__name__)

#: Han ideographs (with extension A and the compatibility forms): what the Chinese voice says.
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: Letters of any other script: what the default voice says.
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")


def script_of(char: str) -> str | None:
    """ "zh", "en" (any other letter) or None (digits, spaces, punctuation, symbols)."""
    if _HAN.match(char):
        return "zh"
    return "en" if _LETTER.match(char) else None


def script_runs(text: str) -> list[tuple[str, str]]:
    """``text`` as (script, run) pairs in order, neighbours of one script merged."""
    runs: list[tuple[str, str]] = []
    pending = ""  # neutral characters waiting for the next letter
    for char in text:
        script = script_of(char)
        if script is None:
            pending += char
            continue
        if runs and runs[-1][0] == script:
            runs[-1] = (script, runs[-1][1] + pending + char)
        elif runs:  # punctuation ends the run before; a number starts the next
            number = _DIGIT.search(pending)
            cut = number.start() if number else len(pending)
            runs[-1] = (runs[-1][0], runs[-1][1] + pending[:cut])
            runs.append((script, pending[cut:] + char))
        else:
            runs.append((script, pending + char))
        pending = ""
    if pending:
        if runs:
            runs[-1] = (runs[-1][0], runs[-1][1] + pending)
        elif pending.strip():
            runs.append(("en", pending))  # "3:30": only digits, the default voice
    return runs


class ScriptVoices:
    """A :class:`~fayd.speech.ports.Tts` that speaks each script with its own voice, at the
    default voice's sample rate. The Chinese voice is made by ``chinese`` on its first
    Chinese run (an English-only household never loads it); ``chinese`` may raise, and
    then Chinese runs are left unsaid (logged once) rather than read out by a voice that
    cannot say them."""

    def __init__(self, default: Tts, chinese: Callable[[], Tts] | None) -> None:
        self.default = default
        self.sample_rate = default.sample_rate
        self._chinese: Tts | None = None
        self._make = chinese
        self._lock = threading.Lock()
        #: Why there is no Chinese voice (None: there is one, or it was never needed yet).
        self.chinese_problem: str | None = None if chinese is not None else "none installed"

    def chinese(self) -> Tts | None:
        """The Chinese voice, made now if it has not been; None when it cannot be."""
        with self._lock:
            if self._chinese is None and self._make is not None:
                make, self._make = self._make, None
                try:
                    self._chinese = make()
                except Exception as exc:  # a missing or broken voice: said once, not per run
                    self.chinese_problem = f"{type(exc).__name__}: {exc}"
                    log.error("the Chinese voice cannot be loaded: %s", self.chinese_problem)
            return self._chinese

    def synthesize(self, text: str) -> Iterator[bytes]:
        for script, run in script_runs(text):
            voice = self.chinese() if script == "zh" else self.default
            if voice is None:
                log.debug("no Chinese voice: %r left unsaid", run)
                continue
            for pcm in voice.synthesize(run):
                yield self._at_rate(pcm, voice.sample_rate)

    def _at_rate(self, pcm: bytes, rate: int) -> bytes:
        if rate == self.sample_rate or not pcm:
            return pcm
        return float_to_pcm16(resample(pcm16_to_float(pcm), rate, self.sample_rate))
