"""Chinese transcripts in simplified characters: Whisper base writes traditional ones for
about half of Mandarin utterances (記得, 現在), and fayd's Chinese understanding matches
simplified text. OpenCC's ``t2s`` table (PyPI ``opencc``, installed with the whisper-base
choice) converts them; text already simplified, Latin letters and digits pass unchanged."""

from __future__ import annotations

import re
import threading
from typing import Any

from fayd.errors import ModelError

#: How to get the converter: it comes with the multilingual model.
INSTALL = "fayd models install asr --choice whisper-base (or: pip install opencc==1.4.2)"

_lock = threading.Lock()
_converter: Any = None


def converter() -> Any:
    """The OpenCC t2s converter, made once (ModelError naming the install command if
    the package is missing)."""
    global _converter
    with _lock:
        if _converter is None:
            try:
                from opencc import OpenCC  # only a Chinese-hearing household needs it
            except ImportError as exc:
                raise ModelError(
                    f"Chinese transcripts need OpenCC to write simplified characters: {INSTALL}"
                ) from exc
            _converter = OpenCC("t2s")
        return _converter


def to_simplified(text: str) -> str:
    """``text`` with traditional Chinese characters made simplified."""
    if not text:
        return text
    # OpenCC's C++ takes UTF-8: a lone surrogate cannot be encoded, so it is replaced
    # rather than failing the whole utterance.
    clean = text.encode("utf-8", "replace").decode("utf-8")
    return str(converter().convert(clean))


#: Whisper base hears 午 (wǔ) as 5 before a time: 上午8:30 comes out "上58.30", 下午3点
#: "下53点". Only with a digit and a time after it, where "上5" means nothing else.
_NOON_AS_FIVE = re.compile(r"([上下中])5(\d{1,2})(?:[.:：](\d{2})|(?=点))")


def tidy_times(text: str) -> str:
    """``text`` with Whisper's 午-as-5 misspelling of a time of day put right."""

    def fixed(m: re.Match[str]) -> str:
        minutes = f":{m.group(3)}" if m.group(3) else ""
        return f"{m.group(1)}午{m.group(2)}{minutes}"

    return _NOON_AS_FIVE.sub(fixed, text)
