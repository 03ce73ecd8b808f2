"""Lexical search over node contents: SQLite FTS5 with BM25, for fusion with the vectors.

MiniLM ranks a rare exact word (a medication, a name, a number) poorly and reads Chinese
badly (it is an English model); BM25 over the words finds them. Table ``memory_fts``
(migration ``m006_memory_fts``): ``rowid`` = node id, ``text`` = the content as given to the
tokenizer, ``username`` (unindexed, to filter by user; :data:`HOUSEHOLD` for a household
node, which every user's search finds). Tokenizer ``porter unicode61 remove_diacritics 2``:
words, case and accents folded, English stems (appointment = appointments).

Chinese has no spaces: unicode61 would make a whole clause one token, so :func:`index_text`
writes every run of CJK characters as its overlapping **bigrams** (医生说 → 医生 生说),
and a query is cut the same way. FTS5's ``trigram`` tokenizer needs no preprocessing but
cannot match a term shorter than three characters, and most Chinese words are two (医生,
血压, 牙医): on the benchmark's Chinese questions it found fewer evidence turns (see
docs/memory.md). Bigrams also keep English on word BM25 instead of trigram substrings.
"""

from __future__ import annotations

import re

import sqlite_utils

TABLE = "memory_fts"
TOKENIZER = "porter unicode61 remove_diacritics 2"
#: ``username`` of a household node's row: no user can be called "" (writes refuse it).
HOUSEHOLD = ""

# CJK ideographs (with extension A and compatibility), kana, hangul.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]+")  # what unicode61 calls a token: letters and digits

#: Words that say nothing about which memory is meant (question words, auxiliaries…).
STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by
    can could did do does doing done for from had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours out over own same she should so some such than that the
    their them then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    tell told say said thing things""".split()
)
#: Chinese function bigrams (question words, particles) seen in questions, not in facts.
CJK_STOP = frozenset(
    "什么 怎么 哪里 哪天 哪个 哪些 为什 什么 么时 时候 多少 是什 是多 了什 么样 怎样 吗 呢".split()
)


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_text(content: str) -> str:
    """``content`` as FTS5 gets it: CJK runs replaced by their bigrams, the rest as is."""
    return _RUN.sub(lambda m: " " + " ".join(_bigrams(m.group())) + " ", content)


def terms(query: str) -> list[str]:
    """The query's search terms in order, once each: words (minus stopwords and single
    letters), numbers, CJK bigrams (minus function bigrams)."""
    out: list[str] = []
    seen: set[str] = set()
    for token in _WORD.findall(index_text(query).lower()):
        if _RUN.fullmatch(token):
            if token in CJK_STOP:
                continue
        elif token in STOPWORDS or (len(token) < 2 and not token.isdigit()):
            continue
        if token not in seen:
            seen.add(token)
            out.append(token)
    return out


def match_expression(query: str) -> str | None:
    """An FTS5 MATCH expression: any of the terms (BM25 ranks by how many and how rare)."""
    found = terms(query)
    return " OR ".join(f'"{t}"' for t in found) if found else None


# --- the table (created by the migration; written beside every node insert) -------------
def create_table(db: sqlite_utils.Database) -> None:
    db.execute(
        f"CREATE VIRTUAL TABLE {TABLE} USING fts5(text, username UNINDEXED,"
        f" tokenize = '{TOKENIZER}')"
    )
    # Nodes are not deleted today; if one ever is, its row goes with it.
    db.execute(
        f"CREATE TRIGGER {TABLE}_delete AFTER DELETE ON memory_nodes"
        f" BEGIN DELETE FROM {TABLE} WHERE rowid = old.id; END"
    )


def owner(username: str, scope: str) -> str:
    """The ``username`` a node's row carries: the writer's, or :data:`HOUSEHOLD`."""
    return HOUSEHOLD if scope == "household" else username


def add(db: sqlite_utils.Database, rows: list[tuple[int, str, str]]) -> None:
    """Index nodes: (node id, :func:`owner`, content) each."""
    db.conn.executemany(
        f"INSERT INTO {TABLE} (rowid, text, username) VALUES (?, ?, ?)",
        [(node_id, index_text(content), user) for node_id, user, content in rows],
    )


def backfill(db: sqlite_utils.Database, batch: int = 5000) -> int:
    """Index every node not yet in the table (the migration's backfill); returns how many."""
    count = 0
    last = 0
    while True:
        rows = db.execute(
            f"SELECT id, CASE WHEN scope = 'household' THEN ? ELSE username END, content"
            f" FROM memory_nodes WHERE id > ? AND id NOT IN (SELECT rowid FROM {TABLE})"
            " ORDER BY id LIMIT ?",
            [HOUSEHOLD, last, batch],
        ).fetchall()
        if not rows:
            return count
        add(db, rows)
        count += len(rows)
        last = rows[-1][0]


def mark_household(db: sqlite_utils.Database) -> None:
    """Give the rows of household nodes indexed under their writer's name :data:`HOUSEHOLD`
    (migration ``m007_memory_household``)."""
    db.execute(
        f"UPDATE {TABLE} SET username = ? WHERE username != ?"
        " AND rowid IN (SELECT id FROM memory_nodes WHERE scope = 'household')",
        [HOUSEHOLD, HOUSEHOLD],
    )


#: A term in more rows than this is left out of the query: FTS5 scores every row that
#: matches before it sorts, so one common word ("Ann" in every node) made a search of 100k
#: nodes take ~50 ms; such a term's BM25 weight (idf) is small anyway.
MAX_ROWS_PER_TERM = 2000
#: ...and a term in more than this share of the rows: a speaker's name in "Callum: ..."
#: (half the turns of a two-person dialogue) matched every short turn of his, and the BM25
#: term, scaled by its best hit, lifted "Callum: Fair enough." over the evidence.
MAX_SHARE = 0.2
#: Below this many rows no term is too common (a few notes all naming one person).
MIN_ROWS_COMMON = 50


def _selective(db: sqlite_utils.Database, found: list[str]) -> list[str]:
    keep = []
    # Row ids are node ids, never reused: the largest is the table's size or a little more.
    (size,) = db.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {TABLE}").fetchone()
    cap = min(MAX_ROWS_PER_TERM, max(MIN_ROWS_COMMON, int(MAX_SHARE * size)))
    for term in found:
        (rows,) = db.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {TABLE} WHERE {TABLE} MATCH ? LIMIT ?)",
            [f'"{term}"', cap + 1],
        ).fetchone()
        if 0 < rows <= cap:
            keep.append(term)
    return keep


def search(
    db: sqlite_utils.Database, query: str, username: str, limit: int
) -> list[tuple[int, float]]:
    """The best ``limit`` nodes for ``query`` by BM25 among the user's own and the household
    ones: (node id, score), best first, score > 0 (FTS5's bm25() is negative, lower is
    better: it is negated here). Terms found in more than :data:`MAX_ROWS_PER_TERM` rows are
    not searched."""
    found = _selective(db, terms(query)) if limit > 0 else []
    if not found:
        return []
    rows = db.execute(
        f"SELECT rowid, bm25({TABLE}) FROM {TABLE} WHERE {TABLE} MATCH ?"
        " AND username IN (?, ?) ORDER BY rank LIMIT ?",
        [" OR ".join(f'"{t}"' for t in found), username, HOUSEHOLD, limit],
    ).fetchall()
    return [(int(node_id), -float(score)) for node_id, score in rows]
