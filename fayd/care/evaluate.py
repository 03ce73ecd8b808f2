"""Rules evaluated without an LLM: plain data in, decisions out, no I/O and no clock of its
own (``now`` is passed in), so a test can play a week in a second.

Each rule has a small state (a JSON object the engine keeps in ``care_state``); an event or
a minute's tick gives a new state and the decisions: :class:`Fire` (raise an alert, or fold
into the open one) or :class:`Clear` (the condition is over: resolve it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

from fayd.care.rules import Rule, clock

#: Readings that name their value differently (fayd.devices.sensors.describe reads the same).
VALUE_KEYS = ("value", "c", "celsius", "temp", "level")
NAMES = {
    "bp": "blood pressure",
    "heart_rate": "heart rate",
    "spo2": "oxygen level",
    "temperature": "temperature",
    "room_temperature": "room temperature",
    "panic": "the panic button",
    "fall": "a fall",
    "door": "the door",
    "unconfirmed_medication": "medication not confirmed",
    "emergency": "a call for help",
}


@dataclass(frozen=True)
class Event:
    """One stored sensor event (or a call for help), with the household member it concerns."""

    id: int
    device: str
    user: str
    sensor: str
    at: float
    data: dict[str, Any] = field(default_factory=dict)
    #: ``device/epoch/seq`` of a sensor event: its stored copy and its copy judged on
    #: arrival (fayd.care.early) are one event.
    key: str = ""


@dataclass(frozen=True)
class Fire:
    rule: str
    #: One rule can raise different alerts (a device: silent, battery, flood).
    key: str
    text: str
    at: float
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Clear:
    rule: str
    key: str
    why: str
    at: float


Decision = Fire | Clear
State = dict[str, Any]


def concerns(rule: Rule, event: Event) -> bool:
    """The event is about this rule's person (or its named device)."""
    device = rule.spec.get("device")
    return event.device == device if device else event.user == rule.user


def reading(data: dict[str, Any], name: str) -> float | None:
    keys = VALUE_KEYS if name == "value" else (name,)
    for key in keys:
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _hhmm(at: float, zone: tzinfo) -> str:
    return f"{datetime.fromtimestamp(at, zone):%H:%M}"


def in_window(at: float, window: list[str] | None, zone: tzinfo) -> bool:
    if not window or window == ["00:00", "00:00"]:
        return True
    now = datetime.fromtimestamp(at, zone).time()
    start, end = clock(window[0], ""), clock(window[1], "")
    return start <= now < end if start < end else now >= start or now < end


def window_start(at: float, window: list[str], zone: tzinfo) -> float | None:
    """When the daily window that holds ``at`` began (None: ``at`` is outside it)."""
    if not in_window(at, window, zone):
        return None
    local = datetime.fromtimestamp(at, zone)
    start = clock(window[0], "")
    begun = local.replace(hour=start.hour, minute=start.minute, second=0, microsecond=0)
    if begun > local:
        begun -= timedelta(days=1)
    return begun.timestamp()


# --- events --------------------------------------------------------------------------------


def on_event(rule: Rule, state: State, ev: Event, zone: tzinfo) -> list[Decision]:
    """What one event means for ``rule`` (``state`` is updated in place)."""
    spec = rule.spec
    if rule.kind == "device":
        return _device_event(rule, state, ev) if ev.device == spec["device"] else []
    if not concerns(rule, ev):
        return []
    if rule.kind == "inactivity":
        if ev.sensor not in spec["sensors"]:
            return []
        state["last"] = max(state.get("last", 0.0), ev.at)
        if state.pop("fired", None):
            return [Clear(rule.name, "", f"activity at {_hhmm(ev.at, zone)}", ev.at)]
        return []
    if ev.sensor != spec["sensor"]:
        return []
    if rule.kind == "threshold":
        fired = _threshold(rule, state, ev)
        if ev.data.get("alert_id"):  # raised from memory under this id (fayd.care.early)
            fired = [_with_id(d, ev.data["alert_id"]) for d in fired]
        return fired
    if rule.kind == "missing":
        state["last"] = max(state.get("last", 0.0), ev.at)
        if state.get("fired_day") and not state.get("cleared"):
            state["cleared"] = True
            return [Clear(rule.name, "", f"it came at {_hhmm(ev.at, zone)}", ev.at)]
        return []
    if rule.kind == "event":
        if not in_window(ev.at, spec.get("between"), zone):
            return []
        if any(ev.data.get(k) != v for k, v in spec["match"].items()):
            return []
        what = NAMES.get(ev.sensor, ev.sensor)
        text = ev.data.get("said") or f"{what} ({ev.device}) at {_hhmm(ev.at, zone)}"
        detail = {"sensor": ev.sensor, "device": ev.device, "event": ev.id}
        if ev.data.get("alert_id"):  # the emergency skill's own alert: the same id goes on
            detail["alert_id"] = ev.data["alert_id"]
        if isinstance(ev.data.get("emergency"), str):  # what it was: "fall", "chest_pain" …
            detail["emergency"] = ev.data["emergency"]
        return [Fire(rule.name, "", str(text), ev.at, detail)]
    return []


def _with_id(decision: Decision, alert_id: str) -> Decision:
    if not isinstance(decision, Fire):
        return decision
    return Fire(
        decision.rule,
        decision.key,
        decision.text,
        decision.at,
        {**decision.detail, "alert_id": alert_id},
    )


def _threshold(rule: Rule, state: State, ev: Event) -> list[Decision]:
    spec, out = rule.spec, []
    values = {n: reading(ev.data, n) for n in {*spec["above"], *spec["below"]}}
    broken = [
        f"{n} {v:g} above {lim:g}"
        for n, lim in spec["above"].items()
        if (v := values[n]) is not None and v > lim
    ] + [
        f"{n} {v:g} below {lim:g}"
        for n, lim in spec["below"].items()
        if (v := values[n]) is not None and v < lim
    ]
    if all(v is None for v in values.values()):
        return []
    margin = spec["hysteresis"]
    settled = all(
        values[n] is None or values[n] <= lim - margin for n, lim in spec["above"].items()
    ) and all(values[n] is None or values[n] >= lim + margin for n, lim in spec["below"].items())
    what = NAMES.get(ev.sensor, ev.sensor)
    if broken:  # again while active: folded into the open alert (its count)
        state["active"] = True
        shown = ", ".join(broken)
        detail = {"sensor": ev.sensor, "device": ev.device, "event": ev.id, "data": ev.data}
        out.append(Fire(rule.name, "", f"{what}: {shown}", ev.at, detail))
    elif state.get("active") and settled:
        state["active"] = False
        out.append(Clear(rule.name, "", f"{what} back in range", ev.at))
    return out


def _device_event(rule: Rule, state: State, ev: Event) -> list[Decision]:
    spec, out = rule.spec, []
    state["seen"] = max(state.get("seen", 0.0), ev.at)
    if state.pop("silent", None):
        out.append(Clear(rule.name, "silent", f"{ev.device} is back", ev.at))
    minute = int(ev.at // 60)
    if state.get("minute") != minute:
        state["minute"], state["count"] = minute, 0
    state["count"] += 1
    if state["count"] > spec["flood_per_min"] and not state.get("flood"):
        state["flood"] = True
        text = f"{ev.device} sends over {spec['flood_per_min']:g} events a minute: is it faulty?"
        out.append(Fire(rule.name, "flood", text, ev.at, {"device": ev.device}))
    level = reading(ev.data, "battery") if ev.sensor != "battery" else reading(ev.data, "value")
    below = spec.get("battery_below")
    if below is not None and level is not None:
        if level < below and not state.get("low"):
            state["low"] = True
            text = f"{ev.device}'s battery is low ({level:g}%)"
            out.append(Fire(rule.name, "battery", text, ev.at, {"device": ev.device}))
        elif level >= below + 5 and state.pop("low", None):
            out.append(Clear(rule.name, "battery", "battery charged", ev.at))
    return out


# --- the minute's tick ---------------------------------------------------------------------


def on_tick(rule: Rule, state: State, now: float, zone: tzinfo) -> list[Decision]:
    """What the passing of time means for ``rule`` (``state`` is updated in place)."""
    spec = rule.spec
    if rule.kind == "missing":
        return _missing(rule, state, now, zone)
    if rule.kind == "inactivity":
        begun = window_start(now, spec["between"], zone)
        if begun is None or state.get("fired"):
            return []
        since = max(begun, state.get("last", 0.0), rule.created_at)
        if now - since >= spec["minutes"] * 60:
            state["fired"] = True
            text = f"no movement since {_hhmm(since, zone)} ({spec['minutes']:g} min)"
            return [Fire(rule.name, "", text, now, {"since": since})]
        return []
    if rule.kind == "device":
        out: list[Decision] = []
        if state.get("flood") and int(now // 60) > state.get("minute", 0):
            state["flood"] = False
            out.append(Clear(rule.name, "flood", "the flood stopped", now))
        silent = spec.get("silent_min")
        seen = max(state.get("seen", 0.0), rule.created_at)
        if silent and now - seen > silent * 60 and not state.get("silent"):
            state["silent"] = True
            text = f"{spec['device']} has been silent since {_hhmm(seen, zone)}"
            out.append(Fire(rule.name, "silent", text, now, {"device": spec["device"]}))
        return out
    return []


def _missing(rule: Rule, state: State, now: float, zone: tzinfo) -> list[Decision]:
    spec = rule.spec
    local = datetime.fromtimestamp(now, zone)
    day = local.date().isoformat()
    by, since = clock(spec["by"], ""), clock(spec["since"], "")
    due = local.replace(hour=by.hour, minute=by.minute, second=0, microsecond=0)
    start = local.replace(hour=since.hour, minute=since.minute, second=0, microsecond=0)
    if local < due or state.get("fired_day") == day or due.timestamp() < rule.created_at:
        return []
    state["fired_day"], state["cleared"] = day, False
    if state.get("last", 0.0) >= start.timestamp():
        state["cleared"] = True  # it came in time: nothing to say today
        return []
    what = NAMES.get(spec["sensor"], spec["sensor"])
    where = f" from {spec['device']}" if spec.get("device") else ""
    text = f"no {what}{where} by {spec['by']}"
    return [Fire(rule.name, "", text, now, {"due": due.timestamp()})]
