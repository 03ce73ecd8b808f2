"""The firmware's protocol module on the real MicroPython unix port makes the same bytes as
fayd/protocol (serial packets, audio frames, JSON frames it parses), and its robot role keeps
to priorities and limits. No daemon: fast."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from fayd.protocol import AudioChunk, Hello, SensorEvent, decode
from fayd.protocol.serial import SerialDecoder, encode_packet

from .conftest import FIRMWARE, FIRMWARE_LIB, micropython

pytestmark = pytest.mark.skipif(
    micropython() is None, reason="MicroPython unix port missing: sh firmware/tools/host_setup.sh"
)


def run_mp(script: str, folder: Path) -> list:
    """Run a script on the unix port (firmware on its path); its stdout is JSON lines."""
    path = folder / "script.py"
    path.write_text(script)
    env = {**os.environ, "MICROPYPATH": f"{FIRMWARE}:{FIRMWARE_LIB}:.frozen"}
    out = subprocess.run(
        [str(micropython()), str(path)], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr + out.stdout
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_packets_and_frames_match_fayd(tmp_path: Path) -> None:
    rng = random.Random(5)
    payloads = [b"", b"\x00", b"\x00" * 300, bytes(range(256)) * 3, b'{"v":1}']
    payloads += [rng.randbytes(rng.randrange(1, 2000)) for _ in range(20)]
    (tmp_path / "payloads.json").write_text(json.dumps([p.hex() for p in payloads]))
    script = f"""
import json, binascii
from fayd_fw import protocol as p
for h in json.load(open({str(tmp_path / "payloads.json")!r})):
    print(json.dumps(binascii.hexlify(p.encode_packet("audio", binascii.unhexlify(h))).decode()))
def show(b):
    print(json.dumps(binascii.hexlify(b).decode()))
show(p.pack_audio(0x0102, 0x03040506, 16000, b"\\x10\\x20", True, True))
show(p.encode("hello", p.Hello("d-1", ["mic"], "0.1.0", {{}}, 16000)))
show(p.encode("event", p.SensorEvent(7, "bp", 1.7e9, {{"sys": 150}})))
d = p.SerialDecoder()
got = d.feed(b"\\xff\\x13junk\\x00" + p.encode_packet("text", b'{{"v":1,"text":"hi"}}'))
print(json.dumps([[k, v.decode()] for k, v in got] + [d.garbage]))
"""
    rows = run_mp(script, tmp_path)
    for payload, got in zip(payloads, rows, strict=False):
        assert bytes.fromhex(got) == encode_packet("audio", payload)
    audio, hello, event, decoded = rows[len(payloads) :]
    assert bytes.fromhex(audio).hex(" ") == "46 41 01 03 02 01 06 05 04 03 80 3e 10 20"
    assert AudioChunk.decode(bytes.fromhex(audio)).pcm == b"\x10\x20"
    assert decode("hello", bytes.fromhex(hello)) == Hello(
        "d-1", ("mic",), fw="0.1.0", audio_in=decode("hello", bytes.fromhex(hello)).audio_in
    )
    assert decode("event", bytes.fromhex(event)) == SensorEvent(7, "bp", 1.7e9, {"sys": 150})
    assert decoded == [["text", '{"v":1,"text":"hi"}'], 1]
    # …and fayd's decoder takes the firmware's packets with garbage around them.
    dec = SerialDecoder()
    items = dec.feed(b"noise\x00" + bytes.fromhex(rows[4]) + b"\x01\x02")
    assert len(items) == 2 and items[-1] == ("audio", payloads[4])


def test_robot_priority_limits_and_safe_stop(tmp_path: Path) -> None:
    cfg = {
        "host": {"dir": str(tmp_path)},
        "robot": {
            "servos": {
                "head_tilt": {"idle": 90, "min": 80, "max": 100, "speed": 50},
                "arm_r": {"idle": 100, "min": 0, "max": 180, "speed": 300},
            },
            "templates": {"nod": {"head_tilt": [[5, 100]]}},  # the robot's own table wins
        },
    }
    script = f"""
import json, time
from fayd_fw import hw
from fayd_fw.robot import Robot
cfg = json.loads({json.dumps(json.dumps(cfg))})
hw.setup(cfg)
r = Robot(cfg, {str(FIRMWARE / "fayd_fw")!r})
print(json.dumps(r.act(("a", "wave", "smile", 0.5, 60))))
print(json.dumps(r.act(("b", "nod", "smile", 1.0, 58))))   # lower: dropped
print(json.dumps(r.act(("c", "warn", "serious", 1.0, 90))))  # higher: pre-empts
print(json.dumps(r.act(("d", "dance", "happy", 1.0, 99))))   # no template
r.tick(time.ticks_ms())
r.safe_stop()
print(json.dumps(r.act(("e", "nod", "smile", 1.0, 10))))
"""
    assert run_mp(script, tmp_path) == [True, False, True, False, True]
    rows = [json.loads(line) for line in (tmp_path / "hw.jsonl").read_text().splitlines()]
    robot = [r for r in rows if r["hw"] == "robot"]
    assert robot[1] == {**robot[1], "ignored": "nod", "why": "lower priority"}
    assert robot[2] == {**robot[2], "preempted": "wave", "by": "warn"}
    assert robot[4]["ignored"] == "dance" and robot[5]["safe_stop"]
    servo = [r for r in rows if r["hw"] == "servo"]
    # warn: head_tilt -10 x 1.0 → 80 (within 80..100), 10° at 50°/s takes ≥ 200 ms
    assert {"ch": "head_tilt", "angle": 80, "ms": 250, "tag": 2}.items() <= next(
        r for r in servo if r["ch"] == "head_tilt" and r["tag"] == 2
    ).items()
    assert all(80 <= r["angle"] <= 100 for r in servo if r["ch"] == "head_tilt")
    assert [r["tag"] for r in servo if r["tag"] == "safe"] == ["safe", "safe"]
    own = [r for r in servo if r["tag"] == 3]  # the robot's own "nod": +5° in ≥ 100 ms
    assert [(r["ch"], r["angle"]) for r in own] == [("head_tilt", 95)]
