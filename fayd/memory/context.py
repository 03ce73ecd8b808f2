"""Context assembly: everything memory injects into a turn's prompt, under a token budget.

Sections, in prompt order: active rules, the portrait, the MemoryFS documents in their
injection order (user_persona 10, character_persona 20, important_event 30, timeline 35,
life_sim 38, recent_digest 40: ``documents.py``), facts valid now, this session's working
memory, playbooks, then the retrieved nodes split by type as Fay does (observations,
conversations, reflections; at most 10 each, oldest first, ``[datetime]`` prefixed). The
documents come before the recalled nodes as in MemoryFS (priority 58, before the old
memory's 60).

Over budget (counted with the model's own tokenizer), entries go least valuable first:
first *compressed* (a conversation keeps only the user's words, a playbook its title and
summary), then *dropped* whole — an entry is never cut in half. Value, lowest first:
retrieved nodes (by their retrieval score: less relevant, older, less important go first),
playbooks and facts (by word overlap with the question), working memory (oldest note
first), the portrait, and last the rules (least important first). The documents sit among
them (``DOC_BASE``): life_sim and timeline just above the recalled nodes, the digest and this
conversation's events beside the facts, the personas between working memory and the
portrait; inside a document the oldest entry goes first, as MemoryFS truncates.

Everything but playbooks (written by the people who run fayd) is screened again here:
content that reads like an instruction to the model is left out, whatever path stored it;
so are a degenerate reply's traces from before the chat guardrails (a template slot, a
recalled memory line copied into a reply, a loop: ``hygiene.py``), which the model would
copy again.
Nodes of the current session are left out too: the chat history already holds them.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime as dt
from pathlib import Path
from typing import Any

from fayd.logwords import words
from fayd.memory import documents as docs
from fayd.memory import hygiene
from fayd.memory import playbooks as pb
from fayd.memory.budget import CountTokens
from fayd.memory.facts import Facts
from fayd.memory.port import MemoryPort
from fayd.memory.provenance import looks_like_instruction
from fayd.memory.working import Working

log = logging.getLogger(__name__)

#: Fay's chat path: 30 candidates, at most 10 per node type.
CANDIDATES = 30
PER_TYPE = 10
MAX_FACTS = 200
SECTIONS = {
    "rules": "Rules {user} asked you to follow:",
    "portrait": "About {user}:",
    **{f"doc:{c}": docs.HEADERS["en"][c] for c in docs.CATEGORIES},
    "facts": "What you know about {user} (true now):",
    "working": "Notes for this conversation:",
    "playbooks": "How to handle situations:",
    "observation": "Things you remember:",
    "conversation": "Earlier conversations with {user}:",
    "reflection": "Your reflections:",
}
# Base value of each section: an entry's value is its base plus a score in [0, 1).
BASE = {"rules": 5, "portrait": 4, "working": 3, "facts": 2, "playbooks": 2}
# A document entry's value: its base plus up to 0.2, the newest entry worth the most.
DOC_BASE = {
    "user_persona": 3.5,
    "character_persona": 3.2,
    "important_event": 2.6,
    "recent_digest": 2.3,
    "timeline": 1.5,
    "life_sim": 1.2,
}
_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]+")
_STOP = frozenset(
    "the and for you your are was were with what when where who how does did have has this "
    "that from about can could would will not but all any she her his him they them their "
    "our its it's i'm my me".split()
)


@dataclass
class Entry:
    section: str
    text: str
    value: float
    short: str | None = None  # the compressed form, if it has one
    node_id: int | None = None
    order: float = 0.0  # position inside its section
    compressed: bool = False
    dropped: bool = False

    @property
    def shown(self) -> str:
        return self.short if self.compressed and self.short else self.text


def terms(text: str) -> set[str]:
    """Words (English, 3+ letters, no stop words) and character bigrams (Chinese)."""
    low = text.lower()
    words = {w for w in _WORD.findall(low) if len(w) > 2 and w not in _STOP}
    for run in _CJK.findall(low):
        words.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return words


def overlap(question: set[str], text: str) -> float:
    """Share of the question's terms found in ``text``, in [0, 1]."""
    return len(question & terms(text)) / len(question) if question else 0.0


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _safe(text: str, what: str) -> bool:
    phrase = looks_like_instruction(text)
    if phrase:
        log.warning("context: %s left out, it reads like an instruction", what)
        log.debug("context: %s left out for %s", what, words(phrase))
    return phrase is None


def _clean(text: str, what: str) -> bool:
    """Not a degenerate reply's trace (prompt format, a template slot, a loop) in a
    remembered exchange or a note. Speaker labels are fine here: a conversation node is
    "Ann：… / Fay：…" by design."""
    junk = hygiene.artifact(text, roles=False) or ("loop" if hygiene.looping(text) else None)
    if junk:
        log.info("context: %s left out (%s)", what, junk)
    return junk is None


def _rules(memory: MemoryPort, user: str) -> list[Entry]:
    out = []
    for i, node in enumerate(memory.get_active_rules(user, n=50)):
        if _safe(node["content"], f"rule #{node['node_id']}"):
            value = BASE["rules"] + min(float(node["importance"]), 10) / 11
            text = f"- {_one_line(node['content'])}"
            out.append(Entry("rules", text, value, node_id=node["node_id"], order=i))
    return out


def _portrait(memory: MemoryPort, user: str) -> list[Entry]:
    text = memory.get_user_profile(user)["portrait"].strip()
    if text and _safe(text, "portrait"):
        return [Entry("portrait", text, BASE["portrait"])]
    return []


def _facts(memory: MemoryPort, user: str, q: set[str], now: float) -> list[Entry]:
    out = []
    facts = Facts(memory).as_of(now, user)[:MAX_FACTS]  # newest first
    for i, f in enumerate(facts):
        if not _safe(f.text(), f"fact #{f.id}"):
            continue
        since = dt.fromtimestamp(f.valid_from).strftime("%Y-%m-%d")
        text = f"- {f.subject} {f.predicate} {f.object} (since {since})"
        # Relevance first; among equals, the newest fact is worth a little more.
        value = BASE["facts"] + 0.9 * overlap(q, f.text()) + 0.09 / (1 + i)
        out.append(Entry("facts", text, value, order=-f.valid_from))
    return out


def _working(memory: MemoryPort, user: str, session: str, now: float) -> list[Entry]:
    out = []
    notes = Working(memory).get(session, user, now)  # newest first
    for i, note in enumerate(notes):
        value = note["value"]
        shown = value if isinstance(value, str) else _json(value)
        text = f"- {note['key']}: {_one_line(shown)}"
        if _safe(text, f"working note {note['key']!r}"):
            out.append(Entry("working", text, BASE["working"] + 0.9 / (1 + i), order=i))
    return out


def _documents(memory: MemoryPort, user: str, session: str) -> list[Entry]:
    """The MemoryFS documents injected for this conversation (already selected: timeline
    newest 2 per other conversation, life_sim newest 5), one Entry per document entry."""
    out = []
    for sec in docs.Documents(memory.store).sections(user, session):
        n = len(sec.lines)
        for i, (entry, line) in enumerate(zip(sec.entries, sec.lines, strict=True)):
            what = f"{sec.category} entry #{entry.id}"
            if _safe(line, what) and _clean(entry.text, what):
                value = DOC_BASE[sec.category] + 0.2 * (i + 1) / (n + 1)
                out.append(Entry(f"doc:{sec.category}", line, value, order=i))
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _playbooks(folder: str | Path | None, user: str, q: set[str]) -> list[Entry]:
    out = []
    for i, book in enumerate(pb.load(folder, user)):
        rel = overlap(q, f"{book.title} {book.body}")
        text = f"### {book.title}\n{book.body}".strip()
        short = f"### {book.title}\n{book.summary}".strip()
        out.append(
            Entry(
                "playbooks",
                text,
                BASE["playbooks"] + 0.9 * rel,
                short if short != text else None,
                order=i,
            )
        )
    return out


def _nodes(
    memory: MemoryPort,
    user: str,
    question: str,
    session: str,
    now: float,
    weights: Any,
    skip: set[int],
) -> list[Entry]:
    if not question.strip():
        return []
    weights = weights or memory.cfg.chat_weights
    hits = memory.search(question, user, n=CANDIDATES, stateless=True, weights=weights, now=now)
    total = sum(weights) or 1.0
    per_type: dict[str, int] = {}
    out = []
    for hit in hits:  # best first
        kind = hit["node_type"]
        if hit["node_id"] in skip or f"session:{session}" in hit["tags"]:
            continue
        if per_type.get(kind, 0) >= PER_TYPE:
            continue
        what = f"node #{hit['node_id']}"
        if not (_safe(hit["content"], what) and _clean(hit["content"], what)):
            continue
        per_type[kind] = per_type.get(kind, 0) + 1
        stamp = f"[{hit['datetime']}] " if hit["datetime"] else ""
        lines = [ln.strip() for ln in hit["content"].splitlines() if ln.strip()]
        text = f"- {stamp}{' / '.join(lines)}"
        short = f"- {stamp}{lines[0]}" if kind == "conversation" and len(lines) > 1 else None
        value = min(max(hit["score"] / total, 0.0), 0.999)
        out.append(Entry(kind, text, value, short, hit["node_id"], order=hit["created"]))
    return out


def section_headers(docs_lang: str = "en") -> dict[str, str]:
    """Every section's header in prompt order; the documents' in ``docs_lang`` (``zh``:
    MemoryFS's own)."""
    heads = docs.headers(docs_lang)
    return {s: heads[s[4:]] if s.startswith("doc:") else h for s, h in SECTIONS.items()}


def render(entries: list[Entry], user: str, headers: dict[str, str] | None = None) -> str:
    parts = []
    for section, header in (headers or SECTIONS).items():
        kept = sorted((e for e in entries if e.section == section and not e.dropped), key=_pos)
        if kept:
            parts.append(header.format(user=user) + "\n" + "\n".join(e.shown for e in kept))
    return "\n\n".join(parts)


def _pos(e: Entry) -> float:
    return e.order


def pack(
    entries: list[Entry],
    budget: int,
    count: CountTokens,
    user: str,
    headers: dict[str, str] | None = None,
) -> str:
    """Compress, then drop, least valuable first, until the text fits ``budget`` tokens."""
    headers = headers or SECTIONS
    if budget <= 0:
        for e in entries:
            e.dropped = True
        return ""
    cost: dict[str, int] = {}

    def c(text: str) -> int:
        if text not in cost:
            cost[text] = count(text) + 1  # +1: the newline that joins it
        return cost[text]

    cost_of = {s: c(h.format(user=user)) + 1 for s, h in headers.items()}

    def estimate() -> int:
        live = [e for e in entries if not e.dropped]
        return sum(c(e.shown) for e in live) + sum(cost_of[s] for s in {e.section for e in live})

    cheapest_first = sorted(entries, key=lambda e: e.value)
    for e in cheapest_first:  # 1: compress
        if estimate() <= budget:
            break
        if e.short:
            e.compressed = True
    for e in cheapest_first:  # 2: drop whole entries
        if estimate() <= budget:
            break
        e.dropped = True
    text = render(entries, user, headers)
    # The sum of the parts' counts is an estimate: the real count of the whole decides.
    for e in cheapest_first:
        if not text or count(text) <= budget:
            break
        if not e.dropped:
            e.dropped = True
            text = render(entries, user, headers)
    return text


def collect(
    memory: MemoryPort,
    user: str,
    question: str,
    session: str,
    now: float,
    playbooks_dir: str | Path | None = None,
    weights: Any = None,
) -> list[Entry]:
    """Every candidate entry, unpacked (for tests and for inspection)."""
    q = terms(question)
    rules = _rules(memory, user)
    shown = {e.node_id for e in rules if e.node_id is not None}  # a rule is not shown twice
    return [
        *rules,
        *_portrait(memory, user),
        *_documents(memory, user, session),
        *_facts(memory, user, q, now),
        *_working(memory, user, session, now),
        *_playbooks(playbooks_dir, user, q),
        *_nodes(memory, user, question, session, now, weights, shown),
    ]


def assemble(
    memory: MemoryPort,
    user: str,
    question: str,
    session: Any,
    budget_tokens: int,
    count_tokens: CountTokens,
    *,
    playbooks_dir: str | Path | None = None,
    weights: tuple[float, float, float] | None = None,
    stateless: bool = False,
    now: float | None = None,
    docs_lang: str = "en",
) -> str:
    """The memory context of one turn, at most ``budget_tokens`` tokens ("" if none).

    Blocking (SQLite, the embedder): call it in a worker thread. Unless ``stateless``, the
    nodes that made it into the text are marked retrieved (recency), the others are not.
    ``docs_lang`` picks the documents' headers: ``en`` (like the other sections) or ``zh``
    (MemoryFS's own, for a Chinese prompt).
    """
    now = time.time() if now is None else now
    user = memory.resolve_user(user)
    entries = collect(memory, user, question, str(session), now, playbooks_dir, weights)
    text = pack(entries, budget_tokens, count_tokens, user, section_headers(docs_lang))
    if not stateless:
        used = [e.node_id for e in entries if e.node_id is not None and not e.dropped]
        if used:
            memory.mark_retrieved(user, used, now)
    return text
