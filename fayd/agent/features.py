"""What fayd does, one folder a feature, each with the words it reads, its skills and the
words it says: ``reminders/`` (reminders and timers), ``care/`` (emergencies, feeling
unwell, answers to fayd's own questions, the care digest and care rules said in words),
``smalltalk/``, ``recall/`` (what the person told fayd) and ``honest/`` (what the model
cannot know, answered from records or declined). Below them: ``skills/`` (the registry, the
words skills say, and the small skills of no feature: the clock, device commands, what an
offline box cannot know), ``clock/`` (time expressions) and ``language/`` (text, word lists,
the intents' declarations). Above them, ``understand/`` decides which one a sentence is for
(docs/understanding.md). ``all_skills()`` is the one registry the router, qa.csv rows and
MCP use."""

from fayd.agent.care import rules as care_rules
from fayd.agent.care import skill as care
from fayd.agent.care import wellbeing
from fayd.agent.honest import skill as honest
from fayd.agent.recall import skill as memory
from fayd.agent.reminders import skill as reminders
from fayd.agent.reminders import timers
from fayd.agent.skills import clock, devices, info
from fayd.agent.skills.registry import Skills
from fayd.agent.smalltalk import answers as smalltalk


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
