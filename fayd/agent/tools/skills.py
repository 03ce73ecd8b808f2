"""The skills that only read, as the tool loop's tools (fayd.agent.tools.READ_ONLY_SKILLS):
their words are what the person hears from the router, so a tool's result is as honest as
the skill ("You haven't told me that yet")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fayd.agent.skills import Context, Skills
from fayd.agent.tools.toolbox import Tool


def skill_tools(
    skills: Skills, context: Callable[[], Context], names: tuple[str, ...]
) -> list[Tool]:
    """``names`` of ``skills`` as tools run in ``context`` (the turn's user and device)."""

    def calling(name: str) -> Callable[[dict[str, Any]], Any]:
        async def call(args: dict[str, Any]) -> str:
            done = await skills.run(name, args, context())
            return done.say

        return call

    return [
        Tool(skill.name, skill.description, skill.schema, calling(skill.name), source="skill")
        for name in names
        if (skill := skills.by_name.get(name)) is not None
    ]
