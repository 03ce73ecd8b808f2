"""The household's documents answered in their own words. The bundled 135M model cannot
retell a passage (asked what the boiler pressure should be, with the manual's paragraph in
front of it, it said to check "your local HVAC company's website"), so when the reply model
is that one, the sentence of the passages closest to the question is said as it is written,
with the document it comes from: nothing to invent, and the household can check it.

A sentence is chosen by MiniLM's cosine with the question; the next sentence of the same
passage joins it when it is nearly as close (an instruction that runs over two sentences).
Measured on benchmarks/tool_loop.py's ``documents_heard``: a bonus for shared words lost 4
of 107 English questions, a floor of 0.45 declined 6 more than 0.35 and got none more right."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from fayd.agent.language.text import language
from fayd.embedding import EmbedderLike

#: A sentence is said only this close to the question (cosine).
QUOTE_MIN = 0.35
#: The next sentence joins when it scores at least this share of the best.
NEXT_SHARE = 0.7
#: A heading or a label is not an answer.
MIN_WORDS = 5
_HAN = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
_SOURCE = re.compile(r"^From (?P<source>[^:\n]{1,120}): ", re.M)


@dataclass(frozen=True)
class Passage:
    source: str
    text: str


def passages(found: str) -> list[Passage]:
    """The passages of a knowledge-base result, each starting "From boiler.md: " on a line
    of its own (a passage may run over several lines)."""
    starts = list(_SOURCE.finditer(found))
    ends = [m.start() for m in starts[1:]] + [len(found)] if starts else []
    return [
        Passage(m.group("source"), found[m.end() : end].strip())
        for m, end in zip(starts, ends, strict=True)
    ]


def sentences(text: str) -> list[str]:
    """The passage's sentences, without headings ("Our boiler (Greenstar 30i)" answers
    nothing): at least MIN_WORDS words, or 8 Chinese characters."""
    found = (s.strip(" #*-") for s in _SENTENCE.split(text))
    return [s for s in found if len(s.split()) >= MIN_WORDS or len(_HAN.findall(s)) >= 8]


def quote(question: str, found: list[Passage], embedder: EmbedderLike) -> str | None:
    """What to say: the closest sentence(s) and where they are written; None when no
    sentence is close enough (the model, or "I don't know", answers instead)."""
    candidates = [(p, s) for p in found for s in sentences(p.text)]
    if not candidates:
        return None
    vectors = embedder.embed([question, *(s for _, s in candidates)])
    scores = vectors[1:] @ vectors[0]
    best = int(np.argmax(scores))
    if scores[best] < QUOTE_MIN:
        return None
    passage, said = candidates[best]
    following = best + 1
    if following < len(candidates) and candidates[following][0] is passage:
        if scores[following] >= NEXT_SHARE * scores[best]:
            said = f"{said} {candidates[following][1]}"
    name = _called(passage.source)
    if language(question) == "zh":
        return f"你的文件《{name}》里写着：{said}"
    return f'Your document "{name}" says: {said}'


def _called(source: str) -> str:
    """How a document is named aloud: "boiler_notes.md" → "boiler notes"."""
    name = re.sub(r"\.(md|txt|html?|pdf|markdown)$", "", source, flags=re.I)
    return name.replace("_", " ").replace("-", " ").strip() or source
