"""Skills: what fayd does for a request, in code, without the LLM (docs/understanding.md).
Here are the registry's types, the words skills share (``words``) and the small skills that
belong to no feature (device commands, what an offline box cannot know);
``fayd.agent.features.all_skills()`` gathers every feature's skills into one registry."""

from fayd.agent.skills.registry import Context, Outcome, Skill, SkillError, Skills

__all__ = ["Context", "Outcome", "Skill", "SkillError", "Skills"]
