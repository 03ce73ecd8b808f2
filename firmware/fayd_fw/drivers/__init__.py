# Sensor drivers: each reads one part (through fayd_fw.board) and turns what it sees into a few
# events, all through the sensor role's one path (fayd_fw.sensor: numbered, kept on the flash
# ring until fayd acks them, resent, replayed after an outage). A driver runs when its section
# is in config.json's "sensor" object (an object, or a list of them for several parts of one
# kind) and "sensor" is in roles; none runs by default. docs/hardware.md: wiring and keys.
import time

from fayd_fw import FwError, hw

KINDS = ("motion", "door", "pad", "temperature", "panic", "fall")
# The event's sensor name for each kind (a pad's "sensor" may say "chair" instead).
NAMES = {"pad": "bed"}
PER_MIN = 10  # events a minute one part may send (the ring's flash budget: docs/hardware.md)


class Outlet:
    """One part's way to the ring, with a budget: at most ``per_min`` events a minute (a
    burst of that many, then one every 60/per_min s). What a faulty, chattering part makes
    beyond it is held: the latest one goes out when the budget allows, with "suppressed"
    (how many were held back), so the last state is never lost and the flash is spared."""

    def __init__(self, sensor, per_min, name=None):
        self.sensor = sensor
        self.name = name  # the part's "name" in config ("front door"), sent in its events
        self.cap = max(1, per_min)
        self.tokens = float(self.cap)
        self.refill_ms = 60000 // self.cap
        self.last = time.ticks_ms()
        self.held = None
        self.suppressed = 0

    def _refill(self, now):
        gained = time.ticks_diff(now, self.last) / self.refill_ms
        if gained > 0:
            self.tokens = min(self.cap, self.tokens + gained)
            self.last = now

    def emit(self, sensor, data, urgent=False):
        if self.name:
            data["name"] = self.name
        self._refill(time.ticks_ms())
        if self.tokens >= 1 and self.held is None:
            self.tokens -= 1
            return self.sensor.event(sensor, data, urgent)
        self.suppressed += 1
        self.held = (sensor, data, urgent)
        return None

    def tick(self, now):
        if self.held is None:
            return
        self._refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            sensor, data, urgent = self.held
            data = dict(data)
            data["suppressed"] = self.suppressed - 1
            self.held, self.suppressed = None, 0
            self.sensor.event(sensor, data, urgent)


def _make(kind, spec, outlet):
    if kind == "motion":
        from fayd_fw.drivers.motion import Motion as cls
    elif kind == "door":
        from fayd_fw.drivers.door import Door as cls
    elif kind == "pad":
        from fayd_fw.drivers.pad import Pad as cls
    elif kind == "temperature":
        from fayd_fw.drivers.ds18b20 import Ds18b20 as cls
    elif kind == "panic":
        from fayd_fw.drivers.panic import Panic as cls
    else:
        from fayd_fw.drivers.fall import Fall as cls
    return cls(spec, outlet.emit)


class Drivers:
    def __init__(self, cfg, sensor):
        section = cfg.get("sensor") or {}
        self.parts = []  # [driver, outlet, name, the last error logged]
        for kind in KINDS:
            specs = section.get(kind)
            for spec in specs if isinstance(specs, list) else [specs] if specs else []:
                if not isinstance(spec, dict):
                    hw.log("sensor.%s: must be an object (or a list of them)" % kind)
                    continue
                outlet = Outlet(sensor, spec.get("per_min", PER_MIN), spec.get("name"))
                name = "sensor.%s%s" % (kind, "[%s]" % spec["name"] if "name" in spec else "")
                try:
                    self.parts.append([_make(kind, spec, outlet), outlet, name, None])
                except (FwError, KeyError, TypeError, ValueError, OSError) as exc:
                    # One line naming the key; the part stays off, the rest run.
                    why = "%s: %s" % (name, _why(exc))
                    hw.log(why)
                    sensor.event(spec.get("sensor") or NAMES.get(kind, kind), {"fault": why[:200]})

    def tick(self, now):
        from fayd_fw import board

        board.tick(now)
        for part in self.parts:
            driver, outlet, name, last = part
            try:
                driver.tick(now)
                part[3] = None
            except Exception as exc:  # one part's trouble must not stop the device
                why = "%s: %s" % (name, _why(exc))
                if why != last:  # once, not every loop (the driver's faults are events)
                    hw.log(why)
                    part[3] = why
            outlet.tick(now)


def _why(exc):
    if isinstance(exc, KeyError):
        return "%s is required" % exc.args[0]
    return str(exc) or type(exc).__name__
