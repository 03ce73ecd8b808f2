# A digital input whose level counts only once it has held still: a contact (a button, a reed
# switch) bounces for a few milliseconds when it closes or opens, which would read as several
# presses or door movements.
import time

from fayd_fw import board


class Debounced:
    def __init__(self, spec, default_pull, debounce_ms):
        pull = spec.get("pull", default_pull)
        self.pin = board.digital_in(spec["pin"], pull)
        self.ms = int(spec.get("debounce_ms", debounce_ms))
        self.level = self.pin.value()  # the level taken, as it was at start
        self.seen = self.level  # the raw level last read
        self.since = time.ticks_ms()  # when the raw level last changed

    def update(self, now):
        """The new level once it has held ``debounce_ms``; None while nothing changed."""
        v = self.pin.value()
        if v != self.seen:
            self.seen, self.since = v, now
        elif v != self.level and time.ticks_diff(now, self.since) >= self.ms:
            self.level = v
            return v
        return None
