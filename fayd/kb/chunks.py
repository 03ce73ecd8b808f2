"""Plain text → chunks of about one short paragraph each, the unit that is embedded, indexed
and returned to the model.

Why this size: MiniLM reads at most 256 word pieces (``fayd.embedding.embedder``), ~1,000
English characters, so a chunk of at most ~800 is seen whole; and a tool result of five
chunks stays within the small model's context budget. Chunks end at paragraph ends where
they can, else at sentence ends (``.!?`` and Chinese ``。！？；``, which need no space after),
else at a hard cut. A chunk cut inside a paragraph starts with the previous chunk's last
sentence (when short), so a fact that straddles the cut is still whole in one chunk.

A CJK character counts as two: it carries about as much as two or three English letters, and
MiniLM spends a word piece on each, so a Chinese chunk is ~350 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A chunk grows to at most this size (in :func:`weight` units) ...
MAX_SIZE = 800
#: ... and ends at the first paragraph end once it is at least this big.
MIN_SIZE = 350
#: The previous chunk's last sentence is repeated when it is at most this big.
OVERLAP = 160

_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# CJK text and its punctuation (。，「」 and full-width forms): joined without a space.
_NO_SPACE = re.compile(
    "[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef]"
)
# A sentence ends after .!? followed by space, or after a CJK stop (with closing quotes).
_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"')\]]*\s+|(?<=[。！？；])[”’」』）)]*\s*")


@dataclass(frozen=True)
class _Piece:
    text: str
    starts_paragraph: bool


def weight(text: str) -> int:
    """The size of ``text`` for chunking: characters, a CJK character counting two."""
    return len(text) + len(_CJK.findall(text))


def _sentences(paragraph: str) -> list[str]:
    out, start = [], 0
    for match in _SENTENCE_END.finditer(paragraph):
        if match.end() > start:
            out.append(paragraph[start : match.end()])
            start = match.end()
    if start < len(paragraph):
        out.append(paragraph[start:])
    return [s for s in out if s.strip()]


def _hard_cut(sentence: str, size: int) -> list[str]:
    """A sentence too big for a chunk, cut at spaces (or anywhere, for CJK) into pieces."""
    pieces, current = [], ""
    for token in re.findall(r"\S+\s*|\s+", sentence):
        while weight(token) > size:  # one "word" bigger than a chunk: CJK, or garbage
            room = max(1, size - weight(current))
            cut = _cut_at_weight(token, room)
            pieces.append(current + token[:cut])
            current, token = "", token[cut:]
        if current and weight(current) + weight(token) > size:
            pieces.append(current)
            current = ""
        current += token
    if current.strip():
        pieces.append(current)
    return pieces


def _cut_at_weight(token: str, room: int) -> int:
    used = 0
    for i, ch in enumerate(token):
        used += 2 if _CJK.match(ch) else 1
        if used > room:
            return max(1, i)
    return len(token)


def _pieces(text: str) -> list[_Piece]:
    pieces = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = re.sub(r"\s*\n\s*", _join_lines, paragraph.strip())
        if not paragraph:
            continue
        first = True
        for sentence in _sentences(paragraph):
            for part in (
                _hard_cut(sentence, MAX_SIZE) if weight(sentence) > MAX_SIZE else [sentence]
            ):
                pieces.append(_Piece(part, first))
                first = False
    return pieces


def _join_lines(match: re.Match[str]) -> str:
    """A line break inside a paragraph: nothing between two CJK characters, else a space."""
    before = match.string[match.start() - 1] if match.start() else ""
    after = match.string[match.end()] if match.end() < len(match.string) else ""
    return "" if _NO_SPACE.match(before) and _NO_SPACE.match(after) else " "


def split(text: str) -> list[str]:
    """The chunks of ``text``, in order; none for blank text."""
    chunks: list[str] = []
    current: list[_Piece] = []
    size = 0
    for piece in _pieces(text):
        cost = weight(piece.text)
        full = size + cost > MAX_SIZE
        if current and (full or (piece.starts_paragraph and size >= MIN_SIZE)):
            chunks.append(_join(current))
            tail = current[-1]
            carry = not piece.starts_paragraph and weight(tail.text) <= OVERLAP
            current = [tail] if carry and weight(tail.text) + cost <= MAX_SIZE else []
            size = sum(weight(p.text) for p in current)
        current.append(piece)
        size += cost
    if current:
        chunks.append(_join(current))
    return chunks


def _join(pieces: list[_Piece]) -> str:
    out = ""
    for piece in pieces:
        if out and piece.starts_paragraph:
            out = out.rstrip() + "\n"
        elif out and not out[-1].isspace() and not _NO_SPACE.match(out[-1]):
            out += " "
        out += piece.text
    return out.strip()
