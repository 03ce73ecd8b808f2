"""The care engine's administration as MCP tools of the daemon (alerts, rules, the digest:
the ops of ``fayd care``, through the same table, fayd.care.admin), and a text spoken on a
device. Each result is the op's own answer, as ``POST /api/care/<op>`` gives it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fayd.agent.announce import REMIND
from fayd.care import CareError
from fayd.errors import ProtocolError
from fayd.mcp.more_tools import Refused, SchemaTool
from fayd.protocol.frames import MAX_TEXT, check_device_id
from fayd.protocol.text import BadText, check_name

#: (op, body) → the op's answer (fayd.service.daemon.Daemon.care).
Care = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: (device, user, text) → the text said there between turns (Dialogue.announce).
Speak = Callable[[str, str, str], None]

_NAME = {"type": "string", "minLength": 1, "maxLength": 64}
_DAY = {"type": "string", "description": "YYYY-MM-DD, today or yesterday (default today)"}
CARE_TOOLS: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "care_alerts_list",
        "alerts.list",
        "The household's open and acknowledged alerts (all: resolved ones too), with whom "
        "each was sent to.",
        {"type": "object", "properties": {"all": {"type": "boolean"}}},
    ),
    (
        "care_alerts_ack",
        "alerts.ack",
        "Acknowledge an alert (resolve: close it) as a caregiver: its escalation stops.",
        {
            "type": "object",
            "properties": {"id": _NAME, "by": _NAME, "resolve": {"type": "boolean"}},
            "required": ["id", "by"],
        },
    ),
    (
        "care_rules_list",
        "rules.list",
        "The care rules: whom each watches, what for, and who is told.",
        {"type": "object", "properties": {}},
    ),
    (
        "care_digest",
        "digest.show",
        "How a household member's day went, as the caregivers' daily digest says it "
        "(nothing is sent).",
        {"type": "object", "properties": {"user": _NAME, "date": _DAY}},
    ),
]


def care_tools(care: Care) -> list[SchemaTool]:
    def tool(name: str, op: str, description: str, schema: dict[str, Any]) -> SchemaTool:
        async def run(arguments: dict[str, Any]) -> dict[str, Any]:
            try:
                return await care(op, arguments)
            except (CareError, LookupError) as exc:
                raise Refused(str(exc).strip("'\"")) from exc

        return SchemaTool(name, description, schema, run)

    return [tool(*row) for row in CARE_TOOLS]


def speak_tool(speak: Speak, default_user: str, devices: Callable[[], set[str]]) -> SchemaTool:
    """``speak``: a text said on a device, between its turns, in fayd's voice."""

    async def run(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            device = check_device_id(arguments["device"])
            user = check_name("username", arguments.get("username") or default_user)
            text = " ".join(str(arguments["text"]).split())
        except (BadText, ProtocolError) as exc:
            raise Refused(str(exc)) from exc
        if not text:
            raise Refused("text: nothing to say")
        if device not in devices():
            raise Refused(f"no device {device!r} has said hello")
        speak(device, user, text)
        return {"ok": True, "device": device, "user": user, "queued": True}

    schema = {
        "type": "object",
        "properties": {
            "device": {"type": "string", "maxLength": 64},
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
            "username": {"type": "string", "maxLength": 64},
        },
        "required": ["device", "text"],
    }
    return SchemaTool(
        "speak",
        "Say a text on a device (its speaker), after whatever it is saying now.",
        schema,
        run,
    )


def announce_with(say: Callable[..., None]) -> Speak:
    """Dialogue.announce as :data:`Speak` (a reminder's gesture with it)."""
    return lambda device, user, text: say(device, user, text, REMIND)
