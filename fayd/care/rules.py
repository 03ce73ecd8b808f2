"""Care rules as plain data, and their checks (docs/care.md).

A rule belongs to one household member and is one of five kinds — ``threshold``,
``missing``, ``inactivity``, ``event``, ``device`` — each with a small ``spec``. Every check
that can refuse a rule runs in :func:`check_rule`, before anything is stored: a field that is
wrong is named, a rule that can never fire or that overlaps another is refused whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import time
from typing import Any

from fayd.errors import FaydError

KINDS = ("threshold", "missing", "inactivity", "event", "device")
SEVERITIES = ("critical", "warning", "info")
#: The sensors fayd knows the meaning of; others count once a device has sent them.
SENSORS = frozenset(
    {
        "bp",
        "heart_rate",
        "spo2",
        "temperature",
        "room_temperature",
        "motion",
        "door",
        "bed",
        "chair",
        "panic",
        "fall",
        "battery",
        "unconfirmed_medication",
        "emergency",  # the emergency skill's spoken call for help (fayd.agent.care.skill)
        "wellbeing",  # feeling unwell, said to fayd (fayd.service.wellbeing)
    }
)
#: What counts as someone moving about, for inactivity rules.
ACTIVITY = ("motion", "door", "bed", "chair")
#: Values a reading can take at all: a limit outside makes a rule that can never fire.
RANGES = {
    ("bp", "sys"): (40.0, 300.0),
    ("bp", "dia"): (20.0, 200.0),
    ("bp", "pulse"): (20.0, 250.0),
    ("heart_rate", "value"): (20.0, 250.0),
    ("spo2", "value"): (50.0, 100.0),
    ("temperature", "value"): (-30.0, 60.0),
    ("room_temperature", "value"): (-30.0, 60.0),
}
#: Seconds a caregiver has to acknowledge before the next one is told, unless the rule says.
DEFAULT_ACK_S = 600.0
#: After an alert closes, the rule raises no new one for this long (critical: no pause).
DEFAULT_COOLDOWN_S = 1800.0


class CareError(FaydError):
    """A care rule, caregiver or alert request that cannot be taken; says which field."""


@dataclass(frozen=True)
class Rule:
    name: str
    user: str
    kind: str
    spec: dict[str, Any]
    severity: str = "warning"
    #: Ask the person first ("are you all right?") before any caregiver is told.
    checkin: bool = False
    #: Caregivers in order, each with seconds to acknowledge before the next.
    ladder: tuple[tuple[str, float], ...] = ()
    cooldown_s: float = DEFAULT_COOLDOWN_S
    created_at: float = 0.0

    def to_row(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "user": self.user,
            "kind": self.kind,
            "spec": json.dumps(self.spec, ensure_ascii=False),
            "severity": self.severity,
            "checkin": int(self.checkin),
            "ladder": json.dumps([list(step) for step in self.ladder]),
            "cooldown_s": self.cooldown_s,
            "created_at": self.created_at,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Rule:
        return cls(
            name=row["name"],
            user=row["user"],
            kind=row["kind"],
            spec=json.loads(row["spec"]),
            severity=row["severity"],
            checkin=bool(row["checkin"]),
            ladder=tuple((str(n), float(s)) for n, s in json.loads(row["ladder"])),
            cooldown_s=float(row["cooldown_s"]),
            created_at=float(row["created_at"]),
        )


@dataclass(frozen=True)
class Known:
    """What a new rule is checked against: who and what exists, and the rules already kept."""

    users: frozenset[str]
    devices: frozenset[str]
    sensors: frozenset[str]
    caregivers: frozenset[str]
    rules: tuple[Rule, ...] = ()


def clock(value: Any, key: str) -> time:
    """ "HH:MM" as a time of day, or CareError naming ``key``."""
    try:
        return time.fromisoformat(str(value))
    except ValueError:
        raise CareError(f"{key}: {value!r} is not a time of day (HH:MM)") from None


def window_minutes(start: time, end: time) -> int:
    """Length of a daily window in minutes; one that ends before it starts wraps midnight."""
    a, b = start.hour * 60 + start.minute, end.hour * 60 + end.minute
    return (b - a) % 1440


def _number(value: Any, key: str, low: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CareError(f"{key}: must be a number, not {value!r}")
    if low is not None and value <= low:
        raise CareError(f"{key}: must be more than {low:g}, not {value:g}")
    return float(value)


def _limits(spec: dict[str, Any], key: str, sensor: str) -> dict[str, float]:
    raw = spec.get(key) or {}
    if not isinstance(raw, dict):
        raise CareError(f"spec.{key}: must be field=number pairs (e.g. sys=150,dia=95)")
    limits = {}
    for name, value in raw.items():
        limits[str(name)] = _number(value, f"spec.{key}.{name}")
        span = RANGES.get((sensor, str(name)))
        if span and key == "above" and limits[name] >= span[1]:
            raise CareError(
                f"spec.above.{name}: {sensor} {name} is never above {span[1]:g}; "
                "this rule could never fire"
            )
        if span and key == "below" and limits[name] <= span[0]:
            raise CareError(
                f"spec.below.{name}: {sensor} {name} is never below {span[0]:g}; "
                "this rule could never fire"
            )
    return limits


def _sensor(spec: dict[str, Any], known: Known) -> str:
    sensor = spec.get("sensor")
    if not isinstance(sensor, str) or not sensor:
        raise CareError("spec.sensor: missing (e.g. bp, motion, panic)")
    if sensor not in SENSORS and sensor not in known.sensors:
        names = ", ".join(sorted(SENSORS | known.sensors))
        raise CareError(f"spec.sensor: no sensor {sensor!r} (known: {names})")
    return sensor


def _device(spec: dict[str, Any], known: Known, required: bool = False) -> str | None:
    device = spec.get("device")
    if device is None and not required:
        return None
    if not isinstance(device, str) or device not in known.devices:
        names = ", ".join(sorted(known.devices)) or "none yet"
        raise CareError(f"spec.device: no device {device!r} (devices: {names})")
    return device


def _window(spec: dict[str, Any], key: str = "between") -> list[str] | None:
    raw = spec.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        raise CareError(f"spec.{key}: must be two times, HH:MM-HH:MM")
    start, end = clock(raw[0], f"spec.{key}"), clock(raw[1], f"spec.{key}")
    if start == end:
        raise CareError(f"spec.{key}: the window {raw[0]}-{raw[1]} is empty; it could never fire")
    return [f"{start:%H:%M}", f"{end:%H:%M}"]


def check_spec(kind: str, spec: dict[str, Any], known: Known) -> dict[str, Any]:
    """The kind's spec, checked and normalised."""
    out: dict[str, Any] = {}
    if kind in ("threshold", "missing", "event"):
        out["sensor"] = _sensor(spec, known)
        if (device := _device(spec, known)) is not None:
            out["device"] = device
    if kind == "threshold":
        above, below = _limits(spec, "above", out["sensor"]), _limits(spec, "below", out["sensor"])
        if not above and not below:
            raise CareError("spec: a threshold needs 'above' or 'below' (e.g. above sys=150)")
        for name in set(above) & set(below):
            if above[name] < below[name]:
                raise CareError(f"spec.above.{name}: every value is above or below; always fires")
        out.update(above=above, below=below)
        out["hysteresis"] = _number(spec.get("hysteresis", 0), "spec.hysteresis")
    elif kind == "missing":
        by = clock(spec.get("by"), "spec.by")
        since = clock(spec.get("since", "00:00"), "spec.since")
        if since >= by:
            raise CareError(f"spec.since: {since:%H:%M} is not before {by:%H:%M}; never fires")
        out.update(by=f"{by:%H:%M}", since=f"{since:%H:%M}")
    elif kind == "inactivity":
        minutes = _number(spec.get("minutes"), "spec.minutes", 0)
        window = _window(spec) or ["00:00", "00:00"]
        if spec.get("between") is not None:
            length = window_minutes(clock(window[0], ""), clock(window[1], ""))
            if minutes >= length:
                raise CareError(
                    f"spec.minutes: {minutes:g} min does not fit in {window[0]}-{window[1]}"
                    f" ({length} min); it could never fire"
                )
        sensors = spec.get("sensors") or list(ACTIVITY)
        if not isinstance(sensors, list) or not sensors:
            raise CareError("spec.sensors: must be a list of sensors")
        for s in sensors:
            _sensor({"sensor": s}, known)
        out.update(minutes=minutes, between=window, sensors=sorted(sensors))
    elif kind == "event":
        if (window := _window(spec)) is not None:
            out["between"] = window
        match = spec.get("match") or {}
        if not isinstance(match, dict):
            raise CareError("spec.match: must be field=value pairs (e.g. open=true)")
        out["match"] = match
    elif kind == "device":
        out["device"] = _device(spec, known, required=True)
        if spec.get("silent_min") is not None:
            out["silent_min"] = _number(spec["silent_min"], "spec.silent_min", 0)
        if spec.get("battery_below") is not None:
            out["battery_below"] = _number(spec["battery_below"], "spec.battery_below", 0)
            if out["battery_below"] > 100:
                raise CareError("spec.battery_below: a battery is never above 100%")
        out["flood_per_min"] = _number(spec.get("flood_per_min", 60), "spec.flood_per_min", 0)
    return out


def free_name(base: str, known: Known) -> str:
    """``base``, or ``base-2``, ``base-3`` … : the first no kept rule has."""
    taken = {r.name for r in known.rules}
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def check_rule(data: dict[str, Any], known: Known, now: float) -> Rule:
    """A new rule from plain data (the CLI's, the API's), checked whole: CareError else."""
    name = data.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= 64 or not name.isprintable():
        raise CareError("name: must be 1-64 printable characters")
    if any(r.name == name for r in known.rules):
        raise CareError(f"name: there is a rule {name!r} already")
    user = data.get("user")
    if user not in known.users:
        names = ", ".join(sorted(known.users)) or "none yet"
        raise CareError(f"user: no household member {user!r} (known: {names})")
    kind = data.get("kind")
    if kind not in KINDS:
        raise CareError(f"kind: must be one of {', '.join(KINDS)}, not {kind!r}")
    spec = data.get("spec") or {}
    if not isinstance(spec, dict):
        raise CareError("spec: must be an object")
    severity = data.get("severity") or ("critical" if kind == "event" else "warning")
    if severity not in SEVERITIES:
        raise CareError(f"severity: must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    ladder = []
    for i, step in enumerate(data.get("ladder") or []):
        who, ack_s = (step, DEFAULT_ACK_S) if isinstance(step, str) else tuple(step)
        if who not in known.caregivers:
            names = ", ".join(sorted(known.caregivers)) or "none yet: fayd care caregivers add"
            raise CareError(f"ladder[{i}]: no caregiver {who!r} (caregivers: {names})")
        ladder.append((str(who), _number(ack_s, f"ladder[{i}] seconds to acknowledge", 0)))
    checkin = bool(data.get("checkin", kind in ("missing", "inactivity", "threshold")))
    if not ladder and not checkin:
        raise CareError("ladder: nobody would be told; name at least one caregiver")
    default_cooldown = 0.0 if severity == "critical" else DEFAULT_COOLDOWN_S
    cooldown = _number(data.get("cooldown_s", default_cooldown), "cooldown_s")
    rule = Rule(
        name,
        str(user),
        str(kind),
        check_spec(str(kind), spec, known),
        str(severity),
        checkin,
        tuple(ladder),
        cooldown,
        now,
    )
    if (other := overlapping(rule, known.rules)) is not None:
        raise CareError(f"overlaps rule {other.name!r}: {overlap_reason(rule, other)}")
    return rule


def _windows_meet(a: list[str] | None, b: list[str] | None) -> bool:
    """Two daily windows (None: all day) share a minute."""
    if a is None or b is None or a == ["00:00", "00:00"] or b == ["00:00", "00:00"]:
        return True

    def minutes(w: list[str]) -> set[int]:
        start = clock(w[0], "").hour * 60 + clock(w[0], "").minute
        return {(start + i) % 1440 for i in range(window_minutes(clock(w[0], ""), clock(w[1], "")))}

    return bool(minutes(a) & minutes(b))


def overlapping(rule: Rule, rules: tuple[Rule, ...]) -> Rule | None:
    """A kept rule that would watch the same thing for the same person (two alerts for one
    cause): same kind, sensor (and field and direction) or device, and a shared window."""
    for other in rules:
        if other.user != rule.user or other.kind != rule.kind:
            continue
        a, b = rule.spec, other.spec
        if rule.kind == "device" and a["device"] == b["device"]:
            return other
        if rule.kind == "inactivity" and _windows_meet(a["between"], b["between"]):
            return other
        if rule.kind in ("threshold", "missing", "event"):
            if a["sensor"] != b["sensor"] or a.get("device") != b.get("device"):
                continue
            if rule.kind == "threshold" and not (
                set(a["above"]) & set(b["above"]) or set(a["below"]) & set(b["below"])
            ):
                continue
            if rule.kind == "event" and (
                a["match"] != b["match"] or not _windows_meet(a.get("between"), b.get("between"))
            ):
                continue
            return other
    return None


def overlap_reason(rule: Rule, other: Rule) -> str:
    what = rule.spec.get("sensor") or rule.spec.get("device") or "activity"
    return f"both watch {what} for {rule.user}; change or remove {other.name!r} first"
