# A panic button: one "panic" event per press, urgent (sent at once, or first when the link
# is back). A press counts once the contact has held for debounce_ms; the next press needs a
# release first, so a button held down, or bouncing, is still one press.
from fayd_fw.drivers.debounce import Debounced


class Panic:
    def __init__(self, spec, emit):
        self.emit = emit
        self.sensor = spec.get("sensor", "panic")
        self.input = Debounced(spec, "up", 30)
        # The level when pressed: to ground with a pull-up (the usual wiring) reads 0.
        self.active = spec.get("active", 0 if spec.get("pull", "up") == "up" else 1)

    def tick(self, now):
        level = self.input.update(now)
        if level is not None and level == self.active:
            self.emit(self.sensor, {"pressed": True}, True)
