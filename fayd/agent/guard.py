"""Guardrails for chit-chat: what the small model may say, and when it must stop.

The bundled model (135M parameters) writes fluent sentences, but tried as a new user it
echoed the question, invented facts, went round in loops until its token limit (a minute of
speech) and copied the prompt's own format into its replies, which were then stored and
copied again. So every reply is judged as it streams, piece by piece, before it is spoken:

- **bounds**: at most ``agent.max_sentences`` sentences and ``agent.max_words`` words; the
  generation is stopped once they are reached, not truncated afterwards;
- **loops**: the same 4 words a third time, a block said three times in a row, or a sentence
  said before (in this reply or a recent one; or nearly: the model fills its own template
  again) stops the reply there;
- **echo**: a piece that repeats or paraphrases the question is not said;
- **format**: chat-template tokens, recalled-memory lines, speaker labels, template slots,
  markup (``fayd.memory.hygiene``), and invented specifics (phone numbers, addresses,
  temperatures, the weather) stop the reply before them;
- **unkind**: dismissive or hurtful words (``_UNKIND``) stop it before them too, and so do
  a chat model's stock phrases (``_FILLER``: "I'm sorry for any confusion") and a reply
  that opens with an apology when the person told of nothing wrong.

When nothing worth saying came out (empty, or the first piece already failed), the model is
asked once more (``Chat``: other sampling, without the history it copies); failing again,
an honest short line is said instead
(:data:`FALLBACKS`). Such a turn is stored with ``"rejected"`` in its meta: the history and
memory skip it (``Chat``). Pure code, no I/O: ``Chat`` feeds it and acts on its answers.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fayd.agent.claims import claims
from fayd.agent.language.text import language
from fayd.agent.unfounded import unfounded
from fayd.llm.text import word_count
from fayd.memory import hygiene

#: Warm, brief answers shown to the model after the persona (few-shot). They come first in
#: the prompt with the persona and never change, so llama.cpp reads them once and reuses
#: them from its prefix cache. No personal facts in them: the model must not take them for
#: things this user said.
EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "I feel a bit lonely today.",
        "I'm sorry you feel lonely. I'm here with you; would you like to tell me about your day?",
    ),
    ("What do you like doing?", "I like listening to you. What do you enjoy doing these days?"),
    ("My back hurts this morning.", "Oh dear, a sore back is no fun. Have you been able to rest?"),
    ("What are you?", "I'm Fay, a small companion in a box. I'm here to keep you company."),
    ("I used to grow roses.", "Roses are lovely. Which colour did you like best?"),
)
#: Said when the model had nothing usable to say, twice: honest, short, an opening for the
#: person to go on (no canned cheer). Picked in turn, so two in a row differ.
FALLBACKS = {
    "en": ("Tell me more?", "I'm listening. Tell me more?", "Go on, I'm listening."),
    "zh": ("我在听，你接着说。", "嗯，我在听呢。", "再跟我说说？"),
}
#: A piece whose words follow the question's this closely (difflib ratio over tokens) echoes it.
ECHO_RATIO = 0.7
#: A piece whose MiniLM vector is this close to the question's paraphrases it; a piece that
#: is itself a question, already at :data:`ECHO_QUESTION_COSINE` (asking the question back).
#: Measured on crafted pairs: restatements 0.90-1.0, asked back 0.86-0.98; fair answers up
#: to 0.91 ("Do you like flowers?" → "Yes, I like flowers very much.").
ECHO_COSINE = 0.92
ECHO_QUESTION_COSINE = 0.85
#: Below this word ratio a piece is no echo and the embedder is not asked.
DOUBT_RATIO = 0.3
#: Words of a greeting: a greeting answered with a greeting is no echo ("Good morning!").
GREETING = frozenset(
    "hello hi hey good morning afternoon evening night there dear love again to you too".split()
)
#: Sentences shorter than this (tokens) may recur ("Thank you."): not a loop.
REPEAT_MIN_TOKENS = 3
#: A sentence of :data:`NEAR_MIN_TOKENS`+ tokens this close (difflib ratio) to one said before
#: is the same sentence with a word swapped: the model filling its own template again ("You're
#: not supposed to be X, and you're not supposed to be X, right?" turn after turn).
NEAR_REPEAT = 0.75
NEAR_MIN_TOKENS = 6

_SENTENCE_END = re.compile(r"[.!?…。！？；]+[\"'”’)\]」』）]*(?=\s|$)|[。！？]")
_SOFT_BREAK = re.compile(r"[,;:—，、；：](?=\s|$)|[，、；：]")
_CJK = re.compile(r"[\u3400-\u9fff]")
#: Specifics the model cannot know and invents: a web or mail address, a temperature; and
#: (:data:`_NUMBER`) a phone number; (:data:`_WEATHER`) the weather, unless the user spoke of it.
_INVENTED = re.compile(r"https?://|www\.|\b[\w.]+@[\w-]+\.\w|\d+\s*(°|degrees?\b)", re.I)
_NUMBER = re.compile(r"\+?\d[\d\s().-]{5,}\d")
_WEATHER = re.compile(
    r"\b(sunny|rain(s|y|ing)?|snow(s|y|ing)?|cloudy|stormy|windy|foggy|forecast)\b", re.I
)
#: Words a companion must never say to the person, which the small model does say when lost
#: ("I don't know what you're going on about"): the reply stops before them.
_UNKIND = re.compile(
    r"\b(i don't know what you('re| are) (going on|talking|on) about"
    r"|what are you (going on|on) about"
    r"|i (can't|cannot|won't) help you|i('m| am) not here to|not my (problem|job)|i don't care"
    r"|(you're|you are)( being)? (wrong|stupid|boring|silly|an idiot|mad|crazy)"
    r"|stupid|idiot|shut up"
    r"|go away|leave me alone|nobody cares|get over it|stop (whining|complaining|moaning))\b",
    re.I,
)
#: Stock phrases of chat models that say nothing to a person at home ("I'm sorry for any
#: confusion", "I'll be happy to explain further", "The user thanked you"): the reply
#: stops before them.
_FILLER = re.compile(
    r"\b(sorry for (any|the) (confusion|misunderstanding)|"
    r"apologi[sz]e for (any|the) (confusion|inconvenience|misunderstanding)|"
    r"(happy|glad) to (explain|elaborate|help) further|as an ai|i'm (just )?an ai|"
    r"language model|let me know if you (have|need) any|here (is|are) (the|an?|your|my) "
    r"(original|summary|translation|text|list|example|version|rewrite|response))\b"
    # the conversation narrated from outside ("The user thanked you for your assistance.")
    r"|\bthe (user|assistant)\b"
    r"|[:：]\s*$",  # a piece that introduces something to follow: "Here is the original:"
    re.I,
)
#: An apology to open a reply when nothing went wrong ("What do you think about roses?" →
#: "Oh dear, I'm sorry about that."): the small model's commonest tic.
_APOLOGY = re.compile(
    r"^(oh( dear)?,? )?(i'm (so |very )?sorry|sorry|i apologi[sz]e|oh dear|oh no)\b", re.I
)
#: ... or anywhere in it ("The war, oh the war! I'm sorry you've gone.").
_SORRY = re.compile(r"\b(i'm (so |very |really )?sorry|i apologi[sz]e|so sorry)\b", re.I)
_TROUBLE = re.compile(
    r"\b(sad|sorry|hurt|hurts|lost|died|dead|bad|ill|poorly|pain|ache|aches|aching|sore|worried|"
    r"lonely|tired|problem|wrong|broke|broken|fell|fall|miss|missed|can't|cannot|couldn't|"
    r"don't|didn't|no|not|never|afraid|scared|upset|awful|terrible|horrible|cold|sick|"
    r"trouble|difficult|hard|forgot|worry)\b|(难过|伤心|疼|痛|病|累|孤单|担心|不)",
    re.I,
)
_YEARS = re.compile(r"^(1[89]|20)\d\d\s*[-–]\s*(1[89]|20)\d\d$")


def invented(text: str, question: str = "") -> bool:
    """A phone number (7+ digits; not a span of years), a web or mail address, a
    temperature, the weather (when the question did not speak of it): specifics an offline
    box cannot know, which the small model makes up."""
    if _INVENTED.search(text):
        return True
    if _WEATHER.search(text) and not _WEATHER.search(question):
        return True
    return any(
        sum(c.isdigit() for c in m[0]) >= 7 and not _YEARS.match(m[0])
        for m in _NUMBER.finditer(text)
    )


def fallback(question: str, n: int) -> str:
    lines = FALLBACKS[language(question)]
    return lines[n % len(lines)]


def stop_strings(user: str, agent: str) -> list[str]:
    """Stop the model where a reply turns into prompt format (it goes on to write the next
    turn, or a memory line): llama.cpp stops before them, at no cost."""
    labels = {"User", "Assistant", user, agent} - {""}
    return [
        "<|im_start|>",
        "<|im_end|>",
        "<|endoftext|>",
        "\n- [",
        *(f"\n{name}:" for name in sorted(labels)),
        # The tool loop's own words (fayd.agent.tools): a reply never speaks of its tools.
        '{"tool"',
        "kb_search",
        "What was looked up",
    ]


def echo_ratio(question: str, piece: str) -> float:
    """How closely the piece's words follow the question's, in [0, 1]; 1.0 when the piece
    holds the whole question (3+ tokens) or is a part of it (4+ tokens)."""
    q, p = hygiene.tokens(question), hygiene.tokens(piece)
    if not q or not p:
        return 0.0
    if (len(q) >= 3 and _holds(p, q)) or (len(p) >= 4 and _holds(q, p)):
        return 1.0
    return difflib.SequenceMatcher(None, q, p, autojunk=False).ratio()


def _holds(longer: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(longer[i : i + n]) == list(part) for i in range(len(longer) - n + 1))


def sentences_in(piece: str) -> int:
    """Sentences a piece ends or holds (a first clause ending at a comma: none)."""
    return len(_SENTENCE_END.findall(piece.strip()))


class LoopDetector:
    """Watches the streamed text for a model going round in circles.

    ``feed`` takes the text as it streams (deltas may split words anywhere) and says when
    the same ``n`` tokens came a third time or a block was said three times in a row;
    ``repeats`` says whether a sentence was said before (the same, or nearly), in this
    reply or in one of ``earlier`` (the recent replies of the conversation: the model copies
    its history). Tokens are words, and single characters for Chinese."""

    def __init__(self, earlier: Iterable[str] = (), n: int = 4, times: int = 3) -> None:
        self.n, self.times = n, times
        self._text = ""
        self._seen: list[list[str]] = []
        for reply in earlier:
            for sentence in _sentences(reply):
                self._remember(sentence)

    def feed(self, delta: str) -> bool:
        """True once the stream so far loops."""
        self._text += delta
        toks = hygiene.tokens(self._text)
        if toks and self._text and self._text[-1].isalnum() and not _CJK.match(self._text[-1]):
            toks = toks[:-1]  # the last word may go on in the next delta
        return hygiene.repeated_ngram(toks, self.n, self.times) or hygiene.stuttering(toks)

    def repeats(self, sentence: str) -> bool:
        """True when ``sentence`` (or nearly it) was said before; remembers it either way."""
        toks = hygiene.tokens(sentence)
        seen = len(toks) >= REPEAT_MIN_TOKENS and any(_alike(toks, old) for old in self._seen)
        self._remember(sentence)
        return seen

    def _remember(self, sentence: str) -> None:
        toks = hygiene.tokens(sentence)
        if len(toks) >= REPEAT_MIN_TOKENS and toks not in self._seen:
            self._seen.append(toks)


def _alike(new: list[str], old: list[str]) -> bool:
    """The same sentence, the same with a word or two swapped, or a clause of 4+ tokens
    lifted whole from an earlier sentence ("…, I'll make a sandwich for you tomorrow.")."""
    if new == old:
        return True
    if len(new) >= REPEAT_MIN_TOKENS + 1 and _holds(old, new):
        return True
    if min(len(new), len(old)) < NEAR_MIN_TOKENS:
        return False
    return difflib.SequenceMatcher(None, new, old, autojunk=False).ratio() >= NEAR_REPEAT


def _sentences(text: str) -> list[str]:
    parts, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        parts.append(text[start : m.end()].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


@dataclass(frozen=True)
class Bounds:
    sentences: int = 2
    words: int = 35


@dataclass
class ReplyGuard:
    """One attempt at a reply, judged as it streams. ``feed`` every streamed text delta
    (loops, the word bound: True = stop the model now); ``judge`` every piece before it is
    said (returns the words to say, or None). ``done`` says the model must stop; ``problem``
    why the attempt went wrong (``empty``, ``loop``, ``repeat``, ``echo``, ``format``,
    ``fact``, ``unfounded``; ``model`` when Chat said a failure line), ``cut`` why the reply
    ended early.
    ``user`` and ``agent`` are the speakers' names (a reply must not label lines with them)."""

    question: str
    bounds: Bounds = field(default_factory=Bounds)
    earlier: Sequence[str] = ()
    user: str = "User"
    agent: str = "Fay"
    #: What the model was given besides the question (memory context, history): a number,
    #: dose, reading, date or name the reply states must be in it (fayd.agent.unfounded).
    grounds: str = ""
    said: list[str] = field(default_factory=list)
    problem: str | None = None
    cut: str | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        self._loops = LoopDetector(self.earlier)
        self._stream = ""

    @property
    def done(self) -> bool:
        return self.cut is not None

    @property
    def words(self) -> int:
        return sum(word_count(s) for s in self.said)

    def feed(self, delta: str) -> bool:
        """Streamed text: True when the model must stop (a loop, or over the word bound)."""
        if self.done:
            return True
        self._stream += delta
        if self._loops.feed(delta):
            self._stop("loop", self._stream[-80:])
        elif word_count(self._stream) > self.bounds.words:
            self.cut = "words"
        return self.done

    def judge(self, piece: str, cosine: float | None = None) -> str | None:
        """The words of ``piece`` to say, or None (then ``done`` tells whether to go on).
        ``cosine``: the question's and the piece's MiniLM similarity, when known."""
        if self.done and self.cut != "words":
            return None
        text = self._unnamed(self._greeting(self._unlabelled(piece)))
        if not text:
            return None
        reason = hygiene.artifact(text, (self.user, self.agent))
        if reason is not None:
            return self._stop("format", f"{reason}: {text[:80]}")
        if invented(text, self.question):
            return self._stop("fact", text[:80])
        if claims(text, self.question):  # "I'll remind you": only a skill that did it may
            return self._stop("claim", text[:80])
        if _UNKIND.search(text):
            return self._stop("unkind", text[:80])
        apology = (not self.said and _APOLOGY.search(text)) or _SORRY.search(text)
        if _FILLER.search(text) or (apology and not _TROUBLE.search(self.question)):
            return self._stop("filler", text[:80])
        if self._echoes(text, cosine):
            return self._stop("echo", text[:80])
        if any(self._loops.repeats(s) for s in _sentences(text)):
            return self._stop("repeat", text[:80])
        if why := unfounded(text, self.question, self.grounds, (self.user, self.agent)):
            return self._stop("unfounded", f"{why}: {text[:80]}")  # fayd/agent/unfounded.py
        if self.cut == "words":  # the stream went past the bound: this piece may still fit
            return self._within(text)
        return self._accept(text)

    def doubtful(self, piece: str) -> bool:
        """The piece shares some of the question's words, not enough to call it an echo:
        worth asking the embedder whether it paraphrases the question."""
        return not self.done and DOUBT_RATIO <= echo_ratio(self.question, piece) < ECHO_RATIO

    def tail(self, pending: str) -> str | None:
        """What to say of the unfinished text the model was stopped in (over the word
        bound): nothing once something was said (half a second sentence sounds broken);
        else its start, up to its last comma within the bound."""
        if self.said or self.problem or self.cut != "words" or not pending.strip():
            return None
        return self.judge(pending)

    def _accept(self, text: str) -> str | None:
        said = sum(sentences_in(s) for s in self.said)
        if self.said and said + sentences_in(text) > self.bounds.sentences:
            # A piece may hold several sentences ("Oh! I do love roses."): not past the bound.
            self.cut = "sentences"
            return None
        self.said.append(text)
        if said + sentences_in(text) >= self.bounds.sentences:
            self.cut = "sentences"
        elif self.words >= self.bounds.words:
            self.cut = "words"
        return text

    def _within(self, text: str) -> str | None:
        if self.words + word_count(text) <= self.bounds.words:
            self.said.append(text)
            return text
        if self.said:
            return None
        words = text.split()
        left = self.bounds.words
        cut = " ".join(words[:left]) if len(words) > 1 else text[:left]
        breaks = [m.end() for m in _SOFT_BREAK.finditer(cut)]
        if breaks and word_count(cut[: breaks[-1]]) >= 3:
            cut = cut[: breaks[-1]]
        cut = cut.rstrip(" ,;:—，、；：")
        self.said.append(cut)
        return cut

    def _unlabelled(self, piece: str) -> str:
        """A first piece may start with the model's own label ("Fay: Hello!"): drop it."""
        text = piece.strip()
        if not self.said:
            for name in ("assistant", self.agent):
                m = re.match(rf"{re.escape(name)}\s*[:：]\s*", text, re.IGNORECASE)
                if m:
                    return text[m.end() :].strip()
        return text

    def _unnamed(self, text: str) -> str:
        """The model calls the user by its own name ("I'm sorry, Fay."): it mirrors the name
        it hears. The vocative goes ("I'm Fay" stays)."""
        name = re.escape(self.agent)
        text = re.sub(rf",\s*{name}(?=\s*[.!?,;]|\s*$)", "", text)
        text = re.sub(rf"^{name},\s*(\w)", lambda m: m[1].upper(), text)
        return text.strip()

    def _greeting(self, text: str) -> str:
        """A greeting returned ("Good morning, Fay." to "Good morning Fay."): the model
        mirrors the name it was greeted by; the greeting is kept, Fay's own name dropped."""
        if not set(hygiene.tokens(text)) <= GREETING | {self.user.lower(), self.agent.lower()}:
            return text
        name = re.escape(self.agent)
        return re.sub(rf"[,\s]*\b{name}\b", "", text, flags=re.IGNORECASE).strip(" ,")

    def _echoes(self, text: str, cosine: float | None) -> bool:
        if set(hygiene.tokens(text)) <= GREETING | {self.user.lower()}:
            return False  # a greeting returned is no echo
        if echo_ratio(self.question, text) >= ECHO_RATIO:
            return True
        if cosine is None:
            return False
        asked_back = text.rstrip("\"'”’ ").endswith(("?", "？"))
        return cosine >= (ECHO_QUESTION_COSINE if asked_back else ECHO_COSINE)

    def _stop(self, problem: str, detail: str) -> None:
        """Stop here; the problem counts against the attempt only if nothing was said."""
        if not self.said:
            self.problem = problem
        self.cut = problem
        self.detail = detail
