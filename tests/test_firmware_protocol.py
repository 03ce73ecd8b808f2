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
from fayd.testing.firmware import FIRMWARE, FIRMWARE_LIB, micropython

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


def test_commands_are_answered_as_the_protocol_says(tmp_path: Path) -> None:
    """The firmware's answers to commands fayd never sends wrong (so the contract test with
    the daemon cannot show them): bad arguments, an unknown name, a role it lacks, settings
    it has nothing for. The link is swapped for one that prints each frame sent."""
    config = {
        "device": "cmd-1",
        "roles": ["speaker"],
        "transport": "mqtt",
        "mqtt": {"host": "127.0.0.1", "port": 1},
        "speaker": {"rate": 16000},
        "host": {"dir": str(tmp_path)},
    }
    commands = [
        {"name": "brightness", "args": {"level": 50}, "id": "c-1"},  # no screen
        {"name": "volume", "args": {"volume": 300}, "id": "c-2"},
        {"name": "dance", "args": {}, "id": "c-3"},
        {"name": "settings", "args": {"volume": "loud", "wake": True}, "id": "c-4"},
        {"name": "settings", "args": {"volume": 20, "wake": True, "later": 1}, "id": "c-5"},
        {"name": "stop", "args": {"reason": "asked"}, "id": "c-6"},
        {"name": "volume", "args": {"volume": 60}},  # no id: no answer
    ]
    script = f"""
import json
from fayd_fw.app import Device
class Printed:
    name = "test"
    up = True
    def send(self, kind, payload, retain=False):
        print(json.dumps([kind, json.loads(payload)]))
dev = Device({config!r}, {str(FIRMWARE)!r})
dev.link = Printed()
for c in {commands!r}:
    dev.on_frame("command", json.dumps(c).encode())
"""
    sent = run_mp(script, tmp_path)
    by_ref = {frame["ref"]: (kind, frame) for kind, frame in sent}
    assert len(sent) == 6  # the id-less command got no answer
    assert by_ref["c-1"] == ("ack", {"v": 1, "ref": "c-1", "ok": False, "detail": "no screen"})
    assert by_ref["c-2"][0] == "error" and by_ref["c-2"][1]["code"] == "malformed"
    assert by_ref["c-3"][0] == "error" and by_ref["c-3"][1]["code"] == "unknown"
    assert by_ref["c-4"][0] == "error" and by_ref["c-4"][1]["code"] == "malformed"
    assert by_ref["c-5"] == (
        "ack",
        {"v": 1, "ref": "c-5", "ok": True, "applied": ["volume"], "ignored": ["later", "wake"]},
    )
    assert by_ref["c-6"] == ("ack", {"v": 1, "ref": "c-6", "ok": True})
    volumes = [
        json.loads(line)["volume"]
        for line in (tmp_path / "hw.jsonl").read_text().splitlines()
        if '"i2s_out"' in line and '"volume"' in line
    ]
    assert volumes == [80, 20, 60]  # the start, c-5, the id-less one; never "loud" or 300


def test_the_oled_screen_draws_text_and_a_face(tmp_path: Path) -> None:
    """fayd_fw.oled (the reference build's SSD1306) on a real MicroPython framebuf of its
    size: the text on the left, a face on the right whose mouth follows the expression and
    opens with the Lips track; brightness becomes the panel's contrast."""
    script = """
import json, framebuf
from fayd_fw.oled import Oled
class Panel(framebuf.FrameBuffer):  # an SSD1306_I2C without its I2C bus
    def __init__(self):
        self.buf = bytearray(128 * 64 // 8)
        super().__init__(self.buf, 128, 64, framebuf.MONO_VLSB)
        self.shown = 0
        self.level = None
    def show(self):
        self.shown += 1
    def contrast(self, level):
        self.level = level
def lit(p, x0, x1, y0=0, y1=64):
    return sum(p.pixel(x, y) for x in range(x0, x1) for y in range(y0, y1))
p = Panel()
o = Oled(p, 128, 64)
o.fill(0)
o.text("Lunch at noon", 0, 8, 1)
o.show()
print(json.dumps([lit(p, 0, 96), lit(p, 96, 128), p.shown]))
mouth = []
for face in ("neutral", "smile", "sad"):
    o.face(face)
    mouth.append([[y for y in range(40, 56) if p.pixel(104, y)], lit(p, 96, 128, 38, 56)])
o.mouth(0.8)
mouth.append([[], lit(p, 96, 128, 38, 56)])
o.contrast(128)
print(json.dumps([mouth, p.level, p.shown]))
"""
    (text_px, face_px, shown), (mouths, level, shown_after) = run_mp(script, tmp_path)
    assert text_px > 40 and face_px > 20 and shown == 1
    (neutral_y, neutral), (smile_y, _), (sad_y, _), (_, open_px) = mouths
    # Left of the mouth's middle: lower than the corners-level line when it frowns, higher
    # when it smiles (y grows downwards), level when neutral.
    assert smile_y[0] < neutral_y[0] < sad_y[0]
    assert open_px > 3 * neutral  # speaking: an open mouth
    assert level == 128 and shown_after == 5
