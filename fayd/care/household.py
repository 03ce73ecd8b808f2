"""Who looks after whom (docs/security.md, *Who is who*): a caregiver watches over a person
when one of the person's rules names them on its ladder, when they were added for that
person (``fayd care caregivers add anna URL --for mum``), or when they were added for no
one in particular (the whole household, as before people could be named). Only those who
watch over a person hear about their day, set rules for them, see and acknowledge their
alerts; on a ladder, only its caregivers acknowledge."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from fayd.care.records import caregivers_people, rules
from fayd.care.rules import Rule


@dataclass(frozen=True)
class Household:
    #: Caregiver → the people they were added for (empty: the whole household).
    caregivers: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: Person → the caregivers on their rules' ladders.
    ladders: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: Rule name → its ladder's caregivers (whoever may acknowledge its alerts).
    rule_ladders: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def watches(self, caregiver: str, person: str) -> bool:
        if caregiver in self.ladders.get(person, ()):
            return True
        people = self.caregivers.get(caregiver)
        return people is not None and (not people or person in people)

    def looked_after(self, caregiver: str) -> frozenset[str]:
        """The people ``caregiver`` was added for or is on the ladder of (empty for a
        caregiver of the whole household: no one in particular)."""
        on_ladders = {p for p, ladder in self.ladders.items() if caregiver in ladder}
        return frozenset(self.caregivers.get(caregiver, frozenset()) | on_ladders)

    def watchers(self, person: str) -> frozenset[str]:
        return frozenset(c for c in self.caregivers if self.watches(c, person))

    def may_acknowledge(self, who: str, alert: Mapping[str, Any]) -> bool:
        """``who`` is on the ladder of the alert's rule (or, for a rule since removed, one
        of the caregivers who watch over the person)."""
        ladder = self.rule_ladders.get(alert["rule"])
        if ladder is None:
            return who in self.watchers(alert["user"])
        return who in ladder


def person_called(names: Sequence[str], members: Iterable[str]) -> str | None:
    """The household member the first of ``names`` is (as kept: "Mum", "mum", "MUM" are one
    person), or None. The one resolver of a person said in words: "how was Mum today?" and
    "tell me if mum's oxygen drops" find who the digest names. ``names``: a word and what it
    may stand for (the agent's kin words: "mum" → mum, mom, mother …; 妈妈 → the same)."""
    kept = {m.casefold(): m for m in sorted(members)}
    for name in names:
        found = kept.get(name.strip().casefold())
        if found is not None:
            return found
    return None


def load(db: sqlite_utils.Database, kept: list[Rule] | None = None) -> Household:
    """``kept``: the rules, when the caller has read them already (the engine's pass)."""
    caregivers = {name: frozenset(people) for name, people in caregivers_people(db).items()}
    ladders: dict[str, set[str]] = {}
    rule_ladders = {}
    for rule in rules(db) if kept is None else kept:
        names = frozenset(who for who, _ in rule.ladder)
        rule_ladders[rule.name] = names
        ladders.setdefault(rule.user, set()).update(names)
    return Household(caregivers, {p: frozenset(c) for p, c in ladders.items()}, rule_ladders)
