"""``qa.csv`` in Fay's format: a header row (``问题,答案,脚本`` or ``question,answer,skill``),
then a row a pair: the phrases (several separated by ``;``), the fixed answer, and optionally
what to do. Fay's third column runs a script; fayd never runs one: it takes ``skill:NAME`` or
``skill:NAME {json arguments}`` there. A household's own file (``agent.qa_csv``) comes before
the shipped one and is read again when it changes; each of its rows is taken or refused on
its own, with the file, line and reason in the log (a script: its answer is kept without
it), so a real Fay qa.csv never stops the start.

A question matches a row when it is one of its phrases (normalized), or close enough to one
(rapidfuzz: the phrase's words in the question, or the whole question near the phrase)."""

from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from fayd.agent.language.phrases import ADDRESS
from fayd.agent.language.text import normalize
from fayd.errors import ConfigError

log = logging.getLogger(__name__)

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
    def __init__(self, entries: list[QaEntry], problems: list[str] | None = None) -> None:
        self.entries = entries
        #: The rows refused, each "file:line: reason" (a household's file; logged).
        self.problems = problems or []
        self._exact: dict[str, QaEntry] = {}
        for entry in entries:  # the first row with a phrase wins: the household's
            for phrase in entry.phrases:
                self._exact.setdefault(phrase, entry)

    @classmethod
    def load(cls, path: str | Path, skills: set[str] | None = None, strict: bool = True) -> QaTable:
        """Read a qa.csv; ``skills`` are the names a row may call (None: not checked).
        ``strict``: a wrong row stops the reading (the shipped file); else it is refused
        alone and named in ``problems``."""
        path = Path(path)
        try:
            with path.open(encoding="utf-8-sig", newline="") as f:
                rows = list(csv.reader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ConfigError(f"{path}: cannot read it: {exc}") from exc
        entries, problems = [], []
        for n, row in enumerate(rows[1:], start=2):
            if not any(cell.strip() for cell in row):
                continue
            try:
                entries.append(_entry(row, f"{path}:{n}", n, skills, strict))
            except ConfigError as exc:
                if strict:
                    raise
                problems.append(str(exc))
                log.warning("qa.csv row refused: %s", exc)
        return cls(entries, problems)

    @classmethod
    def household(cls, path: str | Path, skills: set[str] | None = None) -> QaTable:
        """The household's rows, then the shipped ones."""
        own = cls.load(path, skills, strict=False)
        return cls([*own.entries, *cls.load(DEFAULT_QA, skills).entries], own.problems)

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


class HouseholdQa:
    """The household's qa.csv and the shipped one, read again when the file changes (an
    edit is heard at the next question, without a restart). A file that went missing or
    became unreadable keeps the last table read, said once in the log."""

    def __init__(self, path: str | Path, skills: set[str] | None = None) -> None:
        self.path = Path(path)
        self.skills = skills
        self._seen = self._stamp()
        self.table = QaTable.household(self.path, skills)  # a wrong file stops the start

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    @property
    def problems(self) -> list[str]:
        return self.table.problems

    def match(self, text: str) -> tuple[QaEntry, float] | None:
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            try:
                self.table = QaTable.household(self.path, self.skills)
                log.info("qa.csv read again: %d rows", len(self.table.entries))
            except ConfigError as exc:
                log.warning("qa.csv not read again (the last one stays): %s", exc)
        return self.table.match(text)


def _entry(
    row: list[str], where: str, line: int, skills: set[str] | None, strict: bool = True
) -> QaEntry:
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
    if action and not action.startswith(SKILL_PREFIX) and answer and not strict:
        # Fay's script column: its answer is still worth saying; the script is never run.
        log.warning(
            "%s: the script is not run (fayd runs none from qa.csv): only the answer", where
        )
        action = ""
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
