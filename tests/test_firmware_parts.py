"""The sensor drivers' register- and byte-level code on MicroPython's unix port, against the
parts' datasheets (not against the host's simulated parts, which share some of it): the
DS18B20's CRC-8 and temperature format, the MPU6050 driver's setup, scaling, saturation and
FIFO overflow."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fayd.testing.firmware import FIRMWARE, micropython


def run(script: str, folder: Path | None = None) -> list:
    exe = micropython()
    if exe is None:
        pytest.skip("MicroPython unix port missing: sh firmware/tools/host_setup.sh")
    prelude = "import json\nfrom fayd_fw import hw\n"
    if folder is not None:
        prelude += f"hw.set_host_dir({str(folder)!r})\n"
    done = subprocess.run(
        [exe, "-c", prelude + script],
        env={"MICROPYPATH": str(FIRMWARE)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout.splitlines()[-1])


def test_ds18b20_crc_and_temperatures_as_the_datasheet_gives_them() -> None:
    # Maxim application note 27: the ROM 02 1C B8 01 00 00 00 has the CRC A2.
    # DS18B20 datasheet, table 1: temperature/data relationship (12-bit).
    table = {
        125.0: 0x07D0,
        85.0: 0x0550,
        25.0625: 0x0191,
        10.125: 0x00A2,
        0.5: 0x0008,
        0.0: 0x0000,
        -0.5: 0xFFF8,
        -10.125: 0xFF5E,
        -25.0625: 0xFE6F,
        -55.0: 0xFC90,
    }
    script = f"""
from fayd_fw.drivers.ds18b20 import crc8, celsius
table = {json.dumps({str(k): v for k, v in table.items()})}
got = {{c: celsius(bytes([raw & 0xFF, raw >> 8])) for c, raw in table.items()}}
rom = bytes([0x02, 0x1C, 0xB8, 0x01, 0, 0, 0])
print(json.dumps([crc8(rom), crc8(rom + bytes([crc8(rom)])), got]))
"""
    crc, residue, got = run(script)
    assert crc == 0xA2
    assert residue == 0  # data followed by its CRC checks to zero
    assert {float(k): v for k, v in got.items()} == {k: k for k in table}


def test_mpu6050_setup_scaling_saturation_and_overflow(tmp_path: Path) -> None:
    (tmp_path / "board.jsonl").write_text(json.dumps({"i2c": 0, "addr": 104}) + "\n")
    script = (
        f"PATH = {str(tmp_path / 'board.jsonl')!r}\n"
        + """
import time
from fayd_fw import board
from fayd_fw.drivers.mpu6050 import Mpu6050
bus = board.i2c(0, 6, 7)
mpu = Mpu6050(bus, 0x68, 8, 100)
regs = board._host().mpus[(0, 0x68)].regs
setup = [regs[r] for r in (0x6B, 0x1A, 0x19, 0x1C, 0x23, 0x6A)]
with open(PATH, "a") as f:
    f.write(json.dumps({"i2c": 0, "addr": 104, "accel": [[0.5, -1.0, 9.5], [0, 0, -12]]}) + "\\n")
board.tick(time.ticks_ms())
time.sleep_ms(30)
two = mpu.read()
with open(PATH, "a") as f:  # 2 s of samples at once: more than the 1 KB FIFO holds
    f.write(json.dumps({"i2c": 0, "addr": 104, "accel": [[0, 0, 1]] * 200}) + "\\n")
board.tick(time.ticks_ms())
time.sleep_ms(2100)
lost = mpu.read()
after = mpu.read()
try:
    board.i2c(0, 6, 7).readfrom_mem(0x69, 0x75, 1)
    missing = "answered"
except OSError as exc:
    missing = exc.args[0]
print(json.dumps([setup, mpu.period_ms, two, lost, after, missing]))
"""
    )
    setup, period, two, lost, after, missing = run(script, tmp_path)
    # Awake on the gyro's clock, 44 Hz low-pass, 1 kHz / (1 + 9) = 100 Hz, ±8 g, the
    # accelerometer into the FIFO, the FIFO on.
    assert setup == [0x01, 0x03, 9, 2 << 3, 0x08, 0x40] and period == 10
    # 4096 counts a g at ±8 g; what is beyond the range reads as its end.
    assert two == [[0.5, -1.0, 32767 / 4096], [0.0, 0.0, -8.0]]
    assert lost is None and after == []  # an overflow is told, and the FIFO starts again
    assert missing == 19  # ENODEV: nothing at that address


def test_ds18b20_scratchpads_that_are_not_readings() -> None:
    good = [0x91, 0x01, 0x4B, 0x46, 0x7F, 0xFF, 0x0F, 0x10]  # 25.0625 °C, 12-bit config
    script = f"""
from fayd_fw.drivers.ds18b20 import _check, crc8
good = bytes({good})
cases = {{
    "good": good + bytes([crc8(good)]),
    "flipped": bytes([good[0] ^ 1]) + good[1:] + bytes([crc8(good)]),
    "no one": bytes([0xFF] * 9),
    "shorted": bytes(9),
    "power-on": bytes([0x50, 0x05]) + good[2:] + bytes([crc8(bytes([0x50, 0x05]) + good[2:])]),
}}
print(json.dumps({{k: _check(v) for k, v in cases.items()}}))
"""
    assert run(script) == {
        "good": None,
        "flipped": "crc",
        "no one": "disconnected",
        "shorted": "bad data",  # all zeros: its CRC is right (0), its config byte is not
        "power-on": "power-on value",
    }
