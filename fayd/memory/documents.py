"""MemoryFS documents (seed 002): per-user categorised documents injected in a fixed order.

Six categories, each with MemoryFS's injection order number::

    user_persona 10 · character_persona 20 · important_event 30 · timeline 35 ·
    life_sim 38 · recent_digest 40

A document is a list of **entries** (MemoryFS's ``\\n\\n``-separated blocks of one file), one
row each in ``memory_document_entries``, so an entry is never split or cut. Keys: one
document per user for ``user_persona``, ``character_persona``, ``recent_digest`` and
``timeline`` (whose entries each name the conversation they come from); one per user *and*
conversation for ``important_event`` and ``life_sim`` (MemoryFS's ``events/{conv}.md`` and
``life_sim/{conv}.md``). fayd has one character (Fay), so MemoryFS's ``characters/{char_id}/``
root is not kept.

Truncation on every write (MemoryFS's 截断策略): the oldest whole entries are dropped until
the document holds at most ``MAX_ENTRIES`` entries (life_sim 10, timeline 80, the others no
limit) and ``MAX_CHARS`` = 4000 characters of its file form (entries joined by ``\\n\\n``).
An entry longer than 4000 characters by itself could never be kept whole: it is refused.

Injection for a turn of conversation ``session``: the user's personas, the events of this
conversation, the timeline of the *other* conversations (newest 2 per conversation, at most
10), this conversation's life moments (newest 5), the digest — each under its header
(MemoryFS's Chinese, or an English translation for English prompts).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlite_utils

from fayd.memory.errors import BadInput

#: The categories in injection order, with MemoryFS's order numbers.
ORDER = {
    "user_persona": 10,
    "character_persona": 20,
    "important_event": 30,
    "timeline": 35,
    "life_sim": 38,
    "recent_digest": 40,
}
CATEGORIES = tuple(ORDER)
#: Kept per user and conversation (MemoryFS's ``events/{conv}.md``, ``life_sim/{conv}.md``).
PER_CONVERSATION = frozenset({"important_event", "life_sim"})
#: Entries written ``[YYYY-MM-DD HH:MM] …`` (timeline: ``[…] [conv:ID] …``), one line each.
STAMPED = frozenset({"timeline", "life_sim"})

#: MemoryFS's truncation table: ``life_sim`` 10 entries, ``timeline`` 80, 其他 (every other
#: category) no entry limit; 4000 characters for all.
MAX_ENTRIES: dict[str, int | None] = {"life_sim": 10, "timeline": 80}
MAX_CHARS = 4000
#: Timeline injection: per other conversation the newest 2 entries, at most 10 in all.
TIMELINE_PER_CONVERSATION = 2
TIMELINE_MAX = 10
#: life_sim injection: the newest 5 (``_MAX_LIFE_SIM_INJECT``).
LIFE_SIM_INJECT = 5

#: MemoryFS's aliases (its 别名映射 table and the Chinese labels of its category table).
ALIASES = {
    "user_persona": (
        "user", "user_profile", "user_preference", "persona_user",
        "用户人格", "用户人格记忆", "用户画像", "偏好画像",
    ),
    "character_persona": (
        "character", "character_profile", "relationship", "persona_character",
        "角色人格", "角色人格记忆", "关系理解",
    ),
    "important_event": (
        "event", "events", "plot", "plot_summary", "world_event",
        "重要事件", "剧情节点", "剧情摘要",
    ),
    "timeline": ("timeline_event", "timeline_event_other", "时间线", "跨会话时间线"),
    "life_sim": ("life_event", "life_sim_event", "heartbeat_life", "角色生活片段", "生活片段"),
    "recent_digest": (
        "digest", "summary", "dialogue_digest", "diary",
        "近期摘要", "近期对话摘要", "近期对话压缩摘要",
    ),
}  # fmt: skip
_ALIAS = {a: c for c, names in ALIASES.items() for a in (c, *names)}

_STAMP_FMT = "%Y-%m-%d %H:%M"
_STAMP = re.compile(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\][ \t]*")
_CONV = re.compile(r"\[conv:([^\s\[\]]+)\][ \t]*")
_CONV_ID = re.compile(r"[^\s\[\]]{1,200}")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")


def normalize_category(value: Any) -> str:
    """A category name or alias (English or Chinese, any case, ``-``/space for ``_``, in
    【】 or not) → the category; ``""`` when it is none of them (MemoryFS's
    ``normalize_memory_category``)."""
    if not isinstance(value, str):
        return ""
    key = value.strip().strip("【】[]").strip().lower()
    key = re.sub(r"[\s\-]+", "_", key)
    return _ALIAS.get(key, "")


def category(value: Any) -> str:
    """The category ``value`` names, or BadInput listing the accepted names."""
    name = normalize_category(value)
    if not name:
        raise BadInput(f"unknown document category {value!r} (one of {', '.join(CATEGORIES)})")
    return name


# --- entries --------------------------------------------------------------------------------


@dataclass
class Entry:
    """One entry of a document: ``at`` (UTC epoch) orders it, ``conversation`` is the one it
    comes from (timeline) or belongs to."""

    text: str
    at: float
    conversation: str = ""
    id: int | None = None

    def stamp(self) -> str:
        return datetime.fromtimestamp(self.at).strftime(_STAMP_FMT)  # local time, as written

    def line(self, category: str) -> str:
        """Its form in the document's file (MemoryFS's ``.md``)."""
        if category == "timeline":
            return f"[{self.stamp()}] [conv:{self.conversation}] {self.text}"
        if category == "life_sim":
            return f"[{self.stamp()}] {self.text}"
        return self.text


@dataclass
class Document:
    username: str
    category: str
    conversation: str
    version: int
    updated_at: float
    entries: list[Entry] = field(default_factory=list)  # oldest first

    def text(self) -> str:
        """The file form: entries separated by a blank line."""
        return file_text(self.category, self.entries)

    def summary(self) -> dict[str, Any]:
        return {
            "username": self.username,
            "category": self.category,
            "order": ORDER[self.category],
            "conversation": self.conversation,
            "entries": len(self.entries),
            "chars": len(self.text()),
            "version": self.version,
            "updated_at": self.updated_at,
        }


def file_text(category: str, entries: list[Entry]) -> str:
    return "\n\n".join(e.line(category) for e in entries)


def truncate(category: str, entries: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """(kept, dropped): the oldest whole entries go until at most ``MAX_ENTRIES[category]``
    entries and ``MAX_CHARS`` characters of file form remain. ``entries`` oldest first."""
    limit = MAX_ENTRIES.get(category)
    sizes = [len(e.line(category)) for e in entries]
    chars = sum(sizes) + 2 * max(len(entries) - 1, 0)
    start = 0
    while start < len(entries) and (
        (limit is not None and len(entries) - start > limit) or chars > MAX_CHARS
    ):
        chars -= sizes[start] + (2 if start < len(entries) - 1 else 0)
        start += 1
    return entries[start:], entries[:start]


def _clean(category: str, text: Any) -> str:
    if not isinstance(text, str):
        raise BadInput("an entry must be text")
    if category in STAMPED:
        return " ".join(text.split())  # one line, like MemoryFS's ``- [time] …`` items
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    # A blank line would split it into two entries in the file form: keep it one entry.
    return "\n".join(ln for ln in lines if ln.strip())


def _conversation(value: Any) -> str:
    if value is None or value == "":
        return ""
    value = str(value)
    if not _CONV_ID.fullmatch(value):
        raise BadInput(f"a conversation id has no spaces or brackets: {value!r}")
    return value


def parse_stamp(stamp: str) -> float:
    try:
        return datetime.strptime(stamp, _STAMP_FMT).timestamp()
    except ValueError as exc:
        raise BadInput(f"bad time [{stamp}] (expected YYYY-MM-DD HH:MM)") from exc


def make_entry(
    category: str, text: Any, conversation: Any = "", at: float | None = None, now: float = 0.0
) -> Entry:
    """An entry from its text. For timeline and life_sim a leading ``[YYYY-MM-DD HH:MM]``
    (and for timeline ``[conv:ID]``) is parsed out of the text; explicit arguments win."""
    conv = _conversation(conversation)
    if isinstance(text, str) and category in STAMPED:
        text = text.strip()
        m = _STAMP.match(text)
        if m:
            at = parse_stamp(m[1]) if at is None else at
            text = text[m.end() :]
        m = _CONV.match(text) if category == "timeline" else None
        if m:
            conv = conv or m[1]
            text = text[m.end() :]
    clean = _clean(category, text)
    if not clean:
        raise BadInput(f"an empty {category} entry")
    when = now if at is None else at
    if isinstance(when, bool) or not isinstance(when, int | float) or not math.isfinite(when):
        raise BadInput(f"bad entry time: {at!r}")
    if category == "timeline" and not conv:
        raise BadInput("a timeline entry names its conversation ([conv:ID] or --conversation)")
    entry = Entry(clean, float(when), conv)
    if len(entry.line(category)) > MAX_CHARS:
        raise BadInput(f"an entry is at most {MAX_CHARS} characters (it is never cut)")
    return entry


def split_entries(category: str, text: str) -> list[str]:
    """A document's file form → its entries' texts: blocks between blank lines; in the
    stamped categories also every line that starts with ``[YYYY-MM-DD HH:MM]``."""
    if not isinstance(text, str):
        raise BadInput("a document must be text")
    blocks = [b for b in _BLANK_LINES.split(text.strip()) if b.strip()]
    if category not in STAMPED:
        return blocks
    out: list[str] = []
    for block in blocks:
        current: list[str] = []
        for line in block.splitlines():
            if _STAMP.match(line.strip()) and current:
                out.append(" ".join(current))
                current = []
            current.append(line.strip())
        out.append(" ".join(current))
    return out


# --- SQLite ---------------------------------------------------------------------------------


def _key(username: Any, cat: str, conversation: Any) -> tuple[str, str]:
    if not isinstance(username, str) or not username.strip():
        raise BadInput("username must be a non-empty string")
    conv = _conversation(conversation)
    if cat in PER_CONVERSATION:
        if not conv:
            raise BadInput(f"{cat} is kept per conversation: name the conversation")
        return username, conv
    return username, ""


def _doc_row(db: sqlite_utils.Database, username: str, cat: str, conv: str) -> tuple | None:
    return db.execute(
        "SELECT id, version, updated_at FROM memory_documents"
        " WHERE username = ? AND category = ? AND conversation = ?",
        [username, cat, conv],
    ).fetchone()


def _entries(db: sqlite_utils.Database, doc_id: int) -> list[Entry]:
    rows = db.execute(
        "SELECT id, at, conversation, text FROM memory_document_entries"
        " WHERE document_id = ? ORDER BY at, id",
        [doc_id],
    )
    return [Entry(text, at, conv, i) for i, at, conv, text in rows]


def save(
    db: sqlite_utils.Database,
    username: str,
    cat: str,
    conversation: str,
    new: list[Entry],
    replace: bool,
    now: float,
) -> dict[str, Any]:
    """Add ``new`` (after deleting every entry if ``replace``), truncate, bump the version —
    one transaction (the Store's). Returns the document's summary and how many entries the
    truncation dropped."""
    user, conv = _key(username, cat, conversation)
    row = _doc_row(db, user, cat, conv)
    if row is None:
        doc_id = db.execute(
            "INSERT INTO memory_documents (username, category, conversation, version,"
            " updated_at) VALUES (?, ?, ?, 0, ?)",
            [user, cat, conv, now],
        ).lastrowid
    else:
        doc_id = row[0]
    if replace:
        db.execute("DELETE FROM memory_document_entries WHERE document_id = ?", [doc_id])
    db.conn.executemany(
        "INSERT INTO memory_document_entries (document_id, at, conversation, text, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(doc_id, e.at, e.conversation or conv, e.text, now) for e in new],
    )
    _, dropped = truncate(cat, _entries(db, doc_id))
    db.conn.executemany(
        "DELETE FROM memory_document_entries WHERE id = ?", [(e.id,) for e in dropped]
    )
    db.execute(
        "UPDATE memory_documents SET version = version + 1, updated_at = ? WHERE id = ?",
        [now, doc_id],
    )
    doc = read(db, user, cat, conv)
    assert doc is not None
    return {**doc.summary(), "dropped": len(dropped)}


def read(
    db: sqlite_utils.Database, username: str, cat: str, conversation: str = ""
) -> Document | None:
    user, conv = _key(username, cat, conversation)
    row = _doc_row(db, user, cat, conv)
    if row is None:
        return None
    return Document(user, cat, conv, row[1], row[2], _entries(db, row[0]))


def list_documents(db: sqlite_utils.Database, username: str | None = None) -> list[dict[str, Any]]:
    """Every document (of one user), in injection order, then by conversation."""
    sql = "SELECT username, category, conversation FROM memory_documents"
    if username:
        rows = db.execute(sql + " WHERE username = ?", [username])
    else:
        rows = db.execute(sql)
    keys = sorted(rows, key=lambda r: (r[0], ORDER[r[1]], r[2]))
    return [read(db, u, c, conv).summary() for u, c, conv in keys]  # type: ignore[union-attr]


def delete(db: sqlite_utils.Database, username: str, cat: str, conversation: str = "") -> bool:
    user, conv = _key(username, cat, conversation)
    cur = db.execute(
        "DELETE FROM memory_documents WHERE username = ? AND category = ? AND conversation = ?",
        [user, cat, conv],
    )
    return cur.rowcount > 0


# --- injection ------------------------------------------------------------------------------


def select_timeline(entries: list[Entry], current: str) -> list[Entry]:
    """MemoryFS's ``format_timeline_for_prompt`` selection: the current conversation's
    entries left out; of every other conversation the newest 2; of those the newest 10 in
    all; returned oldest first (as shown)."""
    buckets: dict[str, list[Entry]] = {}
    for e in entries:
        if e.conversation != current:
            buckets.setdefault(e.conversation, []).append(e)
    newest = [
        e
        for bucket in buckets.values()
        for e in sorted(bucket, key=_newest_first)[:TIMELINE_PER_CONVERSATION]
    ]
    return sorted(sorted(newest, key=_newest_first)[:TIMELINE_MAX], key=_oldest_first)


def select_life_sim(entries: list[Entry]) -> list[Entry]:
    """The newest 5, shown oldest first."""
    return sorted(sorted(entries, key=_newest_first)[:LIFE_SIM_INJECT], key=_oldest_first)


def _oldest_first(e: Entry) -> tuple[float, int]:
    return (e.at, e.id or 0)


def _newest_first(e: Entry) -> tuple[float, int]:
    return (-e.at, -(e.id or 0))


_TIMELINE_ZH = (
    "以下条目来自角色与该用户的**其他会话/场景**（非当前对话）的近期生活经历摘要。\n"
    f"格式：`[时间] [会话标识] 事件摘要`。每个其他会话最多展示最新 {TIMELINE_PER_CONVERSATION}"
    f" 条，全局最多 {TIMELINE_MAX} 条。\n"
    "这些经历发生在当前对话之外；当前会话的具体事件由下方 events/plot 段承载，不在此处重复。\n"
    "如果用户话题明确引用了某段过去经历，角色可以自然回忆/承认；\n"
    "否则不要把这些事件当作'刚发生的事'叙述，也不要编造新细节。\n"
)
_LIFE_SIM_ZH = (
    "以下是该角色在**当前会话/对话之外**的近期生活片段（由静默心跳持续生成）。\n"
    "这些片段描述的是**用户不在场时**，角色独自进行的生活活动（思考、行动、情绪、状态等）。\n"
    f"最多展示最新 {LIFE_SIM_INJECT} 条；更早的片段已自动归档丢弃。\n"
    "当前会话的具体对话事件由下方 events/plot 段承载，不在此处重复。\n"
    "如果当前对话话题与某段生活片段自然相关，角色可以回忆/承认；\n"
    "否则不要把这些活动当作'刚发生的事'叙述，也不要编造新细节。\n"
)
_TIMELINE_EN = (
    "The entries below summarise recent experiences from your **other conversations/scenes**"
    " with {user} (not the current one).\n"
    "Format: `[time] [conversation] summary`. At most the newest"
    f" {TIMELINE_PER_CONVERSATION} of each other conversation, at most {TIMELINE_MAX} in all.\n"
    "They happened outside the current conversation; its own events are under"
    ' "Important events", not repeated here.\n'
    "If {user} clearly refers to one of them, you may naturally recall or acknowledge it;\n"
    "otherwise do not tell them as if they had just happened, and do not invent new details.\n"
)
_LIFE_SIM_EN = (
    "Below are your recent moments of life **outside the current conversation**.\n"
    "They describe what you did on your own **while {user} was not there** (thoughts,"
    " actions, feelings, states).\n"
    f"At most the newest {LIFE_SIM_INJECT} are shown; older ones were archived and dropped.\n"
    'The current conversation\'s own events are under "Important events", not repeated here.\n'
    "If the topic naturally relates to one of these moments, you may recall or acknowledge it;\n"
    "otherwise do not tell them as if they had just happened, and do not invent new details.\n"
)
#: Section headers: MemoryFS's own (``zh``) and an English translation (``en``). ``{user}``
#: is filled in. The two preambles end with a newline: a blank line before the list, as in
#: MemoryFS's examples.
HEADERS = {
    "zh": {
        "user_persona": "【用户人格记忆】",
        "character_persona": "【角色人格记忆】",
        "important_event": "【重要事件】",
        "timeline": _TIMELINE_ZH,
        "life_sim": _LIFE_SIM_ZH,
        "recent_digest": "【近期对话压缩摘要】",
    },
    "en": {
        "user_persona": "Who {user} is (persona notes):",
        "character_persona": "How you relate to {user}:",
        "important_event": "Important events (this conversation):",
        "timeline": _TIMELINE_EN,
        "life_sim": _LIFE_SIM_EN,
        "recent_digest": "Recent conversations with {user}, summarised:",
    },
}


def headers(lang: str) -> dict[str, str]:
    if lang not in HEADERS:
        raise BadInput(f"documents are rendered in {' or '.join(HEADERS)}, not {lang!r}")
    return HEADERS[lang]


@dataclass
class Section:
    """One injected document: its header and its entries as shown, oldest first."""

    category: str
    header: str
    entries: list[Entry]
    lines: list[str]


def _shown(cat: str, e: Entry) -> str:
    if cat == "timeline":
        return f"- [{e.stamp()}] [{e.conversation}] {e.text}"
    if cat == "life_sim":
        return f"- [{e.stamp()}] {e.text}"
    return e.text


def sections(
    db: sqlite_utils.Database, username: str, session: str, lang: str = "zh"
) -> list[Section]:
    """What is injected for a turn of conversation ``session``, in injection order (empty
    documents left out)."""
    heads = headers(lang)
    session = str(session)
    out = []
    for cat in CATEGORIES:
        if cat in PER_CONVERSATION and not _CONV_ID.fullmatch(session):
            continue
        doc = read(db, username, cat, session if cat in PER_CONVERSATION else "")
        entries = doc.entries if doc else []
        if cat == "timeline":
            entries = select_timeline(entries, session)
        elif cat == "life_sim":
            entries = select_life_sim(entries)
        if entries:
            header = heads[cat].format(user=username)
            out.append(Section(cat, header, entries, [_shown(cat, e) for e in entries]))
    return out


def render(secs: list[Section]) -> str:
    """Sections → prompt text: each header, then its entries one after the other."""
    return "\n\n".join(s.header + "\n" + "\n".join(s.lines) for s in secs)


# --- the API --------------------------------------------------------------------------------


class Documents:
    """MemoryFS documents over a Store (blocking: call from a worker thread in async code)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def set(
        self,
        username: str,
        cat: str,
        text: str,
        conversation: str | int = "",
        now: float | None = None,
    ) -> dict[str, Any]:
        """Replace the document with ``text`` (its file form: entries between blank lines),
        MemoryFS's overwrite (``append=False``, as for recent_digest)."""
        now = time.time() if now is None else now
        cat = category(cat)
        new = [make_entry(cat, t, conversation, None, now) for t in split_entries(cat, text)]
        if not new:
            raise BadInput("an empty document (delete it instead)")
        return self.store.call(save, username, cat, str(conversation), new, True, now)

    def append(
        self,
        username: str,
        cat: str,
        text: str,
        conversation: str | int = "",
        at: float | None = None,
        now: float | None = None,
    ) -> dict[str, Any]:
        """Add one entry (dated ``at``, default now), then truncate."""
        now = time.time() if now is None else now
        cat = category(cat)
        entry = make_entry(cat, text, conversation, at, now)
        return self.store.call(save, username, cat, str(conversation), [entry], False, now)

    def read(self, username: str, cat: str, conversation: str | int = "") -> Document | None:
        return self.store.call(read, username, category(cat), str(conversation))

    def list_documents(self, username: str | None = None) -> list[dict[str, Any]]:
        return self.store.call(list_documents, username)

    def delete(self, username: str, cat: str, conversation: str | int = "") -> bool:
        return self.store.call(delete, username, category(cat), str(conversation))

    def sections(self, username: str, session: str | int, lang: str = "zh") -> list[Section]:
        return self.store.call(sections, username, str(session), lang)

    def render(self, username: str, session: str | int, lang: str = "zh") -> str:
        """The injection text for a turn of ``session`` (no token budget: see context.py)."""
        return render(self.sections(username, session, lang))
