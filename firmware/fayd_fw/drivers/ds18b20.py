# A DS18B20 temperature sensor on a OneWire pin (one sensor per pin: ROM command "skip"):
# a "temperature" event {"value": °C} every every_s. A reading that cannot be trusted is
# never sent as a temperature: nothing answering the bus, a scratchpad whose CRC is wrong
# (read twice: one glitch on a long wire is forgiven), 85 °C straight from power-on (the
# sensor never converted: weak parasite power), all-zero bytes (a shorted line passes the
# CRC) give one {"fault": ...} event when the fault starts or changes; the next good reading
# ends it.
import time

from fayd_fw import board

CONVERT_MS = 750  # a 12-bit conversion (0.0625 °C)
POWER_ON = 0x0550  # 85 °C: the scratchpad's value before any conversion


def crc8(data):
    """Dallas/Maxim CRC-8 (x^8 + x^5 + x^4 + 1, bits reflected), as the DS18B20 sends."""
    crc = 0
    for b in data:
        for _ in range(8):
            mix = (crc ^ b) & 1
            crc >>= 1
            if mix:
                crc ^= 0x8C
            b >>= 1
    return crc


class Ds18b20:
    def __init__(self, spec, emit):
        self.emit = emit
        self.sensor = spec.get("sensor", "temperature")
        self.ow = board.onewire(spec["pin"])
        self.every_ms = int(max(1, spec.get("every_s", 300)) * 1000)
        self.next = time.ticks_ms()
        self.ready = None  # when the conversion started is done
        self.fault = None
        self.buf = bytearray(9)

    def tick(self, now):
        if self.ready is not None and time.ticks_diff(now, self.ready) >= 0:
            self.ready = None
            self._report(self._read())
        elif self.ready is None and time.ticks_diff(now, self.next) >= 0:
            self.next = time.ticks_add(now, self.every_ms)
            if self._command(0x44):
                self.ready = time.ticks_add(now, CONVERT_MS)
            else:
                self._report("disconnected")

    def _command(self, function):
        if not self.ow.reset():
            return False  # no presence pulse: nothing on the pin
        self.ow.writebyte(0xCC)  # skip ROM: the one sensor on this pin
        self.ow.writebyte(function)
        return True

    def _read(self):
        """°C, or why there is none."""
        why = "disconnected"
        for _ in range(2):
            if not self._command(0xBE):
                return "disconnected"
            self.ow.readinto(self.buf)
            why = _check(self.buf)
            if why is None:
                return celsius(self.buf)
        return why

    def _report(self, result):
        if isinstance(result, str):
            if result != self.fault:
                self.fault = result
                self.emit(self.sensor, {"fault": result})
            return
        self.fault = None
        self.emit(self.sensor, {"value": result})


def celsius(scratch):
    """The temperature in a scratchpad: a signed 16-bit count of 1/16 °C, LSB first."""
    raw = scratch[0] | scratch[1] << 8
    return (raw - 65536 if raw & 0x8000 else raw) / 16  # exact: 1/16 is a binary fraction


def _check(buf):
    if buf == b"\xff" * 9:
        return "disconnected"  # the pull-up: nothing drove the line
    if crc8(buf[:8]) != buf[8]:
        return "crc"
    if buf[4] & 0x9F != 0x1F:
        return "bad data"  # the configuration byte's fixed bits: all zeros is a short
    if buf[0] | buf[1] << 8 == POWER_ON:
        return "power-on value"
    return None
