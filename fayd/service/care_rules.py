"""The agent's CareRules port (fayd.agent.ports) on the care engine: a care rule said by a
caregiver is resolved against the household — the speaker must be a caregiver, the person a
household member, a named room its sensor when there is one — and checked by the very
``check_rule`` that ``fayd care rules add`` goes through; kept through ``admin.rules_add``."""

from __future__ import annotations

import re
from typing import Any

import sqlite_utils

from fayd.agent.ports import RuleDraft
from fayd.care import admin
from fayd.care import records as rec
from fayd.care.engine import CareEngine
from fayd.care.household import load as load_household
from fayd.care.household import person_called
from fayd.care.rules import DEFAULT_ACK_S, CareError, Known, check_rule, free_name

#: The care operations that take a whole rule (fayd.care.admin), checked for shape first.
RULE_OPS = frozenset({"rules.add"})


def rule_shape_problem(body: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a rule from the API (None: nothing), before the care
    engine's ``check_rule`` reads it: a ``user`` that is not a string, or a ``ladder`` that
    is not a list of caregivers (``"ann"``) or ``[caregiver, seconds]`` pairs, made it fail
    with a TypeError, an HTTP 500."""
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        return f"user: must be a household member's name, not {type(user).__name__}"
    ladder = body.get("ladder")
    if ladder is None:
        return None
    if not isinstance(ladder, list):
        return 'ladder: must be a list of caregivers, e.g. ["ann", ["ben", 600]]'
    for i, step in enumerate(ladder):
        if isinstance(step, str):
            continue
        if not (isinstance(step, list) and len(step) == 2 and isinstance(step[0], str)):
            return f"ladder[{i}]: must be a caregiver or [caregiver, seconds to acknowledge]"
    return None


def _squashed(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def _owners(db: sqlite_utils.Database) -> dict[str, str]:
    """device → the household member it belongs to (its setting over its hello)."""
    owners = {r[0]: r[1] for r in db.execute("SELECT id, user FROM devices").fetchall() if r[1]}
    rows = db.execute("SELECT device, user FROM device_settings").fetchall()
    owners.update({r[0]: r[1] for r in rows if r[1]})
    return owners


def room_device(
    devices: frozenset[str], owners: dict[str, str], room: str, person: str | None
) -> str | None:
    """The device named for ``room`` ("kitchen" → kitchen-1), the person's first."""
    word = _squashed(room)
    found = sorted(d for d in devices if _squashed(d).startswith(word))
    theirs = [d for d in found if person is not None and owners.get(d) == person]
    return (theirs or found or [None])[0]


def _name(known: Known, person: str, kind: str, spec: dict[str, Any]) -> str:
    what = spec.get("device") or spec.get("sensor") or kind
    base = f"{person}-{what}" + (f"-by-{spec['by'].replace(':', '')}" if kind == "missing" else "")
    return free_name(base, known)


class RulesInWords:
    def __init__(self, engine: CareEngine) -> None:
        self.engine = engine

    async def draft(
        self,
        caregiver: str,
        names: list[str],
        kind: str,
        spec: dict[str, Any],
        room: str | None = None,
    ) -> RuleDraft:
        default_user = self.engine.effects.default_user
        now = self.engine.clock()

        def resolve(db: sqlite_utils.Database) -> RuleDraft:
            known = rec.known(db, default_user)
            if caregiver not in known.caregivers:
                return RuleDraft(None, problem="caregiver", reason=f"no caregiver {caregiver!r}")
            person = person_called(names, known.users)  # as the digest finds them
            owners = _owners(db)
            device = room_device(known.devices, owners, room, person) if room else None
            if person is None and not names and device is not None:
                person = owners.get(device)  # "the living room": whose sensor it is
            if person is None:
                said = names[0] if names else "anyone"
                return RuleDraft(None, problem="person", reason=f"no household member {said!r}")
            if not load_household(db).watches(caregiver, person):
                return RuleDraft(
                    None,
                    person,
                    problem="not-theirs",
                    reason=f"{caregiver} does not look after {person}",
                )
            if device is not None and kind in ("missing", "threshold"):
                spec_ = {**spec, "device": device}
            else:
                spec_, device = dict(spec), None
            body = {
                "name": _name(known, person, kind, spec_),
                "user": person,
                "kind": kind,
                "spec": spec_,
                "ladder": [[caregiver, DEFAULT_ACK_S]],
            }
            try:
                rule = check_rule(body, known, now)
            except CareError as exc:
                return RuleDraft(None, person, device, "rule", str(exc))
            return RuleDraft({**body, "checkin": rule.checkin}, person, device)

        return await self.engine.store.run(resolve)

    async def add(self, rule: dict[str, Any]) -> list[str]:
        added = await admin.handle(self.engine, "rules.add", rule)
        return [str(r["name"]) for r in (added["added"], added["also"]) if r]
