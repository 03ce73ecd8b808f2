"""MemoryFS automatic extraction (seed 002's ``nbot/core/auto_memory.py``): after every N
turns of a conversation the model reads them and writes what it learnt, by category.

    user_persona → append · character_persona → append · important_event → append (this
    conversation's; also a timeline entry ``[conv:ID]``, so the user's *other* conversations
    see it) · recent_digest → overwrite (a compressed digest of the old one and these turns)

The prompt holds the last N exchanges and, briefly, what the documents already hold (so the
model need not repeat it); the answer is ``{"memories": [{"category", "content"}]}`` under a
JSON-schema grammar. Parsing normalises MemoryFS's aliases (a server that ignores the
grammar may use them) and drops unknown categories, empty and duplicate items, and items the
document already holds. Every item is ``agent_derived``: one that reads like an instruction
to the model goes to the quarantine instead (approval replays it into its document). All
writes of one extraction are one transaction. A failed model call, an unparsable answer or
a shutdown meanwhile writes nothing, with a log line; the exchanges stay in the
conversation store either way.

Hygiene (:func:`drop_unfounded`, text checks in ``hygiene.py``): an item is dropped when it
holds a template slot ("The user's favorite hobby is [user_persona_name]"), prompt format
(a speaker label, a memory-line stamp, a category name, markup), a loop, reads as a reply
rather than a note ("You are so kind!", "I'm so sorry…"), or makes a claim the user did not:
each of its sentences must take at least :data:`GROUNDED` of its content words from the
user's own messages in the block (the reply of an exchange the chat guard rejected is not
even shown). Measured with the bundled SmolLM2-135M on 13 sessions of
``benchmarks/chitchat.py``'s small talk (two seeds) and two clean six-turn conversations
(three seeds): 68 items, of which a person would accept none as a note (loops, HTML and JSON
fragments, the model's replies in its own voice, template slots, a true fact with an
invented one after it). Before this filter all 68 would have been written (0 % acceptable);
after it none is (0 written). Well-formed, grounded notes pass (tests/test_chitchat.py).
With this model the extraction writes nearly nothing; a bigger model or a LAN server is
what makes it useful.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from fayd.llm import ChatLlm
from fayd.logwords import words
from fayd.memory import documents as docs
from fayd.memory import hygiene, mentioned, quarantine
from fayd.memory.budget import CountTokens, context_size, counter
from fayd.memory.provenance import AGENT, screen
from fayd.memory.tags import normalize_tags

log = logging.getLogger(__name__)

#: What the extraction writes, and how (MemoryFS's ``append=True`` / ``append=False``).
APPEND = ("user_persona", "character_persona", "important_event")
OVERWRITE = ("recent_digest",)
EXTRACTED = (*APPEND, *OVERWRITE)
MAX_ITEMS = 5
MAX_ITEM_CHARS = 160
#: Shorter items ("ok", "...") say nothing; longer ones (from a server that ignores the
#: grammar) are not notes.
MIN_ITEM_CHARS = 8
MAX_NOTE_CHARS = 1000
#: Room for MAX_ITEMS full items (an answer cut short is unparsable: nothing written).
ANSWER_TOKENS = 512
#: Most prompt tokens spent on what the documents already hold (the newest entries first).
KNOWN_TOKENS = 200
#: A longer message is cut for the prompt (the conversation store keeps it whole).
MESSAGE_CHARS = 600
SOURCE = "memory_extract"
#: Share of a note's content words that must come from the conversation (see
#: :func:`drop_unfounded`).
GROUNDED = 0.5

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "properties": {
                    "category": {"type": "string", "enum": list(EXTRACTED)},
                    "content": {
                        "type": "string",
                        "minLength": MIN_ITEM_CHARS,
                        "maxLength": MAX_ITEM_CHARS,
                    },
                },
                "required": ["category", "content"],
            },
        }
    },
    "required": ["memories"],
}
SYSTEM = "You are {agent}, a caring companion. You keep short notes about {user}."
PROMPT = (
    "{known}The latest conversation:\n{exchanges}\n\n"
    "Write new notes that are not already noted, each with a category:\n"
    "- user_persona: a lasting fact about {user} (likes, habits, family, health).\n"
    "- character_persona: how {user} feels about you and how you should treat them.\n"
    "- important_event: something that happened or was decided in this conversation.\n"
    "- recent_digest: one or two sentences summing up the recent conversations.\n"
    "Use only what the conversation says; leave a category out when there is nothing new.\n"
    'Answer as JSON {{"memories": [{{"category": "...", "content": "..."}}]}}.'
)
KNOWN_HEADERS = {
    "user_persona": "About {user} (user_persona)",
    "character_persona": "You and {user} (character_persona)",
    "important_event": "Events of this conversation (important_event)",
    "recent_digest": "Digest so far (recent_digest)",
}


@dataclass(frozen=True)
class Item:
    category: str
    text: str


# --- the conversation -------------------------------------------------------------------


def turns_done(db: sqlite_utils.Database, conversation: int) -> int:
    """Exchanges stored for ``conversation`` (``records.record_turn`` writes them in pairs),
    so the count survives a restart."""
    (messages,) = db.execute(
        "SELECT count(*) FROM messages WHERE conversation_id = ?", [conversation]
    ).fetchone()
    return int(messages) // 2


def due(turns: int, every: int) -> bool:
    return every > 0 and turns > 0 and turns % every == 0


def exchanges(
    db: sqlite_utils.Database, conversation: int, last: int, n: int
) -> list[tuple[str, str]]:
    """(question, answer) of exchanges ``last - n + 1`` … ``last`` (1-based), oldest first:
    the turns an extraction was due for, even if more were stored meanwhile. The answer of
    an exchange the guardrails rejected (``"rejected"`` in its meta: a loop, an echo, a
    fallback line) is left empty: what the user said counts, not what the model botched."""
    first = max(last - n, 0)
    rows = db.execute(
        "SELECT role, text, json_extract(meta, '$.rejected') FROM messages"
        " WHERE conversation_id = ? ORDER BY id LIMIT ? OFFSET ?",
        [conversation, 2 * (last - first), 2 * first],
    ).fetchall()
    pairs = zip(rows[::2], rows[1::2], strict=False)
    return [
        (q, "" if rejected else a)
        for (qr, q, _), (ar, a, rejected) in pairs
        if qr == "user" and ar == "assistant"
    ]


def known(db: sqlite_utils.Database, username: str, conversation: str) -> dict[str, list[str]]:
    """What the extracted documents hold now: category → entry texts, oldest first."""
    out = {}
    for cat in EXTRACTED:
        doc = docs.read(db, username, cat, conversation if cat in docs.PER_CONVERSATION else "")
        out[cat] = [e.text for e in doc.entries] if doc else []
    return out


# --- the prompt -------------------------------------------------------------------------


def _line(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def known_text(held: dict[str, list[str]], user: str, count: CountTokens, budget: int) -> str:
    """What the documents hold: of each, the newest entries that fit its share of
    ``budget`` tokens, whole lines only, oldest first."""
    parts = []
    for cat in EXTRACTED:
        lines: list[str] = []
        left = budget // len(EXTRACTED)
        for text in reversed(held.get(cat, [])):
            line = f"- {_line(text, MAX_ITEM_CHARS)}"
            left -= count(line) + 1
            if left < 0:
                break
            lines.insert(0, line)
        if lines:
            parts.append(KNOWN_HEADERS[cat].format(user=user) + ":\n" + "\n".join(lines))
    return "Already noted:\n" + "\n".join(parts) + "\n\n" if parts else ""


def build_messages(
    turns: list[tuple[str, str]],
    held: dict[str, list[str]],
    user: str,
    agent: str,
    count: CountTokens,
    n_ctx: int,
    answer_tokens: int = ANSWER_TOKENS,
) -> list[dict[str, str]]:
    """The extraction prompt; the oldest exchanges are left out (whole) when the model's
    context cannot hold them all. Empty when not even the newest fits."""
    system = SYSTEM.format(agent=agent, user=user)
    known_part = known_text(held, user, count, KNOWN_TOKENS)
    frame = PROMPT.format(known=known_part, exchanges="", user=user)
    budget = n_ctx - count(system) - count(frame) - answer_tokens - 64  # 64: chat template
    blocks: list[str] = []
    for question, answer in reversed(turns):
        block = f"{user}: {_line(question)}" + (f"\n{agent}: {_line(answer)}" if answer else "")
        cost = count(block) + 1
        if cost > budget:
            break
        blocks.insert(0, block)
        budget -= cost
    if not blocks:
        return []
    prompt = PROMPT.format(known=known_part, exchanges="\n".join(blocks), user=user)
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


# --- the answer -------------------------------------------------------------------------


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def parse_items(answer: str) -> list[Item] | None:
    """The answer's items, in order: known categories only (aliases normalised; timeline and
    life_sim are not the model's to write), trimmed, at least MIN_ITEM_CHARS, without
    repeats, at most MAX_ITEMS. None when the answer is not such an object at all."""
    try:
        data = json.loads(answer, strict=False)
    except (json.JSONDecodeError, TypeError):
        return None
    raw = data.get("memories") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        return None
    items: list[Item] = []
    seen: set[tuple[str, str]] = set()
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        cat = docs.normalize_category(entry.get("category"))
        text = entry.get("content", entry.get("text"))
        if cat not in EXTRACTED or not isinstance(text, str):
            continue
        text = " ".join(text.split())  # a note is one line
        if not MIN_ITEM_CHARS <= len(text) <= MAX_NOTE_CHARS or (cat, _key(text)) in seen:
            continue
        seen.add((cat, _key(text)))
        items.append(Item(cat, text))
    return items[:MAX_ITEMS]


def drop_echoes(items: list[Item], messages: list[dict[str, str]], user: str) -> list[Item]:
    """Items that only copy the prompt's own wording ("The latest conversation:", a category's
    description) are no notes: a small model writes them when it has nothing to say. Copying
    the conversation is fine: that is what the user said."""
    frame = _key(
        " ".join([messages[0]["content"], PROMPT.format(known="", exchanges="", user=user)])
    )
    return [i for i in items if _key(i.text).rstrip(".:!") not in frame]


#: A note is a statement about the user; one that speaks to them ("You are so kind!"), in
#: the model's own voice ("I'm so sorry…") or asks something is a reply copied, not a note.
_REPLY = re.compile(
    r"^\W*(i|i'm|i've|i'll|i'd|you|you're|you've|your|hello|hi|oh|dear|yes|no)\b|[!?]\W*$",
    re.IGNORECASE,
)


def drop_unfounded(
    items: list[Item], turns: list[tuple[str, str]], user: str, agent: str
) -> tuple[list[Item], list[dict[str, str]]]:
    """Items fit to keep, and the others with the reason. Out go template slots ("The user's
    favorite hobby is [user_persona_name]"), prompt format (speaker labels, memory-line stamps,
    category names), loops, and claims not grounded in what the user said: at least
    :data:`GROUNDED` of the content words of each of a note's sentences must come from the
    user's messages, and it may bring in no name, kin word or number they did not say
    (:func:`invented`). The model's own replies are no evidence of the user's life (a small
    model's digest copies them). Names and stop words do not count as content."""
    said = " ".join(q for q, _ in turns)
    kept, dropped = [], []
    for item in items:
        reason = hygiene.artifact(item.text, (user, agent))  # "Ann: …" is a transcript
        if reason is None and hygiene.looping(item.text):
            reason = "loop"
        if reason is None and _REPLY.search(item.text):
            reason = "reply"
        if reason is None:
            # Each sentence on its own: a true start does not carry an invented end ("Bob is
            # a carpenter. He's always making things with his two boys.").
            sentences = [x for x in re.split(r"(?<=[.!?;])\s+", item.text) if x.strip()]
            share = min(hygiene.grounding(x, said, (user, agent)) for x in sentences)
            if share < GROUNDED:
                reason = f"ungrounded ({share:.2f})"
        if reason is None and (new := invented(item.text, said, (user, agent))):
            reason = f"invented ({new})"
        if reason is None:
            kept.append(item)
        else:
            dropped.append({"category": item.category, "text": item.text, "reason": reason})
    return kept, dropped


_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][a-z]+)(?:'s)?(?![\w'])")
_NUMBER = re.compile(r"\d+(?:[.:/]\d+)*")


def invented(note: str, said: str, names: tuple[str, ...]) -> str | None:
    """A name, a kin word or a number in ``note`` that the person's own words (``said``)
    do not have: "Anna", "daughter", "20". A note may paraphrase; it may not bring in a
    person or a figure (the model's reply "my daughter Anna has her own tablets" must not
    become a note about the person)."""
    heard = said.lower()
    heard_words = {hygiene.stem(w) for w in re.findall(r"[a-z]+", heard)}
    skip = {n.lower() for n in names} | {"user", "fay"}
    starts = {m.end() for m in re.finditer(r"(?:^|[.!?;:]\s+)", note)}
    for m in _CAPITALISED.finditer(note):
        word = m.group(1).lower()
        if word in skip or word in hygiene.STOP_WORDS or hygiene.stem(word) in heard_words:
            continue
        if m.start() in starts and word.endswith(("s", "ed", "ing", "ly")):
            continue  # "Enjoys gardening": a verb that starts the note, not a name
        return m.group(1)
    for word in re.findall(r"[a-z][a-z-]+", note.lower()):
        if (mentioned.canonical_role(word) or "") in mentioned.ROLES.values() and word != "pet":
            if hygiene.stem(word) not in heard_words and word not in heard:
                return word
    for role in mentioned.ROLES_ZH:
        if role in note and role not in said:
            return role
    for number in _NUMBER.findall(note):
        if number not in said:
            return number
    return None


# --- the writes -------------------------------------------------------------------------


def _targets(cat: str, conversation: str) -> list[tuple[str, str]]:
    """(category, conversation) of each document an item goes to."""
    if cat == "important_event":
        return [(cat, conversation), ("timeline", conversation)]
    return [(cat, conversation if cat in docs.PER_CONVERSATION else "")]


def _holds(db: sqlite_utils.Database, user: str, cat: str, conv: str, text: str) -> bool:
    doc = docs.read(db, user, cat, conv)
    if doc is None:
        return False
    entries = [e for e in doc.entries if cat != "timeline" or e.conversation == conv]
    return any(_key(e.text) == _key(text) for e in entries)


def _append(db: sqlite_utils.Database, user: str, item: Item, conv: str, now: float) -> bool:
    """Append to each target that does not hold it yet; False when none needed it."""
    wrote = False
    for cat, target in _targets(item.category, conv):
        if _holds(db, user, cat, target, item.text):
            continue
        entry = docs.make_entry(cat, item.text, target, None, now)
        docs.save(db, user, cat, target, [entry], False, now)
        wrote = True
    return wrote


def _held_payload(user: str, item: Item, conv: str) -> dict[str, Any]:
    tags = normalize_tags(
        "observation", SOURCE, False, [f"session:{conv}", f"trust:{AGENT}"]
    )  # shown by ``fayd memory quarantine list``
    return {
        "username": user,
        "content": item.text,
        "node_type": "observation",
        "tags": tags,
        "trust": AGENT,
        "source": SOURCE,
        "document": {"category": item.category, "conversation": conv},
    }


def write_items(
    db: sqlite_utils.Database, username: str, conversation: str, items: list[Item], now: float
) -> dict[str, Any]:
    """Write ``items`` (one transaction: run it with ``Store.call``): screened, appended or
    (recent_digest) replacing the digest, repeats of what a document holds skipped."""
    written: list[dict[str, str]] = []
    held: list[int] = []
    repeated = 0
    digest: list[Item] = []
    for item in items:
        reason = screen(item.text, AGENT)
        if reason is not None:
            payload = _held_payload(username, item, conversation)
            held.append(quarantine.put(db, "node", payload, reason, now))
            # The reason may quote the text (the phrase that reads like an instruction).
            log.warning(
                "extracted %s held for review (%s)", item.category, reason.partition(":")[0]
            )
            log.debug("extracted %s held for review: %s", item.category, words(reason))
        elif item.category in OVERWRITE:
            digest.append(item)
        elif _append(db, username, item, conversation, now):
            written.append({"category": item.category, "text": item.text})
        else:
            repeated += 1
    if digest:
        old = docs.read(db, username, "recent_digest", "")
        texts = [i.text for i in digest]
        if old is not None and [_key(e.text) for e in old.entries] == [_key(t) for t in texts]:
            repeated += len(digest)
        else:
            entries = [docs.make_entry("recent_digest", t, "", None, now) for t in texts]
            docs.save(db, username, "recent_digest", "", entries, True, now)
            written += [{"category": "recent_digest", "text": t} for t in texts]
    return {"written": written, "quarantined": held, "repeated": repeated}


def write_held(
    db: sqlite_utils.Database, payload: dict[str, Any], now: float
) -> tuple[dict[str, Any], None]:
    """Replay a quarantined item (``quarantine.approve``): the write it would have been.
    Returns the document's summary and no row id (an entry has none of its own)."""
    item = Item(docs.category(payload["document"]["category"]), payload["content"])
    user, conv = payload["username"], payload["document"]["conversation"]
    if item.category in OVERWRITE:
        entry = docs.make_entry(item.category, item.text, "", None, now)
        return docs.save(db, user, item.category, "", [entry], True, now), None
    _append(db, user, item, conv, now)
    cat, target = _targets(item.category, conv)[0]
    doc = docs.read(db, user, cat, target)
    return (doc.summary() if doc else {}), None


# --- the whole run ----------------------------------------------------------------------


def run_extraction(
    store: Any,
    llm: ChatLlm | None,
    username: str,
    conversation: int,
    turns: int,
    every: int,
    agent_name: str = "Fay",
    stop: threading.Event | None = None,
    now: float | None = None,
    answer_tokens: int = ANSWER_TOKENS,
) -> dict[str, Any]:
    """Extract from exchanges ``turns - every + 1`` … ``turns`` of ``conversation`` and write
    (blocking: a worker thread). The model is asked as background work (the user's turns go
    first); ``stop`` (shutdown) abandons the run. Never raises: returns what happened."""
    conv = str(conversation)
    span = f"turns {max(turns - every, 0) + 1}-{turns} of conversation {conv} for {username}"
    report: dict[str, Any] = {"user": username, "conversation": conv, "turns": turns}
    try:
        pairs = store.call(exchanges, conversation, turns, every)
        held = store.call(known, username, conv)
    except Exception as exc:  # e.g. the store closed at shutdown
        log.error("memory extraction from %s could not read: %s", span, exc)
        return {**report, "error": str(exc)}
    count = counter(llm)
    messages = build_messages(
        pairs, held, username, agent_name, count, context_size(llm), answer_tokens
    )
    if not messages:
        log.warning("memory extraction from %s skipped: no exchange fits the model", span)
        return {**report, "skipped": "nothing fits"}
    try:
        answer = llm.chat(
            messages,
            max_tokens=answer_tokens,
            temperature=0.2,
            response_format={"type": "json_object", "schema": SCHEMA},
            stop=stop,
            background=True,
        )
    except Exception as exc:  # a failed model must not cost the conversation anything
        log.warning("memory extraction from %s failed, nothing written: %s", span, exc)
        return {**report, "error": str(exc)}
    if stop is not None and stop.is_set():
        log.info("memory extraction from %s abandoned at shutdown", span)
        return {**report, "abandoned": True}
    items = parse_items(answer)
    report["answer"] = answer
    if items is None:
        log.warning("memory extraction from %s: unparsable answer (%d chars)", span, len(answer))
        log.debug("memory extraction from %s: the unparsable answer: %s", span, words(answer))
        return {**report, "error": "unparsable answer"}
    items, unfounded = drop_unfounded(
        drop_echoes(items, messages, username), pairs, username, agent_name
    )
    for gone in unfounded:
        log.info(
            "extracted %s dropped (%s): %s", gone["category"], gone["reason"], words(gone["text"])
        )
        log.debug("extracted %s dropped, its words: %s", gone["category"], words(gone["text"]))
    stamp = time.time() if now is None else now
    try:
        result = store.call(write_items, username, conv, items, stamp)
    except Exception as exc:  # the transaction rolled back: nothing written
        log.error("memory extraction from %s could not write: %s", span, exc)
        return {**report, "error": str(exc)}
    log.info(
        "memory extraction from %s: %d written, %d held for review, %d already noted",
        span,
        len(result["written"]),
        len(result["quarantined"]),
        result["repeated"],
    )
    return {**report, "items": [vars(i) for i in items], "dropped": unfounded, **result}
