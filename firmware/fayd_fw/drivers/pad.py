# A bed or chair pressure pad (a force-sensing resistor in a voltage divider, on an ADC pin):
# "bed" (or "chair": config "sensor") events {"occupied": true|false, "level": %} when
# someone gets on or off, never per sample. Two thresholds (hysteresis): occupied once the
# level is at or over on_pct, vacated once at or under off_pct, each held for hold_s, so a
# sleeper turning over, or a reading wavering at one threshold, is not a string of events.
import time

from fayd_fw import FwError, board


class Pad:
    def __init__(self, spec, emit):
        self.emit = emit
        self.sensor = spec.get("sensor", "bed")
        self.adc = board.adc(spec["pin"])
        self.on = spec.get("on_pct", 60)
        self.off = spec.get("off_pct", 40)
        if not 0 <= self.off < self.on <= 100:
            raise FwError("off_pct must be below on_pct, both 0-100")
        self.invert = spec.get("invert", False)  # pressure lowers the reading
        self.every_ms = int(spec.get("every_ms", 250))
        self.hold_ms = int(spec.get("hold_s", 3) * 1000)
        self.occupied = False  # until the pad says otherwise: no event at start
        self.since = None  # when the level first crossed towards the other state
        self.next = time.ticks_ms()

    def level(self):
        pct = (self.adc.read_u16() * 100 + 32767) // 65535  # rounded
        return 100 - pct if self.invert else pct

    def tick(self, now):
        if time.ticks_diff(now, self.next) < 0:
            return
        self.next = time.ticks_add(now, self.every_ms)
        pct = self.level()
        crossing = pct <= self.off if self.occupied else pct >= self.on
        if not crossing:
            self.since = None
        elif self.since is None:
            self.since = now
        elif time.ticks_diff(now, self.since) >= self.hold_ms:
            self.occupied = not self.occupied
            self.since = None
            self.emit(self.sensor, {"occupied": self.occupied, "level": pct})
