# The sensor drivers' one hardware seam: digital inputs, an ADC, an I2C bus and a OneWire bus.
# On the ESP32 each is MicroPython's own object (machine.Pin/ADC/I2C, onewire.OneWire), so a
# driver talks to the real part; on the host (the unix port, which has none of them) each is
# a simulated part in fayd_fw.board_host, driven by <host.dir>/board.jsonl, a script the
# tests write. The drivers are the same code on both: only what is behind these four
# functions differs.
from fayd_fw import hw

_sim = None  # the host's simulated board (fayd_fw.board_host.Board)


def _host():
    global _sim
    if _sim is None:
        from fayd_fw.board_host import Board

        _sim = Board(hw._host_dir())
    return _sim


def digital_in(pin, pull=None):
    """A digital input with ``value()`` (0/1); ``pull`` "up", "down" or None."""
    if hw.ESP32:
        from machine import Pin

        pulls = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN}
        return Pin(pin, Pin.IN, pulls.get(pull))
    return _host().pin(pin, 1 if pull == "up" else 0)


def adc(pin):
    """An analog input with ``read_u16()`` (0-65535), over the whole 0-3.3 V range."""
    if hw.ESP32:
        from machine import ADC, Pin

        a = ADC(Pin(pin))
        a.atten(ADC.ATTN_11DB)
        return a
    return _host().adc(pin)


def i2c(bus, sda, scl, freq=400000):
    """An I2C bus with ``readfrom_mem(addr, reg, n)`` and ``writeto_mem(addr, reg, buf)``
    (OSError when no part answers)."""
    if hw.ESP32:
        from machine import I2C, Pin

        return I2C(bus, sda=Pin(sda), scl=Pin(scl), freq=freq)
    return _host().i2c(bus)


def onewire(pin):
    """A OneWire bus: ``reset()`` (True when a part answers), ``writebyte``, ``readinto``."""
    if hw.ESP32:
        import onewire
        from machine import Pin

        return onewire.OneWire(Pin(pin))
    return _host().onewire(pin)


def tick(now):
    """Host: take the script's new lines and apply those now due. ESP32: nothing."""
    if not hw.ESP32:
        _host().tick(now)
