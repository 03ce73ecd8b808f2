"""The intents' declarations (``intents.toml``): one table per intent says what it is, the
skill that serves it, how the router finds it, its example phrases and, for intents found by
sentence templates, those templates. The router's order, the intents a user's file may add
phrases to, the skill of each intent and the docs' table are all read from here.

Sentence templates are Home Assistant's (hassil): ``(a|b)`` alternatives, ``[optional]``
words, ``{list}`` slots and ``<rule>`` expansions, one template both matching a sentence and
reading its slots. Lists and rules shared by every intent are in ``lists.toml``.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hassil import Intents, recognize

from fayd.agent.language.phrases import LISTS
from fayd.errors import ConfigError

BUILTIN = Path(__file__).with_name("intents.toml")
FOUND_BY = frozenset(
    {"safety", "stop", "gate", "cue", "symptoms", "example", "templates", "default"}
)
MOODS = frozenset({"asked", "told", "not_theirs", "asked_for"})


@dataclass(frozen=True)
class Declared:
    name: str
    skill: str | None
    says: str
    slots: str
    found_by: frozenset[str]
    mood: frozenset[str] = frozenset()
    examples: dict[str, list[str]] = field(default_factory=dict)
    templates: dict[str, list[str]] = field(default_factory=dict)


def _declared(name: str, table: dict[str, Any]) -> Declared:
    found_by, mood = frozenset(table.get("found_by", ())), frozenset(table.get("mood", ()))
    if not found_by or not found_by <= FOUND_BY or not mood <= MOODS:
        raise ConfigError(f"{BUILTIN}: [{name}]: found_by {sorted(found_by)}, mood {sorted(mood)}")
    if ("templates" in found_by) != bool(table.get("templates")):
        raise ConfigError(f"{BUILTIN}: [{name}]: templates and found_by disagree")
    return Declared(
        name,
        table.get("skill"),
        table.get("says", ""),
        table.get("slots", "—"),
        found_by,
        mood,
        {lang: table[lang] for lang in ("en", "zh") if lang in table},
        dict(table.get("templates", {})),
    )


def load() -> dict[str, Declared]:
    data = tomllib.loads(BUILTIN.read_text(encoding="utf-8"))
    return {name: _declared(name, table) for name, table in data.items()}


DECLARED = load()
#: Intents a user's file may add example phrases to.
KNOWN = frozenset(name for name, d in DECLARED.items() if "example" in d.found_by)
#: The skill that serves each intent; the others the conversation handles itself.
SKILL_OF = {name: d.skill for name, d in DECLARED.items() if d.skill}
OWN = frozenset(name for name in DECLARED if name not in SKILL_OF)
#: Cue phrases are tried in the declarations' order: the first intent whose cue matches wins.
CUE_ORDER = [name for name, d in DECLARED.items() if "cue" in d.found_by]


def with_mood(mood: str) -> frozenset[str]:
    return frozenset(name for name, d in DECLARED.items() if mood in d.mood)


@dataclass(frozen=True)
class Matched:
    intent: str
    slots: dict[str, Any]


class Templates:
    """The declarations' sentence templates, per language, matched by hassil."""

    def __init__(self) -> None:
        shared = _hassil_lists(copy.deepcopy(LISTS))
        self._by_lang: dict[str, Intents] = {}
        for lang in ("en", "zh"):
            intents = {
                name: {"data": [{"sentences": d.templates[lang]}]}
                for name, d in DECLARED.items()
                if d.templates.get(lang)
            }
            if intents:
                self._by_lang[lang] = Intents.from_dict(
                    {"language": lang, "intents": intents, **shared.get(lang, {})}
                )

    def match(self, text: str, lang: str) -> Matched | None:
        """The intent whose template matches the whole of ``text`` (normalized), its slots."""
        intents = self._by_lang.get(lang)
        found = recognize(text, intents) if intents is not None else None
        if found is None:
            return None
        return Matched(found.intent.name, {k: e.value for k, e in found.entities.items()})


def _hassil_lists(data: dict[str, Any]) -> dict[str, Any]:
    """lists.toml's ``"said" = "said back"`` tables as hassil's ``{"in": …, "out": …}``."""
    for lang in ("en", "zh"):
        by_lang = data.get(lang, {})
        for spec in by_lang.get("lists", {}).values():
            values = spec.get("values")
            if isinstance(values, dict):
                spec["values"] = [{"in": said, "out": out} for said, out in values.items()]
    return data


def table() -> str:
    """docs/understanding.md's table of intents."""
    rows = ["| intent | examples | slots |", "|---|---|---|"]
    rows += [f"| `{d.name}` | {d.says} | {d.slots} |" for d in DECLARED.values()]
    return "\n".join(rows)
