# The host's simulated sensor parts behind fayd_fw.board (the unix port has no machine.Pin,
# ADC, I2C or OneWire). <host.dir>/board.jsonl is the world around the board; each line:
#   {"pin": 14, "v": 1}                       a digital input's level
#   {"adc": 1, "v": 40000}                    an analog input's reading (0-65535)
#   {"ow": 47, "temp_c": 21.5}                the DS18B20 on a OneWire pin measures this
#   {"ow": 47, "present": false}              ... is unplugged (nothing answers the reset)
#   {"ow": 47, "corrupt": true}               ... its scratchpad arrives with a flipped bit
#   {"ow": 47, "power_on": true}              ... never converts (reads 85 °C, its reset value)
#   {"i2c": 1, "addr": 104, "accel": [[x, y, z], ...]}  an MPU6050's samples (g), queued at its
#                                             sample rate into its FIFO (saturating at its range)
#   {"i2c": 1, "addr": 104}                   an MPU6050 on the bus, still (0, 0, 1 g)
# "ms": a delay after the batch (the lines read at once) arrived, so a test can script timing
# (a bouncing contact, a button held). At start the levels already in the file are the world
# as it is (a reboot does not open the door again); samples written before are gone.
import json
import struct
import time

from fayd_fw import hw

FIFO_MAX = 1024  # bytes, as the MPU6050's


class Board:
    def __init__(self, folder):
        self.path = folder + "/board.jsonl"
        self.offset = 0
        self.levels = {}
        self.adcs = {}
        self.ow = {}
        self.mpus = {}
        self.due = []  # [due_ms, n, item], n keeping the file's order for equal times
        self.n = 0
        for item in self._new_lines():
            self._apply(item, time.ticks_ms(), True)

    def _new_lines(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        out = []
        for line in data[:end].split(b"\n"):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    hw.log("board.jsonl: bad line")
        return out

    def tick(self, now):
        for item in self._new_lines():
            self.n += 1
            self.due.append([time.ticks_add(now, int(item.get("ms", 0))), self.n, item])
        if not self.due:
            return
        self.due.sort(key=lambda d: (time.ticks_diff(d[0], now), d[1]))
        while self.due and time.ticks_diff(now, self.due[0][0]) >= 0:
            due, _, item = self.due.pop(0)
            self._apply(item, due, False)

    def _apply(self, item, at, past):
        if "pin" in item:
            self.levels[item["pin"]] = int(item["v"])
        elif "adc" in item:
            self.adcs[item["adc"]] = int(item["v"])
        elif "ow" in item:
            self.ow.setdefault(item["ow"], Ds18b20()).set(item)
        elif "i2c" in item:
            mpu = self.mpus.setdefault((item["i2c"], item.get("addr", 0x68)), Mpu6050())
            if "accel" in item and not past:
                mpu.queue(item["accel"], at)

    def pin(self, number, default):
        return _Value(lambda: self.levels.get(number, default))

    def adc(self, number):
        return _Value(lambda: self.adcs.get(number, 0))

    def i2c(self, bus):
        return _I2C(self, bus)

    def onewire(self, pin):
        return self.ow.setdefault(pin, Ds18b20())


class _Value:
    def __init__(self, read):
        self.value = self.read_u16 = read


class _I2C:
    def __init__(self, board, bus):
        self.board = board
        self.bus = bus

    def _part(self, addr):
        part = self.board.mpus.get((self.bus, addr))
        if part is None:
            raise OSError(19)  # ENODEV, as the ESP32 says when nothing acks the address
        return part

    def readfrom_mem(self, addr, reg, n):
        return self._part(addr).read(reg, n)

    def writeto_mem(self, addr, reg, buf):
        self._part(addr).write(reg, buf)


class Mpu6050:
    """Registers the fall driver uses: WHO_AM_I, PWR_MGMT_1, SMPLRT_DIV, CONFIG,
    ACCEL_CONFIG, FIFO_EN, USER_CTRL, INT_STATUS, FIFO_COUNT, FIFO_R_W."""

    def __init__(self):
        self.regs = {0x75: 0x68, 0x6B: 0x40}  # asleep after power-on
        self.samples = []  # [due_ms, (x, y, z)]
        self.fifo = bytearray()

    def write(self, reg, buf):
        self.regs[reg] = buf[0]
        if reg == 0x6A and buf[0] & 0x04:  # USER_CTRL FIFO_RESET
            self.fifo = bytearray()
            self.regs[0x3A] = self.regs.get(0x3A, 0) & ~0x10

    def queue(self, samples, start):
        dlpf = self.regs.get(0x1A, 0) & 7 in (1, 2, 3, 4, 5, 6)
        period = (1 + self.regs.get(0x19, 0)) * (1.0 if dlpf else 0.125)
        last = self.samples[-1][0] if self.samples else start
        if time.ticks_diff(last, start) > 0:
            start = last  # after what is still queued: one stream of samples
        for k, s in enumerate(samples):
            self.samples.append([time.ticks_add(start, int(k * period)), s])

    def _fill(self):
        now = time.ticks_ms()
        lsb = 16384 >> ((self.regs.get(0x1C, 0) >> 3) & 3)
        on = self.regs.get(0x6A, 0) & 0x40 and self.regs.get(0x23, 0) & 0x08
        while self.samples and time.ticks_diff(now, self.samples[0][0]) >= 0:
            _, s = self.samples.pop(0)
            if not on or self.regs.get(0x6B, 0) & 0x40:
                continue  # asleep, or the FIFO off: the sample is not kept
            if len(self.fifo) + 6 > FIFO_MAX:
                self.regs[0x3A] = self.regs.get(0x3A, 0) | 0x10  # FIFO_OFLOW
                continue
            raw = [max(-32768, min(32767, round(v * lsb))) for v in s]
            self.fifo.extend(struct.pack(">hhh", *raw))

    def read(self, reg, n):
        if reg == 0x72:
            self._fill()
            return struct.pack(">H", len(self.fifo))[:n]
        if reg == 0x74:
            out, self.fifo = bytes(self.fifo[:n]), self.fifo[n:]
            return out + bytes(n - len(out))
        if reg == 0x3A:
            status = self.regs.get(0x3A, 0)
            self.regs[0x3A] = status & ~0x10  # cleared by reading
            return bytes([status])
        return bytes(self.regs.get(reg + i, 0) for i in range(n))


class Ds18b20:
    """One DS18B20 on a OneWire bus, as onewire.OneWire shows it: reset, ROM commands, the
    convert (0x44) and read-scratchpad (0xBE) functions."""

    def __init__(self):
        self.present = True
        self.temp_c = 20.0
        self.corrupt = False
        self.power_on = False
        self.scratch = self._scratch(85.0)  # the power-on value until a conversion
        self.out = b""

    def set(self, item):
        for key in ("present", "temp_c", "corrupt", "power_on"):
            if key in item:
                setattr(self, key, item[key])
        if self.power_on:  # powered up again and never converting: its reset value
            self.scratch = self._scratch(85.0)

    def _scratch(self, c):
        from fayd_fw.drivers.ds18b20 import crc8

        raw = struct.pack("<h", round(c * 16)) + b"\x4b\x46\x7f\xff\x0c\x10"
        return raw + bytes([crc8(raw)])

    def reset(self, required=False):
        self.out = b""
        if required and not self.present:
            raise OSError(5)
        return self.present

    def writebyte(self, b):
        if not self.present:
            return
        if b == 0x44 and not self.power_on:
            self.scratch = self._scratch(self.temp_c)
        elif b == 0xBE:
            self.out = self.scratch
            if self.corrupt:
                self.out = bytes([self.out[0] ^ 0x04]) + self.out[1:]

    def readinto(self, buf):
        for i in range(len(buf)):  # an empty bus reads as ones (the pull-up)
            buf[i] = self.out[i] if i < len(self.out) else 0xFF
        self.out = self.out[len(buf) :]
