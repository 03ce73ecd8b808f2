"""Text as the router compares it: the same sentence typed, or written down by ASR in one
of its styles, comes out the same."""

from __future__ import annotations

import re
import unicodedata

_CJK = re.compile(r"[\u3400-\u9fff]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\W_]+|[\s\W_]+$")


def language(text: str) -> str:
    """``zh`` when a quarter or more of the text (spaces aside) is Chinese characters: "3点
    提醒我吃药" is Chinese, "remind me to ring 小红 at 3" English (one rule for the router,
    the skills' replies and the model's)."""
    cjk = len(_CJK.findall(text))
    return "zh" if cjk and cjk * 4 >= len("".join(text.split())) else "en"


def normalize(text: str) -> str:
    """NFKC (full-width → ASCII), lower case, one kind of apostrophe, single spaces, no
    punctuation at either end."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower()
    return _EDGE_PUNCT.sub("", _SPACES.sub(" ", text)).strip()


def join_sentences(sentences: list[str]) -> str:
    """Sentences as one text: a space between English ones, none after Chinese ("你好！今天…"),
    and a full stop for a clause left open at the end."""
    out = ""
    for sentence in sentences:
        last = out.rstrip("…")[-1:]  # "好……" is Chinese, "Well…" is not
        if out and sentence and not (_CJK.search(last) or last in "。！？，；："):
            out += " "
        out += sentence
    # A reply stopped after its first clause was streamed ("The crossword is a fun word
    # game," then nothing fit to say) still ends as a sentence.
    if out[-1:] in (",", ";", ":", "—"):
        return out[:-1].rstrip() + "."
    return out[:-1] + "。" if out[-1:] in ("，", "；", "：", "、") else out
