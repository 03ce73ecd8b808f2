"""Who said a turn: the ``Name: words`` prefix of a dialogue turn (``王丽：…`` too).

Write time: the speaker becomes a ``speaker:<name>`` tag. Query time: a question naming a
speaker ("Would Callum enjoy…") can lift that speaker's rows (``MemoryConfig.speaker_boost``),
and MiniLM embeds every node without its prefix (:func:`without`, on every write, fold,
re-embedding and catch-up): the name dominated the vectors of short turns, so "Callum: Fair
enough." sat near every question about Callum. The name stays in the content, the BM25 row
and the tag.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fayd.memory.index import UserIndex

NAMESPACE = "speaker:"
_CJK_NAME = re.compile(r"[\u4e00-\u9fff]+")
# One or two capitalised words, or two to four CJK characters, then a colon.
_PREFIX = re.compile(
    r"^\s*(?P<name>[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?|[\u4e00-\u9fff]{2,4})\s*[:：]\s*"
)


def speaker(content: str) -> str | None:
    m = _PREFIX.match(content)
    return m["name"] if m else None


def tags(content: str) -> list[str]:
    name = speaker(content)
    return [f"{NAMESPACE}{name}"] if name else []


def without(content: str) -> str:
    """The turn without its speaker prefix (itself when that would leave nothing)."""
    rest = _PREFIX.sub("", content, count=1)
    return rest if rest.strip() else content


def rows_named(index: UserIndex, query: str) -> np.ndarray:
    """Rows of the speakers ``query`` names (a Latin name as a whole word, case as
    written; a Chinese one anywhere: 王丽的狗 names 王丽)."""
    parts = []
    for tag in index.speaker_tags:
        name = tag[len(NAMESPACE) :]
        edge = "" if _CJK_NAME.fullmatch(name) else r"(?<!\w)"
        if re.search(rf"{edge}{re.escape(name)}{edge.replace('<', '')}", query):
            parts.append(_rows(index, tag))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _rows(index: UserIndex, tag: str) -> np.ndarray:
    """A tag's rows as an array, kept until the tag gains rows: half of 100k rows as a list
    cost ~2 ms to convert on every search naming the speaker."""
    rows = index.tag_rows.get(tag, [])
    cached = index.tag_arrays.get(tag)
    if cached is None or cached.size != len(rows):
        cached = index.tag_arrays[tag] = np.array(rows, np.int64)
    return cached
