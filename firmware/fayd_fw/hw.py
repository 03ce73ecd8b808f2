# Thin hardware shims. On the ESP32 they drive machine.PWM / machine.I2S / machine.UART and
# a display; on the host (MicroPython's unix port) they record what would be driven as JSON
# lines in <host.dir>/hw.jsonl, and take "hardware" inputs (typed text, sensor triggers,
# push-to-talk) from <host.dir>/inbox.jsonl. Everything raises FwError only.
import json
import sys
import time

from fayd_fw import FwError

ESP32 = sys.platform == "esp32"
_rec = None  # the host's hw.jsonl file
_console_is_link = False  # serial.uart "usb": nothing else may be printed on the console


def setup(cfg):
    global _rec
    if not ESP32:
        folder = state_dir(cfg)
        set_host_dir(folder)
        _rec = open(folder + "/hw.jsonl", "a")


def state_dir(cfg):
    """Where the device keeps what it writes (ota.json, the OTA app folders, the event ring;
    on the host also hw.jsonl and inbox.jsonl): the ESP32's flash root. On the host it is
    never the firmware's own folder (a run from the checkout must not write into it):
    $FAYD_FW_STATE (tools/host_boot.py --state), else config's host.dir, else
    $XDG_STATE_HOME/fayd-fw/<device> (~/.local/state/fayd-fw/<device>)."""
    if ESP32:
        return "."
    import os

    folder = os.getenv("FAYD_FW_STATE") or (cfg.get("host") or {}).get("dir")
    if not folder:
        base = os.getenv("XDG_STATE_HOME") or (os.getenv("HOME") or "/tmp") + "/.local/state"
        folder = base + "/fayd-fw/" + cfg["device"]
    _mkdirs(folder)
    return folder.rstrip("/") or "/"


def _mkdirs(path):
    import os

    so_far = ""
    for part in path.split("/"):
        so_far = so_far + "/" + part if so_far or path.startswith("/") else part
        if part:
            try:
                os.mkdir(so_far)
            except OSError:
                pass  # it exists (or cannot be made: opening a file in it will say so)


def record(what, **fields):
    """Host: one JSON line of what the hardware was told; device: a log line on the REPL."""
    fields["hw"] = what
    fields["t"] = time.ticks_ms()
    line = json.dumps(fields)
    if _rec is not None:
        _rec.write(line + "\n")
        _rec.flush()
    elif what in ("log", "link") and not _console_is_link:
        print(line)


def console_wanted(ms=2000):
    """serial.uart "usb" takes the REPL's console for the link, so mpremote cannot reach the
    REPL any more. Holding the BOOT button (GPIO 0) during the first 2 s after a reset keeps
    the console for the REPL instead (release RESET first: BOOT held while RESET is released
    starts the ROM's download mode, for esptool). Never on the host."""
    if not ESP32:
        return False
    from machine import Pin

    boot = Pin(0, Pin.IN, Pin.PULL_UP)
    t0 = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), t0) < ms:
        if boot.value() == 0:
            return True
        time.sleep_ms(20)
    return False


def log(msg):
    record("log", msg=msg)


def reset(why):
    """Restart the device: machine.reset() on the ESP32; on the host the process ends with
    status 3 and the test starts it again (the next boot)."""
    record("reset", why=why)
    if ESP32:
        import machine

        machine.reset()
    raise SystemExit(3)


def now_s():
    """The device clock (Unix seconds), or None when it was never set (ESP32 epoch 2000)."""
    t = time.time()
    if ESP32:
        t += 946684800  # ESP32 MicroPython counts from 2000-01-01
    return t if t > 1700000000 else None


# --- servos -------------------------------------------------------------------------------
class Servo:
    """One hobby servo. ``goto(angle, ms)`` starts a linear ramp that ``tick()`` drives."""

    def __init__(self, name, cfg):
        self.name = name
        self.min = cfg.get("min", 0)
        self.max = cfg.get("max", 180)
        self.speed = cfg.get("speed", 300)  # degrees per second, at most
        self.angle = self.target = self.origin = cfg.get("idle", 90)
        self.t0 = 0
        self.ms = 0
        self.pwm = None
        if ESP32:
            from machine import PWM, Pin

            self.pwm = PWM(Pin(cfg["pin"]), freq=50)
            self.us_min = cfg.get("us_min", 500)
            self.us_max = cfg.get("us_max", 2500)
        self._write(self.angle)

    def clamp(self, angle):
        return max(self.min, min(self.max, angle))

    def goto(self, angle, ms, tag=None):
        """Move to ``angle`` (clamped) in ``ms`` (stretched to respect the speed limit).
        Returns the (angle, ms) actually commanded."""
        angle = self.clamp(angle)
        need = int(abs(angle - self.angle) * 1000 / self.speed + 0.999)
        ms = max(int(ms), need)
        self.origin = self.angle
        self.target = angle
        self.t0 = time.ticks_ms()
        self.ms = ms
        record("servo", ch=self.name, angle=angle, ms=ms, tag=tag)
        return angle, ms

    def done(self):
        return self.angle == self.target

    def hold(self):
        self.target = self.angle

    def tick(self, now):
        if self.angle == self.target:
            return
        el = time.ticks_diff(now, self.t0)
        if el >= self.ms:
            a = self.target
        else:
            a = self.origin + (self.target - self.origin) * el / self.ms
        self.angle = a
        self._write(a)

    def _write(self, angle):
        if self.pwm is not None:
            us = self.us_min + (self.us_max - self.us_min) * (angle / 180)
            self.pwm.duty_ns(int(us * 1000))

    def off(self):
        if self.pwm is not None:
            self.pwm.duty_ns(0)


# --- audio --------------------------------------------------------------------------------
class I2SOut:
    """Speaker. ``write(pcm)`` takes a memoryview of s16le mono samples."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.rate = 0
        self.i2s = None
        self.shift = 0
        self.raw = None
        if not ESP32:
            self.raw = open(_host_dir() + "/speaker.pcm", "ab")

    def open(self, rate):
        if rate == self.rate:
            return
        self.close()
        self.rate = rate
        if ESP32:
            from machine import I2S, Pin

            c = self.cfg
            self.i2s = I2S(
                c.get("i2s_id", 1),
                sck=Pin(c["sck"]),
                ws=Pin(c["ws"]),
                sd=Pin(c["sd"]),
                mode=I2S.TX,
                bits=16,
                format=I2S.MONO,
                rate=rate,
                ibuf=c.get("ibuf", 20000),
            )
        record("i2s_out", rate=rate)

    def set_volume(self, volume):
        # I2S.shift halves per step: 100 -> 0, 50 -> -1, 25 -> -2, ... 0 -> mute
        v = max(0, min(100, volume))
        s = 0
        while v and v < 75 and s > -8:
            v *= 2
            s -= 1
        self.shift = s if volume > 0 else -16
        record("i2s_out", volume=volume, shift=self.shift)

    def write(self, pcm):
        if ESP32:
            if self.shift:
                from machine import I2S

                I2S.shift(buf=pcm, bits=16, shift=self.shift)
            self.i2s.write(pcm)
        else:
            self.raw.write(pcm)
            self.raw.flush()

    def stop(self):
        record("i2s_out", stop=True)
        self.close()

    def close(self):
        if self.i2s is not None:
            self.i2s.deinit()
            self.i2s = None
        self.rate = 0


class I2SIn:
    """Microphone: ``readinto(mv)`` fills a preallocated buffer with s16le mono samples;
    returns the number of bytes (0: nothing now). On the host <host.dir>/mic.pcm is the air
    around the microphone: bytes appended to it are heard, once, in order."""

    def __init__(self, cfg, rate):
        self.i2s = None
        self.src = None
        if ESP32:
            from machine import I2S, Pin

            self.i2s = I2S(
                cfg.get("i2s_id", 0),
                sck=Pin(cfg["sck"]),
                ws=Pin(cfg["ws"]),
                sd=Pin(cfg["sd"]),
                mode=I2S.RX,
                bits=16,
                format=I2S.MONO,
                rate=rate,
                ibuf=cfg.get("ibuf", 8192),
            )

    def _open(self):
        if self.src is None and not ESP32:
            try:
                self.src = open(_host_dir() + "/mic.pcm", "rb")
            except OSError:
                self.src = None
        return self.src

    def rewind(self):
        """Host: hear mic.pcm from its start (a whole recorded utterance: inbox "talk")."""
        if self._open():
            self.src.seek(0)

    def skip(self):
        """Host: drop what was heard before now (a push-to-talk press starts with fresh
        sound). The ESP32's I2S keeps only its DMA buffer (ibuf: 256 ms at 16 kHz) while
        nobody reads it, so a press sends at most that much from before it."""
        if self.i2s is None and self._open():
            self.src.seek(0, 2)

    def readinto(self, mv):
        if self.i2s is not None:
            return self.i2s.readinto(mv)
        if self._open() is None:
            return 0
        return self.src.readinto(mv) or 0


# --- display ------------------------------------------------------------------------------
class Display:
    """A small screen: lines of text, a face (expression) and a mouth opening 0..1."""

    def __init__(self, cfg):
        self.w, self.h = cfg.get("size", [240, 240])
        self.dev = None
        if ESP32 and cfg.get("driver"):
            # A module with make(cfg) -> a framebuf-based screen: fayd_fw.oled (SSD1306),
            # or one of your own on the device.
            try:
                drv = __import__(cfg["driver"])
                for part in cfg["driver"].split(".")[1:]:  # __import__ gives the top package
                    drv = getattr(drv, part)
                self.dev = drv.make(cfg)
            except (ImportError, OSError) as exc:  # no ssd1306 module, nothing on the bus
                print("screen %s: %r; nothing is drawn" % (cfg["driver"], exc))

    def text(self, lines):
        record("screen", lines=lines)
        if self.dev:
            self.dev.fill(0)
            for i, line in enumerate(lines):
                self.dev.text(line, 0, 8 + i * 10, 1)
            self.dev.show()

    def face(self, expression):
        record("screen", face=expression)
        if self.dev and hasattr(self.dev, "face"):
            self.dev.face(expression)

    def brightness(self, level):
        """0..100; a driver with contrast(0..255) (ssd1306) or brightness() is set."""
        record("screen", brightness=level)
        if self.dev and hasattr(self.dev, "brightness"):
            self.dev.brightness(level)
        elif self.dev and hasattr(self.dev, "contrast"):
            self.dev.contrast(level * 255 // 100)

    def mouth(self, opening):
        record("screen", mouth=opening)
        if self.dev and hasattr(self.dev, "mouth"):
            self.dev.mouth(opening)


# --- serial -------------------------------------------------------------------------------
class Uart:
    """The serial link to fayd. ``read(buf)`` never blocks: returns bytes read (0 if none);
    FwError("...", "link") when the line is gone (host: the PTY hung up).

    serial.uart "usb": the REPL's console is the link instead of a UART's pins. On an
    ESP32-S3 (or -C3) running MicroPython's generic build that is the chip's own USB port
    (USB-CDC, /dev/ttyACM0 on the fayd box); on the host, the process's stdin and stdout."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.usb = cfg.get("uart") == "usb"
        self.port = None
        self.out = None
        self.poller = None

    def open(self):
        if self.usb:
            return self._open_console()
        if ESP32:
            from machine import UART

            c = self.cfg
            self.port = UART(
                c.get("uart", 1),
                baudrate=c.get("baud", 921600),
                tx=c.get("tx", 17),
                rx=c.get("rx", 16),
                rxbuf=c.get("rxbuf", 4096),
                timeout=0,
            )
            return
        import select
        import termios

        try:
            self.port = open(self.cfg["path"], "r+b")
        except OSError as exc:
            raise FwError("cannot open %s: %s" % (self.cfg["path"], exc), "link")
        fd = self.port.fileno()
        attr = termios.tcgetattr(fd)
        attr[6][6] = 0  # VMIN: a read returns what is there, never waits
        attr[6][5] = 0  # VTIME
        termios.tcsetattr(fd, termios.TCSANOW, attr)
        self.poller = select.poll()
        self.poller.register(self.port, select.POLLIN)

    def _open_console(self):
        global _console_is_link
        import select

        import micropython

        micropython.kbd_intr(-1)  # a 0x03 byte in a packet is data, not Ctrl-C
        _console_is_link = True
        self.port = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.poller = select.poll()
        self.poller.register(sys.stdin, select.POLLIN)

    def _read_console(self, buf):
        # A console's read blocks until it has all it was asked for, so one byte at a time,
        # while poll says one is there: bounded by the buffer, never waiting.
        n = 0
        while n < len(buf):
            ready = self.poller.poll(0)
            if not ready:
                break
            if ready[0][1] & 0x18:  # POLLERR | POLLHUP (host: the other end is gone)
                raise FwError("console hung up", "link")
            c = self.port.read(1)
            if not c:
                raise FwError("console closed", "link")
            buf[n] = c[0]
            n += 1
        return n

    def read(self, buf):
        if self.port is None:
            raise FwError("serial port closed", "link")
        if self.usb:
            return self._read_console(buf)
        if ESP32:
            return self.port.readinto(buf) or 0
        for _, ev in self.poller.poll(0):
            if ev & 0x18:  # POLLERR | POLLHUP: the cable is gone
                raise FwError("serial line hung up", "link")
            try:
                return self.port.readinto(buf) or 0
            except OSError as exc:
                raise FwError("serial read: %s" % exc, "link")
        return 0

    def write(self, data):
        if self.port is None:
            raise FwError("serial port closed", "link")
        try:
            (self.out or self.port).write(data)  # no flush(): on a tty it fails in the unix port
        except OSError as exc:
            raise FwError("serial write: %s" % exc, "link")

    def close(self):
        if self.port is not None:
            try:
                if not ESP32 and not self.usb:
                    self.port.close()
            except OSError:
                pass
            self.port = None


# --- inputs -------------------------------------------------------------------------------
DEBOUNCE_MS = 30  # a button's contacts bounce for a few ms: one press, one event


class Inputs:
    """Things the hardware reports: typed text, sensor triggers, the push-to-talk button.
    ESP32: digital pins (sensors: an edge → an event; mic.ptt_pin: {"ptt": pressed});
    host: new lines of <host.dir>/inbox.jsonl, e.g. {"ptt": true} … {"ptt": false}."""

    def __init__(self, cfg):
        self.pins = []
        self.offset = 0
        self.path = None
        if ESP32:
            for s in cfg.get("sensors", []):
                self._pin(s, s["pin"], s.get("pull"), s.get("active"))
            mc = cfg.get("mic") or {}
            if "mic" in cfg.get("roles", []) and mc.get("ptt_pin") is not None:
                ptt = {"ptt": True, "both_edges": True}
                self._pin(ptt, mc["ptt_pin"], mc.get("ptt_pull", "up"), mc.get("ptt_active"))
        else:
            self.path = _host_dir() + "/inbox.jsonl"
            try:  # inputs read before a reboot are not read again
                with open(self.path + ".offset") as f:
                    self.offset = int(f.read())
            except (OSError, ValueError):
                self.offset = 0

    def _pin(self, spec, number, pull, active):
        """A digital input; ``active`` is the level when pressed/triggered (default: 0 with
        a pull-up, as a button to ground; else 1)."""
        from machine import Pin

        pulls = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN}
        pin = Pin(number, Pin.IN, pulls.get(pull))
        level = active if active is not None else (0 if pull == "up" else 1)
        self.pins.append([spec, pin, pin.value(), level, time.ticks_ms()])

    def poll(self):
        """A list of dicts: {"text": …} / {"sensor": …, "data": {…}} / {"talk": true} /
        {"ptt": true|false}."""
        out = []
        if self.path:
            try:
                f = open(self.path, "rb")
            except OSError:
                return out
            f.seek(self.offset)
            data = f.read()
            f.close()
            end = data.rfind(b"\n") + 1
            if end:
                self.offset += end
                with open(self.path + ".offset", "w") as f:
                    f.write(str(self.offset))
            for line in data[:end].split(b"\n"):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        log("inbox: bad line")
        now = time.ticks_ms()
        for entry in self.pins:
            spec, pin, last, level, changed = entry
            v = pin.value()
            if v != last and time.ticks_diff(now, changed) >= DEBOUNCE_MS:
                entry[2], entry[4] = v, now
                active = v == level
                if "ptt" in spec:
                    out.append({"ptt": active})
                elif active or spec.get("both_edges"):
                    out.append({"sensor": spec["sensor"], "data": {"active": active}})
        return out


_host_cfg_dir = None


def _host_dir():
    return _host_cfg_dir


def set_host_dir(path):
    global _host_cfg_dir
    _host_cfg_dir = path
