# A door or window contact (a reed switch and a magnet): a "door" event {"open": true|false}
# each time the contact changes and holds still for debounce_ms. Usual wiring: a normally
# open reed switch between the pin and ground, closed by the magnet while the door is shut,
# so with the pull-up the pin reads 1 when the door is open ("open_level").
from fayd_fw.drivers.debounce import Debounced


class Door:
    def __init__(self, spec, emit):
        self.emit = emit
        self.sensor = spec.get("sensor", "door")
        self.input = Debounced(spec, "up", 50)
        self.open_level = spec.get("open_level", 1)

    def tick(self, now):
        level = self.input.update(now)
        if level is not None:
            self.emit(self.sensor, {"open": level == self.open_level})
