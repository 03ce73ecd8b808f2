"""Text that must not become a memory (or a reply): prompt-format fragments, template
placeholders, looping text, and claims the user never made.

A 135M model copies the prompt's own shapes: a recalled memory line ("- [2026/12/01 10:28:31]
User: …"), a speaker label, a chat-template token, a ``[user_persona_name]`` from an extraction
schema. Stored, such text comes back in every prompt and the model copies it again. These
checks are pure functions of the text, shared by the extraction (``extract.py``: what it
writes), context assembly (``context.py``: what it shows from older databases) and the chat
guard (``fayd.agent.guard``: what a reply may say and what is stored of it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

#: Chat-template tokens of the usual families (ChatML, Llama, Gemma, Mistral).
_TEMPLATE = re.compile(
    r"<\|[a-z_]+\|>|</?s>|\[/?INST\]|<start_of_turn>|<end_of_turn>|<</?SYS>>", re.IGNORECASE
)
#: The stamp of a recalled memory line: "[2026/12/01 10:28:31]", "[2026-12-01 10:28]".
_STAMP = re.compile(r"\[\d{4}[/-]\d{1,2}[/-]\d{1,2}[ T]\d{1,2}:\d{2}")
#: A template slot: "[user_persona_name]", "[Your Name]", "{name}", "<name>". Brackets have
#: no place in words that are spoken or kept as a note; a number in brackets ("[7]", a
#: timeline's conversation) is not a slot.
_PLACEHOLDER = re.compile(r"\[[^\[\]\d\s][^\[\]]{0,40}\]|\{[^{}]{0,40}\}|<[a-z_ ]{2,30}>", re.I)
#: Markup and stray brackets: HTML tags, a slot or a JSON fragment cut off ("[User's past",
#: "}, {"). Never in words that are spoken or kept as a note.
_MARKUP = re.compile(r"</?[a-z][a-z0-9]*(\s[^<>]*)?/?>|[\[\]{}<>]", re.IGNORECASE)
#: A role label as chat templates and transcripts write them.
_ROLES = ("user", "assistant", "system", "human", "ai", "bot")
#: Extraction categories written into a note's text ("user_persona: likes tea").
_CATEGORY = re.compile(r"\b(user|character)_persona\b|\bimportant_event\b|\brecent_digest\b")

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")

#: Words that carry no content of their own: a note sharing only these with what the user
#: said is not grounded in it (nor is a reply an echo for sharing them).
STOP_WORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been
    being am do does did have has had i me my mine you your yours we us our he him his she her
    it its they them their this that these those what which who whom whose when where why how
    not no yes so too very just also only really then than there here all any some much many
    more most can could would should will shall may might must let lets about into out up down
    over again one two now today im i'm i've i'd i'll you're you've it's that's dont don't
    oh well okay ok like likes liked love loves loved enjoy enjoys enjoyed feel feels felt
    want wants wanted think thinks thought know knows knew said says say tell told talk talks
    talked talking user users fay person people thing things something day favorite favourite
    hobby hobbies conversation conversations discussed mentioned shared asked lot good nice
    great""".split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased words, and every CJK character on its own (Chinese has no spaces)."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            out.extend(_split_cjk(word))
        else:
            out.append(word)
    return out


def _split_cjk(word: str) -> Iterable[str]:
    """A mixed run ("ok好的") as its Latin parts and single CJK characters."""
    latin = ""
    for ch in word:
        if _CJK.match(ch):
            if latin:
                yield latin
                latin = ""
            yield ch
        else:
            latin += ch
    if latin:
        yield latin


def artifact(text: str, speakers: Iterable[str] = (), roles: bool = True) -> str | None:
    """Why ``text`` is prompt format rather than words, or None: ``template`` (a chat
    template token), ``stamp`` (a recalled memory line), ``placeholder`` (a template slot),
    ``speaker`` (a role label or ``NAME:`` of one of ``speakers``; off with ``roles=False``
    for text that holds an exchange by design), ``category`` (an extraction category),
    ``markup`` (an HTML tag, a stray bracket)."""
    if _TEMPLATE.search(text):
        return "template"
    if _STAMP.search(text):
        return "stamp"
    if _PLACEHOLDER.search(text):
        return "placeholder"
    if _CATEGORY.search(text):
        return "category"
    if _MARKUP.search(text):
        return "markup"
    if roles:
        names = [*_ROLES, *(s.lower() for s in speakers if s.strip())]
        label = "|".join(re.escape(n) for n in names)
        if re.search(rf"(?:^|[\s\"'(])(?:{label})\s*[:：]", text, re.IGNORECASE):
            return "speaker"
    return None


def repeated_ngram(toks: Sequence[str], n: int = 4, times: int = 3) -> bool:
    """Some ``n`` tokens in a row occur ``times`` times (a model going round in a loop)."""
    if len(toks) < n * times:
        return False
    grams = Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))
    return max(grams.values()) >= times


def stuttering(toks: Sequence[str], longest: int = 8, times: int = 3) -> bool:
    """The text ends with one block of 2 to ``longest`` tokens said ``times`` times in a
    row ("I'm so sorry, I'm so sorry, I'm so sorry"). One-token repeats ("no, no, no") are
    speech, not a loop."""
    for p in range(2, longest + 1):
        span = p * times
        if len(toks) < span:
            break
        block = list(toks[-p:])
        if all(
            list(toks[-span + k * p : len(toks) - span + (k + 1) * p]) == block
            for k in range(times)
        ):
            return True
    return False


def looping(text: str) -> bool:
    """Whole text (a stored reply, a note): does it go round in a loop? Stricter than while
    a reply streams: in a short stored text, 6 tokens said twice already are one."""
    toks = tokens(text)
    return repeated_ngram(toks) or repeated_ngram(toks, 6, 2) or stuttering(toks)


def stem(word: str) -> str:
    """A crude stem, enough to match "takes" with "take", "visits" with "visited"."""
    for end in ("ing", "ed", "es", "s"):
        if len(word) > len(end) + 3 and word.endswith(end):
            return word[: -len(end)]
    return word


def content_terms(text: str, ignore: Iterable[str] = ()) -> set[str]:
    """Stems of the content words (no stop words, none of ``ignore``: names), and CJK
    character pairs."""
    skip = STOP_WORDS | {w.lower() for w in ignore}
    out = set()
    for word in _WORD.findall(text.lower()):
        if word.endswith("'s"):
            word = word[:-2]
        for run in _CJK_RUN.findall(word):
            out.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        word = _CJK_RUN.sub("", word)
        if len(word) > 2 and word not in skip:
            out.add(stem(word))
    return out


def grounding(claim: str, said: str, ignore: Iterable[str] = ()) -> float:
    """Share of ``claim``'s content terms found in ``said`` (0.0 when it has none: a note
    made of stop words and names says nothing worth keeping)."""
    terms = content_terms(claim, ignore)
    if not terms:
        return 0.0
    return len(terms & content_terms(said, ignore)) / len(terms)


def users_side(content: str, agent: str) -> str:
    """A remembered exchange ("Ann：… / Fay：…") without fayd's lines: what a portrait or a
    reflection may learn about the person from (fayd's reply is no evidence of their life:
    "I'll remember that my daughter Anna has her own tablets!" was the model's invention)."""
    labels = (f"{agent}：", f"{agent}:")
    return "\n".join(ln for ln in content.splitlines() if not ln.strip().startswith(labels))
