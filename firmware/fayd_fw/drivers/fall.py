# Fall detection on a worn accelerometer (fayd_fw.drivers.mpu6050): one urgent "fall" event
# when a fall's three phases follow each other, judged on the samples' own clock (so the
# state machine is tested on recorded traces with no wall clock):
#   1. free fall: |a| under ff_g for at least ff_ms (a body going down; a device dropped a
#      short way onto a table falls for less: 15 cm is 175 ms);
#   2. impact: |a| at or over impact_g within impact_ms after the free fall ends;
#   3. lying still: after settle_ms (bounces, rolling), |a| stays within 1 g ± still_g for
#      still_s, and the device is tilted at least tilt_deg from how it hung before the fall
#      (upright to lying: sitting down hard ends upright, so it does not count).
# Someone who gets up (moves) during the stillness check was not left lying: no event.
import math
import time

from fayd_fw import FwError, board, hw
from fayd_fw.drivers.mpu6050 import Mpu6050

IDLE, FREE, IMPACT, SETTLE, STILL = range(5)
REF_BAND = 0.15  # |a| within 1 g ± this: at rest, so the sample says which way is down
REF_ALPHA = 0.05  # the reference's moving average: ~20 samples (0.2 s at 100 Hz)
RETRY_MS = 5000  # an accelerometer that stopped answering is looked for again this often


def _angle(u, v):
    dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    norm = math.sqrt(sum(a * a for a in u) * sum(b * b for b in v)) or 1.0
    return math.degrees(math.acos(max(-1.0, min(1.0, dot / norm))))


class FallDetector:
    def __init__(self, spec):
        self.ff_g = spec.get("ff_g", 0.6)
        self.ff_ms = spec.get("ff_ms", 200)
        self.impact_g = spec.get("impact_g", 2.5)
        self.impact_ms = spec.get("impact_ms", 800)
        self.settle_ms = spec.get("settle_ms", 1000)
        self.still_ms = int(spec.get("still_s", 3) * 1000)
        self.still_g = spec.get("still_g", 0.2)
        self.tilt_deg = spec.get("tilt_deg", 45)
        self.ref = None  # which way gravity pointed while the wearer was upright, at rest
        self.reset()

    def reset(self):
        """Forget a fall in progress (samples were lost)."""
        self.state = IDLE
        self.t0 = self.t1 = 0
        self.peak = 0.0
        self.before = None
        self.fell_ms = 0
        self.sum = [0.0, 0.0, 0.0]

    def feed(self, t, x, y, z):
        """One sample (ms on the samples' clock; g): the fall event's data, or None."""
        g = math.sqrt(x * x + y * y + z * z)
        s = self.state
        if s == IDLE:
            if g < self.ff_g:
                self.state, self.t0, self.before = FREE, t, self.ref
            elif abs(g - 1) < REF_BAND:
                r = self.ref or (x, y, z)
                k = REF_ALPHA
                self.ref = (r[0] + k * (x - r[0]), r[1] + k * (y - r[1]), r[2] + k * (z - r[2]))
        elif s == FREE:
            if g >= self.ff_g:
                if t - self.t0 < self.ff_ms:
                    self.state = IDLE
                    return None
                self.state, self.t1, self.peak = IMPACT, t, 0.0
                self.fell_ms = int(t - self.t0)
                return self.feed(t, x, y, z)  # this sample may be the impact itself
        elif s == IMPACT:
            self.peak = max(self.peak, g)
            if g >= self.impact_g:
                self.state = SETTLE
            elif t - self.t1 > self.impact_ms:
                self.state = IDLE
        elif s == SETTLE:
            self.peak = max(self.peak, g)
            if t - self.t1 >= self.settle_ms:
                self.state, self.t1, self.sum = STILL, t, [0.0, 0.0, 0.0]
        elif abs(g - 1) > self.still_g:
            self.state = IDLE  # moving again: up on their feet, or carried
        else:
            m = self.sum
            self.sum = [m[0] + x, m[1] + y, m[2] + z]
            if t - self.t1 >= self.still_ms:
                return self._verdict()
        return None

    def _verdict(self):
        self.state = IDLE
        tilt = _angle(self.before, self.sum) if self.before else None
        self.ref = None  # lying now: the next reference is learnt afresh
        if tilt is not None and tilt < self.tilt_deg:
            return None  # ended the way it started (sat down hard): not a fall
        found = {"impact_g": round(self.peak, 1), "free_fall_ms": self.fell_ms}
        if tilt is not None:
            found["tilt_deg"] = int(tilt)
        return found


class Fall:
    def __init__(self, spec, emit):
        self.spec = spec
        self.emit = emit
        self.sensor = spec.get("sensor", "fall")
        self.i2c = board.i2c(spec.get("i2c_id", 0), spec["sda"], spec["scl"])
        self.detector = FallDetector(spec)
        self.poll_ms = spec.get("poll_ms", 50)
        self.mpu = None
        self.fault = None
        self.t = 0.0  # ms on the samples' clock
        self.next = time.ticks_ms()

    def _open(self):
        s = self.spec
        rate = s.get("rate_hz", 100)
        self.mpu = Mpu6050(self.i2c, s.get("addr", 0x68), s.get("range_g", 8), rate)
        if self.fault:
            hw.log("%s: the accelerometer answers again" % self.sensor)
        self.fault = None

    def tick(self, now):
        if time.ticks_diff(now, self.next) < 0:
            return
        self.next = time.ticks_add(now, self.poll_ms)
        try:
            if self.mpu is None:
                self._open()
            samples = self.mpu.read()
        except (OSError, FwError) as exc:  # nothing on the bus, a loose wire, another part
            self.mpu = None
            self.next = time.ticks_add(now, RETRY_MS)
            if self.fault is None:
                self.fault = "no accelerometer (%s)" % exc
                self.emit(self.sensor, {"fault": self.fault})
            return
        if samples is None:
            hw.log("%s: samples lost (the FIFO overflowed)" % self.sensor)
            self.detector.reset()
            return
        for x, y, z in samples:
            self.t += self.mpu.period_ms
            found = self.detector.feed(self.t, x, y, z)
            if found:
                self.emit(self.sensor, found, True)
