"""Streaming text clean-up between the LLM and the TTS. Pure functions of the text: no I/O.

:class:`ThinkFilter` removes ``<think>…</think>`` reasoning that some models emit;
:class:`SentenceSplitter` cuts the reply into sentences as it streams, so the first sentence
can be spoken while the model is still writing the rest.
"""

from __future__ import annotations

import re

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


def _partial_suffix(text: str, *tags: str) -> int:
    """Length of the longest end of ``text`` that could be the start of one of ``tags``."""
    best = 0
    for tag in tags:
        for k in range(min(len(tag) - 1, len(text)), best, -1):
            if text.endswith(tag[:k]):
                best = k
                break
    return best


class ThinkFilter:
    """Drops ``<think>…</think>`` blocks from a stream of text deltas.

    Tags may be split across deltas at any point: a possible tag start at the end of a delta
    is held back until the next delta decides it. An unclosed block at the end is dropped
    (it was reasoning, cut off). A stray ``</think>`` is removed; pass ``inside=True`` for
    chat templates that open the block in the prompt, so the reply starts inside it.
    Whitespace right after a block is dropped too ("</think>\\n\\nHello" → "Hello").
    """

    def __init__(self, inside: bool = False) -> None:
        self._inside = inside
        self._held = ""
        self._strip_lead = False

    def feed(self, delta: str) -> str:
        """The visible part of ``delta`` that can be released now."""
        text = self._held + delta
        self._held = ""
        out: list[str] = []
        while text:
            if self._inside:
                end = text.find(CLOSE_TAG)
                if end < 0:
                    keep = _partial_suffix(text, CLOSE_TAG)
                    self._held = text[len(text) - keep :] if keep else ""
                    break
                text = text[end + len(CLOSE_TAG) :]
                self._inside = False
                self._strip_lead = True
                continue
            start, close = text.find(OPEN_TAG), text.find(CLOSE_TAG)
            cut = min(i for i in (start, close, len(text)) if i >= 0)
            if cut == len(text):  # no whole tag: release all but a possible tag start
                keep = _partial_suffix(text, OPEN_TAG, CLOSE_TAG)
                out.append(self._visible(text[: len(text) - keep]))
                self._held = text[len(text) - keep :]
                break
            out.append(self._visible(text[:cut]))
            if cut == start:
                text = text[cut + len(OPEN_TAG) :]
                self._inside = True
            else:  # a stray closing tag: drop the tag itself
                text = text[cut + len(CLOSE_TAG) :]
                self._strip_lead = True
        return "".join(out)

    def flush(self) -> str:
        """End of stream: release held-back text (it was not a tag after all)."""
        held, self._held = self._held, ""
        return "" if self._inside else self._visible(held)

    def _visible(self, text: str) -> str:
        if self._strip_lead:
            text = text.lstrip()
            self._strip_lead = not text
        return text


# --- sentences ------------------------------------------------------------------------------

# Western marks end a sentence only when followed by whitespace (or CJK text, or the end of
# the stream): that keeps "3.14", "example.com" and "e.g.x" whole. CJK marks need no space.
_WESTERN_ENDS = ".!?;…"
_CJK_ENDS = "。！？；"
_ENDS = _WESTERN_ENDS + _CJK_ENDS
# Kept with the sentence they close: He said "stop." → one sentence, quote included.
_CJK_CLOSERS = "」』）】》〉"
_CLOSERS = "\"')]}»”’*" + _CJK_CLOSERS
# Where an over-long sentence may be cut (followed by whitespace for the Western ones).
_SOFT_BREAKS = ",:—"
_CJK_SOFT_BREAKS = "，、："
# Chinese and Japanese script (written without spaces). Korean is spaced: it counts as Western.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

#: Lower-cased words that end with a dot without ending the sentence.
ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr vs etc e.g i.e a.m p.m approx dept mt".split()
)
#: These only before a number ("No. 5", "Fig. 2"): "No." alone is an answer.
NUMBER_ABBREVIATIONS = frozenset(["no", "nr", "fig", "vol", "p", "pp", "ch"])


def _is_cjk(ch: str) -> bool:
    return bool(_CJK.match(ch))


def word_count(text: str) -> int:
    """Words in ``text``: runs containing a letter or digit, plus one per CJK character
    (CJK text has no spaces; a character is roughly a word for this purpose)."""
    cjk = len(_CJK.findall(text))
    western = sum(1 for token in _CJK.sub(" ", text).split() if _WORD.search(token))
    return cjk + western


def _join(a: str, b: str) -> str:
    if not a:
        return b
    if not b:
        return a
    # CJK text runs on without spaces; anything else next to it is still spaced.
    cjk_a = _is_cjk(a[-1]) or a[-1] in _CJK_ENDS + _CJK_CLOSERS
    return a + b if cjk_a and _is_cjk(b[0]) else f"{a} {b}"


class SentenceSplitter:
    """Cuts streamed text into sentences.

    A sentence ends at a newline, or after a run of ``. ! ? ; …`` (plus any closing quotes
    and brackets right after it) that is followed by whitespace, or after ``。！？；``.
    These do not end one: a dot inside a number or a word ("3.14", "fayd.local"), a dot
    after a known abbreviation ("Dr.", "e.g.", "p.m.", see ABBREVIATIONS) or after a single
    capital initial ("J. Smith"). A mark at the very end of the text so far waits for the
    next delta, which decides.

    Tiny fragments are merged forward: a sentence of fewer than ``min_words`` words (default
    2: "Yes.", "Well…", a list marker "1.") is held and spoken with the next sentence, so the
    TTS is not asked for a one-word clip with its own pause. ``flush()`` returns whatever is
    held, tiny or not.

    A sentence longer than ``max_chars`` with no end mark yet is cut at its last comma,
    colon or dash (else its last space), so a run-on reply does not delay speech; None
    disables that.

    ``first_clause_words``: until the first piece has been returned, a clause of at least
    that many words ending at a comma, colon or dash is returned at once ("The weather is
    sunny today," …). Speech can start after the first clause instead of the first
    sentence; later pieces are whole sentences. None (the default) disables it.
    """

    def __init__(
        self,
        min_words: int = 2,
        max_chars: int | None = 300,
        first_clause_words: int | None = None,
    ) -> None:
        self.min_words = min_words
        self.max_chars = max_chars
        self.first_clause_words = first_clause_words
        self._buf = ""
        self._carry = ""
        self._emitted = False

    def feed(self, delta: str) -> list[str]:
        """Complete sentences made available by ``delta`` (often none)."""
        self._buf += delta
        out = []
        while True:
            end = self._boundary()
            if self.max_chars is not None and (end is None or end > self.max_chars):
                end = self._soft_cut(self.max_chars) or end
            if self.first_clause_words and not self._emitted:
                clause = self._first_clause(self.first_clause_words)
                if clause is not None and (end is None or clause < end):
                    end = clause
            if end is None:
                break
            sentence = self._take(end)
            if sentence is not None:
                out.append(sentence)
                self._emitted = True
        return out

    def flush(self) -> str | None:
        """End of stream: the rest of the text (with any held fragment), or None if blank."""
        rest = _join(self._carry, self._buf.strip())
        self._buf = self._carry = ""
        self._emitted = False
        return rest or None

    def _take(self, end: int) -> str | None:
        piece = self._buf[:end].strip()
        self._buf = self._buf[end:]
        if not piece:
            return None
        sentence = _join(self._carry, piece)
        self._carry = ""
        if word_count(sentence) < self.min_words:
            self._carry = sentence
            return None
        return sentence

    def _boundary(self) -> int | None:
        buf, n, i = self._buf, len(self._buf), 0
        while i < n:
            ch = buf[i]
            if ch == "\n":
                return i + 1
            if ch not in _ENDS:
                i += 1
                continue
            j = i
            while j < n and buf[j] in _ENDS:
                j += 1
            run_end = j
            while j < n and buf[j] in _CLOSERS:
                j += 1
            if j == n:
                return None  # the next character decides (flush() takes the rest)
            if any(c in _CJK_ENDS for c in buf[i:run_end]):
                return j
            nxt = buf[j]
            if nxt.isspace() or _is_cjk(nxt):
                abbreviation = buf[i:run_end] == "." and self._abbreviation_before(i, j)
                if abbreviation is None:
                    return None  # "No. " — a number may follow; wait for it
                if not abbreviation:
                    return j
            i = j
        return None

    def _abbreviation_before(self, dot: int, after: int) -> bool | None:
        buf = self._buf
        start = dot
        while start > 0 and not buf[start - 1].isspace() and buf[start - 1] not in "(\"'“‘":
            start -= 1
        word = buf[start:dot]
        if len(word) == 1 and word.isupper() and word != "I":
            return True  # an initial: "J. R. R. Tolkien"
        if word.lower() in NUMBER_ABBREVIATIONS:
            rest = buf[after:].lstrip()
            return rest[0].isdigit() if rest else None
        return word.lower() in ABBREVIATIONS

    def _first_clause(self, words: int) -> int | None:
        buf = self._buf
        for i in range(len(buf) - 1):
            soft = buf[i] in _CJK_SOFT_BREAKS or (buf[i] in _SOFT_BREAKS and buf[i + 1].isspace())
            if soft and word_count(_join(self._carry, buf[: i + 1].strip())) >= words:
                return i + 1
        return None

    def _soft_cut(self, limit: int) -> int | None:
        # Only once the text is over the limit, and within the limit: the same cut whatever
        # the delta sizes were.
        buf = self._buf
        if len(buf) <= limit:
            return None
        for i in range(limit - 1, 0, -1):
            if buf[i] in _CJK_SOFT_BREAKS or (buf[i] in _SOFT_BREAKS and buf[i + 1].isspace()):
                return i + 1
        space = buf.rfind(" ", 0, limit)
        return space + 1 if space > 0 else limit
