"""Character error rate of Chinese speech heard back by ASR, for the Chinese voice's tests
and benchmark. Support code for tests and benchmarks; the daemon does not use it.

Whisper writes traditional characters and Arabic numerals at will ("八點半", "8點30分"),
so both sides are brought to one spoken form before counting: simplified characters
(OpenCC t2s), numbers in Chinese words (fayd's own times/dates first, then cn2an),
punctuation, spaces and Latin letters removed.

Whisper also picks among homophones as it likes (上午 → 上5, 您 → 你 is a real slip, 午 → 五
is not), so the syllable error rate (toned pinyin, pypinyin) says how well the voice was
*heard*; the character error rate counts the ASR's spelling too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from fayd.speech.zh_text import written_out

#: How to get OpenCC when it is missing (its absence skips the tests that need it).
OPENCC_INSTALL = "pip install opencc"

_NOT_HAN = re.compile(r"[^\u4e00-\u9fa5]")


def have_opencc() -> bool:
    try:
        import opencc  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def _t2s() -> Any:  # opencc ships no type hints
    import opencc

    return opencc.OpenCC("t2s")


class Listener:
    """Chinese heard as fayd hears it: :class:`fayd.speech.asr.WhisperAsr` in "zh"
    (simplified characters, Whisper's 午-as-5 in a time put right), so the figures are the
    product's, not a tuned harness's."""

    def __init__(self, folder: str | Path, threads: int = 2) -> None:
        from fayd.speech.asr import WhisperAsr

        self._asr = WhisperAsr(folder, "zh", threads)

    def hear(self, samples: np.ndarray) -> str:
        """The text of 16 kHz float32 mono speech."""
        return self._asr.transcribe(samples)


def spoken(text: str) -> str:
    """``text`` as the Chinese characters one would hear said."""
    import cn2an

    text = _t2s().convert(written_out(text))
    try:
        text = cn2an.transform(text, "an2cn")
    except (ValueError, KeyError):  # cn2an refuses some digit runs: count them as said
        pass
    return _NOT_HAN.sub("", text)


def syllables(text: str) -> list[str]:
    """Toned pinyin syllables of ``text``'s spoken form ("ni3", "hao3")."""
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin(spoken(text), style=Style.TONE3, neutral_tone_with_five=True)


def edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    """Levenshtein distance over characters, syllables or words (benchmarks/asr_wer.py)."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev_diag, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev_diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev_diag + (r != h))
    return row[-1]


def error_rate(pairs: list[tuple[str, str]], by: Callable[[str], Sequence[str]] = spoken) -> float:
    """Errors over reference units for (said, heard) pairs: characters (``by=spoken``,
    the CER) or syllables (``by=syllables``)."""
    errors = sum(edit_distance(by(ref), by(hyp)) for ref, hyp in pairs)
    total = sum(len(by(ref)) for ref, _ in pairs)
    return errors / max(total, 1)
