# An MPU6050-class accelerometer (MPU6050, MPU6500, MPU9250: the same registers for this) on
# I2C, sampling at rate_hz into its own 1 KB FIFO, so no sample (and no impact spike) is
# missed while the main loop is busy for up to ~1.7 s at 100 Hz; read() takes what gathered.
import struct

from fayd_fw import FwError

WHO_AM_I = 0x75
KNOWN = (0x68, 0x70, 0x71, 0x73)  # MPU6050, MPU6500, MPU9250, MPU9255
PWR_MGMT_1, SMPLRT_DIV, CONFIG, ACCEL_CONFIG = 0x6B, 0x19, 0x1A, 0x1C
FIFO_EN, INT_ENABLE, INT_STATUS, USER_CTRL = 0x23, 0x38, 0x3A, 0x6A
FIFO_COUNT, FIFO_R_W = 0x72, 0x74
RANGES = {2: 0, 4: 1, 8: 2, 16: 3}  # ±g -> AFS_SEL
MAX_READ = 300  # bytes per read (50 samples): each call stays short


class Mpu6050:
    def __init__(self, i2c, addr=0x68, range_g=8, rate_hz=100):
        if range_g not in RANGES or not 10 <= rate_hz <= 500:
            raise FwError("range_g must be 2, 4, 8 or 16 and rate_hz 10-500")
        self.i2c, self.addr = i2c, addr
        who = self._get(WHO_AM_I, 1)[0]
        if who not in KNOWN:
            raise FwError("no MPU6050 at 0x%02x (WHO_AM_I 0x%02x)" % (addr, who), "hw")
        self._set(PWR_MGMT_1, 0x01)  # awake, clocked from the X gyro's PLL
        self._set(CONFIG, 0x03)  # low-pass 44 Hz; the sample clock is then 1 kHz
        self._set(SMPLRT_DIV, 1000 // rate_hz - 1)
        self._set(ACCEL_CONFIG, RANGES[range_g] << 3)
        self._set(INT_ENABLE, 0x10)  # FIFO overflow flagged in INT_STATUS
        self.lsb = 16384 >> RANGES[range_g]  # counts per g
        self.period_ms = 1000 // rate_hz  # the sample clock: 1 kHz / (1 + SMPLRT_DIV)
        self.restart()

    def _get(self, reg, n):
        return self.i2c.readfrom_mem(self.addr, reg, n)

    def _set(self, reg, value):
        self.i2c.writeto_mem(self.addr, reg, bytes([value]))

    def restart(self):
        """Empty the FIFO and fill it with accelerometer samples from now on."""
        self._set(USER_CTRL, 0x04)  # FIFO reset
        self._set(USER_CTRL, 0x40)  # FIFO on
        self._set(FIFO_EN, 0x08)  # the accelerometer's X, Y, Z

    def read(self):
        """The samples gathered since the last read, oldest first, as (x, y, z) in g; None
        when the FIFO overflowed (samples were lost: it starts again empty)."""
        count = struct.unpack(">H", self._get(FIFO_COUNT, 2))[0]
        if self._get(INT_STATUS, 1)[0] & 0x10 or count >= 1024:
            self.restart()
            return None
        n = min(count, MAX_READ) // 6 * 6
        if not n:
            return []
        data = self._get(FIFO_R_W, n)
        scale = self.lsb
        return [
            (x / scale, y / scale, z / scale)
            for x, y, z in (struct.unpack_from(">hhh", data, i) for i in range(0, n, 6))
        ]
