"""One registry of skills: each has a name, a description and a JSON schema of its
arguments, and runs without the LLM. The router's intents call them; so do qa.csv rows
(``skill:NAME {json}``); later the tool loop and MCP list the same registry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

import jsonschema

from fayd.agent.clock.pending import Pending, slots_json
from fayd.agent.expect import Expectations
from fayd.agent.ports import CareDays, CareRules, Devices, Readings, Wellbeing
from fayd.agent.prefs import Preferences
from fayd.errors import FaydError
from fayd.memory import Memory
from fayd.protocol import Action
from fayd.reminders import ReminderBook

#: A slot's value that means the person speaking ("my name is…", "remind me").
ME = "me"


class SkillError(FaydError):
    """A skill was called with arguments its schema refuses, or is unknown."""


@dataclass(frozen=True)
class Context:
    """What a skill knows of the turn and what it may use."""

    user: str
    device: str
    lang: str  # "en" or "zh": the skill answers in the user's language
    now: datetime  # timezone-aware, the household's zone
    devices: Devices
    memory: Memory | None
    prefs: Preferences
    reminders: ReminderBook | None = None
    #: Open questions whose answer comes in the user's next turn (fayd.agent.expect).
    expect: Expectations | None = None
    #: The household's days in words (the care digest); None when not wired.
    days: CareDays | None = None
    #: Care rules said in words (the care engine's); None when not wired.
    rules: CareRules | None = None
    #: The turn carries ``user``'s own authority: said on their own device, or by the
    #: administrator (fayd.agent.ports.CLI). Needed to act for someone they look after.
    vouched: bool = False
    #: The person's stored readings (the care events); None when not wired.
    readings: Readings | None = None
    #: What the person says of how they feel, kept and told (fayd.agent.ports.Wellbeing).
    wellbeing: Wellbeing | None = None

    @property
    def tz(self) -> tzinfo:
        assert self.now.tzinfo is not None
        return self.now.tzinfo


@dataclass
class Outcome:
    """What the turn does after the skill: say ``say`` (nothing when empty), maybe ask a
    question whose answer the next turn completes, maybe remember the exchange."""

    say: str = ""
    ask: Pending | None = None
    #: Remember the exchange as a conversation memory with this importance (None: not).
    importance: int | None = None
    #: The reply's Action instead of the action rules' (an emergency's calm one).
    action: Action | None = None
    #: For ``fayd say --explain`` and the stored turn.
    detail: dict[str, Any] = field(default_factory=dict)


Run = Callable[[dict[str, Any], Context], Awaitable[Outcome]]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    schema: dict[str, Any]
    run: Run


class Skills:
    def __init__(self, skills: list[Skill]) -> None:
        self.by_name = {s.name: s for s in skills}
        for skill in skills:
            jsonschema.Draft202012Validator.check_schema(skill.schema)

    @property
    def names(self) -> set[str]:
        return set(self.by_name)

    def describe(self) -> list[dict[str, Any]]:
        """Name, description and argument schema of every skill (tools for a model, MCP)."""
        return [
            {"name": s.name, "description": s.description, "schema": s.schema}
            for s in self.by_name.values()
        ]

    async def run(self, name: str, args: dict[str, Any], ctx: Context) -> Outcome:
        skill = self.by_name.get(name)
        if skill is None:
            raise SkillError(f"no skill {name!r} (known: {', '.join(sorted(self.by_name))})")
        try:
            jsonschema.validate(slots_json(args), skill.schema)
        except jsonschema.ValidationError as exc:
            raise SkillError(f"{name}: {exc.message}") from exc
        return await skill.run(args, ctx)
