"""What ``fayd status`` says about the daemon as a whole: ``ready`` only while devices can
reach fayd and their events are being saved, and each way it is degraded, in plain words.

The status's fields (``GET /api/status``, ``fayd status --json``):

- ``ready`` (bool): fayd serves (its start finished), it is connected to the broker, its
  embedded broker (if any) runs, no component is stalled, and sensor events are being
  saved. False while starting, and while any of those is not so.
- ``serving`` (bool): the start finished (READY=1 was sent); what ``ready`` alone used to
  mean.
- ``health``: ``"starting"``, ``"ok"`` or ``"degraded"`` (serving, but ``degraded`` is not
  empty: a model missing, broken or replaced by the default counts here while ``ready``
  may still be true).
- ``degraded``: a list of ``{"part": …, "reason": …}``, one per problem; ``part`` is
  ``mqtt`` (fayd is not connected to the broker), ``broker`` (the embedded broker is not
  running), ``events`` (sensor events are not being saved), ``component:<name>`` (a part
  that is failing or stalled) or ``model:<role>`` (that model is missing or broken, or the
  user's own one could not be loaded and the default runs instead).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Parts whose problem means devices cannot reach fayd or their events are lost: not ready.
NOT_READY = ("mqtt", "broker", "events")


@dataclass(frozen=True)
class Degraded:
    part: str
    reason: str


def model_problems(models: dict[str, dict[str, Any]]) -> list[Degraded]:
    found = []
    for role, model in models.items():
        if not model["ok"]:
            found.append(Degraded(f"model:{role}", f"the {role} model: {model['problem']}"))
        elif model.get("fallback"):
            found.append(
                Degraded(
                    f"model:{role}",
                    f"your own {role} model is broken, the default runs instead:"
                    f" {model['fallback']}",
                )
            )
    return found


def component_problems(
    components: list[dict[str, Any]], embedded_ready: bool | None
) -> list[Degraded]:
    """From the supervisor's rows; ``embedded_ready``: whether fayd's own broker accepts
    devices now (None: an external broker)."""
    found = []
    for c in components:
        name, state = c["name"], c.get("state")
        if name == "broker":
            if embedded_ready is False:
                why = f" ({c['failures']} times): {c['last_error']}" if c["last_error"] else ""
                found.append(
                    Degraded(
                        "broker", f"the embedded broker is not running{why}; devices cannot connect"
                    )
                )
        elif state == "stalled":
            found.append(
                Degraded(
                    f"component:{name}",
                    f"{name} is stalled: no heartbeat for {c['beat_age_s']:g} s",
                )
            )
        elif state == "failing":
            found.append(
                Degraded(
                    f"component:{name}",
                    f"{name} is failing ({c['failures']} times): {c['last_error']}",
                )
            )
    return found


def assess(
    *,
    serving: bool,
    connected: bool,
    link_error: str,
    components: list[dict[str, Any]],
    embedded_ready: bool | None,
    events_failing: str | None,
    events_held: int,
    models: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The status's ``ready``, ``serving``, ``health`` and ``degraded`` fields."""
    problems: list[Degraded] = []
    if serving and not connected:
        why = f": {link_error}" if link_error else ""
        problems.append(
            Degraded(
                "mqtt", f"fayd is not connected to the MQTT broker{why}; devices cannot reach it"
            )
        )
    problems += component_problems(components, embedded_ready)
    if events_failing is not None:
        problems.append(
            Degraded(
                "events",
                f"sensor events are not being saved ({events_held} waiting): {events_failing}",
            )
        )
    problems += model_problems(models)
    stalled = any(c.get("state") == "stalled" for c in components)
    ready = serving and not stalled and not any(p.part in NOT_READY for p in problems)
    health = "starting" if not serving else "degraded" if problems else "ok"
    return {
        "ready": ready,
        "serving": serving,
        "health": health,
        "degraded": [asdict(p) for p in problems],
    }
