"""The skills registry (fayd.agent.features.all_skills) as MCP tools of the daemon: one
tool per skill, its schema the registry's, with who it is for (``username``), where
(``device``) and, for what a schema cannot carry (a time: "tomorrow at 9"), the request in
words (``said``), read by the router's own slot extraction.

The token holder is the household's administrator (docs/security.md, *Who is who*): a
call acts for any named user, with that user's authority, as ``fayd say --user`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fayd.agent.clock.times import Ambiguous, Impossible
from fayd.agent.language.declared import SKILL_OF
from fayd.agent.language.text import language
from fayd.agent.ports import CLI
from fayd.agent.skills import Context, Skill, SkillError, Skills
from fayd.agent.understand.slots import extract_slots
from fayd.errors import ProtocolError
from fayd.mcp.more_tools import Refused, SchemaTool
from fayd.protocol.frames import MAX_TEXT, check_device_id
from fayd.protocol.text import BadText, check_name

#: (user, device, lang) → the context a skill runs in (fayd.agent.understanding).
ContextOf = Callable[[str, str, str], Context]

USERNAME = {
    "type": "string",
    "maxLength": 64,
    "description": "the household member it is for (default: the household's default user)",
}
DEVICE = {
    "type": "string",
    "maxLength": 64,
    "description": "the device it acts on or is asked from (default: none, the console)",
}
SAID = {
    "type": "string",
    "maxLength": MAX_TEXT,
    "description": "the request in words, e.g. 'remind me to call Tom tomorrow at 9': "
    "what the other arguments cannot carry (a time) is read from it",
}
#: The arguments every skill tool adds to its skill's own that the skill is not given
#: (``said`` is: the router hands a skill what was said, too).
OURS = ("username", "device")


def skill_tools(
    skills: Skills, context_of: ContextOf, default_user: str, devices: Callable[[], set[str]]
) -> list[SchemaTool]:
    """Every skill of ``skills``; ``devices()``: the ids of the devices that said hello."""
    intents: dict[str, str] = {}
    for intent, skill in SKILL_OF.items():
        intents.setdefault(skill, intent)
    calls = SkillCalls(skills, context_of, default_user, devices)
    return [calls.tool(skill, intents.get(skill.name)) for skill in skills.by_name.values()]


def _schema(skill: Skill, intent: str | None) -> dict[str, Any]:
    schema = dict(skill.schema)
    own = dict(schema.get("properties") or {})
    mine = {"username": USERNAME, "device": DEVICE}
    if intent is not None and "said" not in own:
        mine["said"] = SAID
    schema["properties"] = {**own, **{k: v for k, v in mine.items() if k not in own}}
    return schema


@dataclass(frozen=True)
class SkillCalls:
    skills: Skills
    context_of: ContextOf
    default_user: str
    devices: Callable[[], set[str]]

    def tool(self, skill: Skill, intent: str | None) -> SchemaTool:
        async def run(arguments: dict[str, Any]) -> dict[str, Any]:
            return await self.call(skill, intent, arguments)

        return SchemaTool(skill.name, skill.description, _schema(skill, intent), run)

    async def call(
        self, skill: Skill, intent: str | None, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        user, device = self._who(arguments)
        said = str(arguments.get("said") or "").strip()
        lang = language(said) if said else "en"
        # The administrator's call carries the user's authority (docs/security.md).
        ctx = dataclasses.replace(self.context_of(user, device, lang), vouched=True)
        args = _slots(intent, said, ctx) if said and intent else {}
        own = skill.schema.get("properties") or {}
        args.update({k: v for k, v in arguments.items() if k not in OURS or k in own})
        try:
            done = await self.skills.run(skill.name, args, ctx)
        except SkillError as exc:
            raise Refused(str(exc)) from exc
        result: dict[str, Any] = {"ok": True, "user": user, "said": done.say}
        if done.ask is not None:  # the skill asks back: a call cannot answer, say so
            result["ok"] = False
            result["error"] = f"{done.say} (say it in 'said', with the answer)"
        detail = {k: v for k, v in done.detail.items() if _plain(v)}
        return {**result, "detail": detail} if detail else result

    def _who(self, arguments: dict[str, Any]) -> tuple[str, str]:
        try:
            user = check_name("username", arguments.get("username") or self.default_user)
            device = arguments.get("device") or CLI
            if device != CLI:
                check_device_id(device)
                if device not in self.devices():
                    raise Refused(f"no device {device!r} has said hello")
        except (BadText, ProtocolError) as exc:
            raise Refused(str(exc)) from exc
        return user, device


def _slots(intent: str, said: str, ctx: Context) -> dict[str, Any]:
    """The slots the router's extraction reads from ``said`` (an unclear time refused)."""
    slots = extract_slots(intent, said, ctx.now, ctx.lang)
    for value in slots.values():
        if isinstance(value, Impossible):
            raise Refused(value.reason)
        if isinstance(value, Ambiguous):
            raise Refused(f"{value.question} (say it in 'said')")
    return {k: v for k, v in slots.items() if v is not None}


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)
