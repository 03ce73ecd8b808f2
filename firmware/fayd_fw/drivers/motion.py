# A PIR motion sensor (HC-SR501, AM312: a digital output, high while it sees movement): one
# "motion" event at each onset of movement. hold_s keeps a busy room from flooding: after an
# event, onsets are not sent for hold_s; if there was movement in that time, one event when
# it ends. So at most one event per hold_s, and while someone moves about, the last event is
# never older than hold_s (what an inactivity rule needs). warmup_s: a PIR's output is
# unreliable for its first ~30-60 s after power-up; onsets then are ignored.
import time

from fayd_fw.drivers.debounce import Debounced


class Motion:
    def __init__(self, spec, emit):
        self.emit = emit
        self.sensor = spec.get("sensor", "motion")
        self.input = Debounced(spec, "down", 0)  # the pull keeps an unplugged PIR quiet
        self.active = spec.get("active", 1)
        self.hold_ms = int(spec.get("hold_s", 60) * 1000)
        self.ready = time.ticks_add(time.ticks_ms(), int(spec.get("warmup_s", 30) * 1000))
        self.last = None  # ticks_ms of the last event
        self.missed = False  # movement during the hold-off, not sent yet

    def tick(self, now):
        level = self.input.update(now)
        onset = level is not None and level == self.active
        if time.ticks_diff(now, self.ready) < 0:
            return
        held = self.last is not None and time.ticks_diff(now, self.last) < self.hold_ms
        if held and (onset or self.input.level == self.active):
            self.missed = True  # an onset, or movement going on
        elif onset or (self.missed and not held):
            self.missed = False
            self.last = now
            self.emit(self.sensor, {})
