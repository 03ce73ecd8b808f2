"""``qa.csv`` in Fay's format: a header row (``问题,答案,脚本`` or ``question,answer,skill``),
then a row a pair: the phrases (several separated by ``;``), the fixed answer, and optionally
what to do. Fay's third column runs a shell command; fayd never runs one: it takes
``skill:NAME`` or ``skill:NAME {json arguments}`` there, and refuses anything else when the
file is read (with the file, line and reason), as it refuses a malformed row.

A question matches a row when it is one of its phrases (normalized), or close enough to one
(rapidfuzz: the phrase's words in the question, or the whole question near the phrase)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from fayd.agent.language.phrases import ADDRESS
from fayd.agent.language.text import normalize
from fayd.errors import ConfigError

DEFAULT_QA = Path(__file__).with_name("qa.csv")
#: A fuzzy match needs this score (0-100): a few letters ASR got wrong, not another question.
FUZZY_MIN = 88.0
SKILL_PREFIX = "skill:"


@dataclass(frozen=True)
class QaEntry:
    phrases: tuple[str, ...]
    answer: str
    skill: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    line: int = 0


class QaTable:
    def __init__(self, entries: list[QaEntry]) -> None:
        self.entries = entries
        self._exact = {p: e for e in entries for p in e.phrases}

    @classmethod
    def load(cls, path: str | Path, skills: set[str] | None = None) -> QaTable:
        """Read a qa.csv; ``skills`` are the names a row may call (None: not checked)."""
        path = Path(path)
        try:
            with path.open(encoding="utf-8-sig", newline="") as f:
                rows = list(csv.reader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ConfigError(f"{path}: cannot read it: {exc}") from exc
        entries = [
            _entry(row, f"{path}:{n}", n, skills)
            for n, row in enumerate(rows[1:], start=2)
            if any(cell.strip() for cell in row)
        ]
        return cls(entries)

    def match(self, text: str) -> tuple[QaEntry, float] | None:
        """The best row for ``text`` (normalized) and its score (1.0 exact), or None. A word
        of address at either end ("thank you dear") need not be in the phrase."""
        said = list(dict.fromkeys([text, unaddressed(text)]))
        for each in said:
            if (found := self._exact.get(each)) is not None:
                return found, 1.0
        best: tuple[QaEntry, float] | None = None
        for phrase, entry in self._exact.items():
            for each in said:
                ratio = fuzz.ratio(each, phrase) if _same_ask(each, phrase) else 0.0
                score = max(ratio, _contained(each, phrase))
                if score >= FUZZY_MIN and (best is None or score / 100 > best[1]):
                    best = (entry, score / 100)
        return best


def unaddressed(text: str) -> str:
    """``text`` (normalized) without the words of address at its ends ("fay, thank you,
    love" → "thank you"); as it is when nothing else would be left ("dear")."""
    words = text.split()
    # At the start only as a call ("fay what's…", "love, what's…"): "dear me" is a phrase.
    while len(words) > 1 and (words[0] == "fay" or words[0].endswith(",")):
        if words[0].strip(",") not in ADDRESS:
            break
        words.pop(0)
    while len(words) > 1 and words[-1].strip(",.!") in ADDRESS:
        words.pop()
    return " ".join(words).strip(" ,") or text


#: Words a near match may not change: "how are you" is one letter from "who are you".
_ASK = frozenset("who how what where when why which whose not no don't can't".split())


def _same_ask(text: str, phrase: str) -> bool:
    return _ASK.intersection(text.split()) == _ASK.intersection(phrase.split())


def _contained(text: str, phrase: str) -> float:
    """The phrase inside a longer question ("please, what's your name?"), for phrases of a
    few words only: one word inside a sentence says nothing."""
    if len(phrase.split()) < 3 and not any("\u3400" <= c <= "\u9fff" for c in phrase):
        return 0.0
    return 95.0 if phrase in text else 0.0


def _entry(row: list[str], where: str, line: int, skills: set[str] | None) -> QaEntry:
    if len(row) < 2:
        raise ConfigError(f"{where}: a row needs at least the phrases and the answer")
    phrases = tuple(p for p in (normalize(x) for x in row[0].split(";")) if p)
    answer = row[1].strip()
    action = row[2].strip() if len(row) > 2 else ""
    if not phrases:
        raise ConfigError(f"{where}: no phrase in the first column")
    if not answer and not action:
        raise ConfigError(f"{where}: neither an answer nor a skill")
    skill, args = None, {}
    if action:
        if not action.startswith(SKILL_PREFIX):
            raise ConfigError(
                f"{where}: the third column must be skill:NAME [json arguments], not {action!r}"
                " (fayd runs no shell commands from qa.csv)"
            )
        name, _, rest = action[len(SKILL_PREFIX) :].strip().partition(" ")
        if skills is not None and name not in skills:
            raise ConfigError(f"{where}: no skill {name!r} (known: {', '.join(sorted(skills))})")
        if rest.strip():
            try:
                args = json.loads(rest)
            except RecursionError as exc:  # not a ValueError: it stopped fayd run as a bug
                raise ConfigError(f"{where}: the skill's arguments are nested too deeply") from exc
            except ValueError as exc:
                raise ConfigError(f"{where}: the skill's arguments are not JSON: {exc}") from exc
            if not isinstance(args, dict):
                raise ConfigError(f"{where}: the skill's arguments must be a JSON object")
        skill = name
    return QaEntry(phrases, answer, skill, args, line)
