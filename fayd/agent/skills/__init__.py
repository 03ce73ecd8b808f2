"""Skills: what fayd does for a request, in code, without the LLM (docs/understanding.md).
``all_skills()`` is the one registry; the router's intents, qa.csv rows and (later) the tool
loop and MCP use it."""

from fayd.agent.skills import (
    care,
    care_rules,
    clock,
    devices,
    honest,
    info,
    memory,
    reminders,
    smalltalk,
    timers,
    wellbeing,
)
from fayd.agent.skills.registry import Context, Outcome, Skill, SkillError, Skills


def all_skills() -> Skills:
    return Skills(
        [
            *clock.SKILLS,
            *devices.SKILLS,
            *memory.SKILLS,
            *care.SKILLS,
            *care_rules.SKILLS,
            *info.SKILLS,
            *honest.SKILLS,
            *reminders.SKILLS,
            *timers.SKILLS,
            *smalltalk.SKILLS,
            *wellbeing.SKILLS,
        ]
    )


__all__ = ["Context", "Outcome", "Skill", "SkillError", "Skills", "all_skills"]
