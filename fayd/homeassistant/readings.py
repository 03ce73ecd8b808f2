"""Which values of a sensor event become Home Assistant entities, and how HA should show
them. Plain data, no I/O.

A reading is a number (a ``sensor``) or a yes/no (a ``binary_sensor``) taken from a known
field of a known sensor's ``data``; a sensor fayd does not know is shown when its data is
``{"value": <number>}``. Units and classes are only ones HA accepts for their component
(https://www.home-assistant.io/integrations/sensor/#device-class); blood pressure, pulse
and SpO2 have no HA device class (``pressure`` means the weather's), so they carry a unit
and no class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    """How one field of a sensor's data is shown."""

    name: str
    component: str = "sensor"
    device_class: str | None = None
    unit: str | None = None


@dataclass(frozen=True)
class Reading:
    """One value of an event, for one entity (``object`` names it within its device)."""

    object: str
    kind: Kind
    value: float | int | bool


#: The battery is also a reading: a device reports it as an event of sensor "battery".
BATTERY = Kind("Battery", device_class="battery", unit="%")
#: sensor → {field of its data: how it is shown}; fields tried in order, first found wins
#: where several name the same thing (a temperature as "value", "c" or "celsius").
KNOWN: dict[str, dict[str, Kind]] = {
    "battery": {"percent": BATTERY, "level": BATTERY, "value": BATTERY},
    "temperature": {
        f: Kind("Temperature", device_class="temperature", unit="°C")
        for f in ("value", "c", "celsius", "temp")
    },
    "humidity": {
        f: Kind("Humidity", device_class="humidity", unit="%") for f in ("value", "percent")
    },
    "bp": {
        "sys": Kind("Blood pressure systolic", unit="mmHg"),
        "dia": Kind("Blood pressure diastolic", unit="mmHg"),
        "pulse": Kind("Pulse", unit="bpm"),
    },
    "heart_rate": {f: Kind("Heart rate", unit="bpm") for f in ("value", "bpm")},
    "spo2": {f: Kind("SpO2", unit="%") for f in ("value", "percent")},
    "weight": {f: Kind("Weight", device_class="weight", unit="kg") for f in ("value", "kg")},
    "door": {"open": Kind("Door", "binary_sensor", "door")},
    "window": {"open": Kind("Window", "binary_sensor", "window")},
    "bed": {"occupied": Kind("Bed", "binary_sensor", "occupancy")},
    "chair": {"occupied": Kind("Chair", "binary_sensor", "occupancy")},
}
#: Not readings: the firmware's summary of events it let go (fayd.devices.sensors.DROPPED).
IGNORED = frozenset({"dropped"})
#: Largest magnitude shown: beyond it a value is a fault, not a reading.
MAX_VALUE = 1e12


def _number(value: Any) -> float | int | None:
    """A reading's number as sent (152 stays 152, not 152.0), or None when it is none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer no float holds
        return None
    return value if math.isfinite(number) and abs(number) <= MAX_VALUE else None


def readings_of(sensor: str, data: dict[str, Any]) -> list[Reading]:
    """The readings one event carries (none for events that are only news: motion)."""
    if sensor in IGNORED:
        return []
    fields = KNOWN.get(sensor)
    if fields is None:  # an unknown sensor: shown when it says {"value": n}
        number = _number(data.get("value"))
        label = sensor.replace("_", " ").strip().capitalize() or "Reading"
        return [] if number is None else [Reading(f"{sensor}_value", Kind(label), number)]
    # One entity per thing measured: a temperature sent as "c" one day and "value" the next
    # is still the "temperature" entity; blood pressure's three fields are three entities.
    single = len({kind.name for kind in fields.values()}) == 1
    found: list[Reading] = []
    names: set[str] = set()
    for field, kind in fields.items():
        if kind.name in names or field not in data:
            continue
        value = data[field]
        if kind.component == "binary_sensor":
            if isinstance(value, bool):
                found.append(Reading(sensor if single else f"{sensor}_{field}", kind, value))
                names.add(kind.name)
            continue
        number = _number(value)
        if number is not None:
            found.append(Reading(sensor if single else f"{sensor}_{field}", kind, number))
            names.add(kind.name)
    return found
