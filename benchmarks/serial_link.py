"""Serial link throughput: frames end to end through a socat PTY pair.

    .venv/bin/python benchmarks/serial_link.py [--seconds 3] [--frame-bytes 1024]

A simulated device (a pyserial port on one end, in a thread) streams 16 kHz audio frames
(``--frame-bytes`` of PCM each) to a SerialLink on the other end, which decodes them and
hands them to an inbound callback; then the link sends the same frames down to the device.
``bytes_per_s`` is the uplink frame payload delivered per second (what fayd receives).
A PTY is not paced by a baud rate, so this measures fayd's side (framing, CRC, the event
loop); at 921600 baud a real UART carries at most 92,160 bytes/s (8N1). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import serial

from fayd.auth import new_device_secret, serial_proof
from fayd.protocol import AudioChunk, Command, Hello, Proof, decode, encode
from fayd.protocol.serial import SerialDecoder, encode_packet
from fayd.transport.serial import SerialLink

KEY = new_device_secret()  # the bench device's, as `fayd devices add bench` would make


async def keys(device: str) -> str | None:
    return KEY if device == "bench" else None


def prove(dev: serial.Serial) -> None:
    """The device's side of the handshake: hello, then the proof of fayd's challenge."""
    dev.write(encode_packet("hello", encode(Hello(device="bench", roles=("mic", "speaker")))))
    decoder = SerialDecoder()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for item in decoder.feed(dev.read(4096)):
            if isinstance(item, tuple) and item[0] == "challenge":
                nonce = decode(*item).nonce
                proof = Proof("bench", nonce, serial_proof(KEY, "bench", nonce))
                dev.write(encode_packet("proof", encode(proof)))
                return
    sys.exit("no challenge from the link")


def start_socat(folder: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    a, b, log = folder / "fayd", folder / "device", folder / "socat.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            ["socat", "-d", "-d", f"pty,raw,echo=0,link={a}", f"pty,raw,echo=0,link={b}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 10
    while b"starting data transfer loop" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait(10)
            sys.exit(f"socat did not start: {log.read_text()}")
        time.sleep(0.01)
    return proc, a, b


def write_all(dev: serial.Serial, data: bytes) -> None:
    """Write in 64 KB pieces (pyserial re-slices the whole rest of a big buffer per write)."""
    view = memoryview(data)
    for start in range(0, len(view), 65536):
        dev.write(view[start : start + 65536])


async def measure(a: Path, b: Path, seconds: float, frame_bytes: int) -> dict[str, object]:
    received = {"frames": 0, "bytes": 0}
    done = asyncio.Event()

    async def inbound(device: str, kind: str, payload: bytes) -> None:
        if kind == "audio":
            received["frames"] += 1
            received["bytes"] += len(payload)
            if received["frames"] == target:
                done.set()

    link = SerialLink(str(a), inbound, keys, queue_size=100_000)
    task = asyncio.create_task(link.run())
    await asyncio.wait_for(link.connected.wait(), 10)
    dev = serial.Serial(str(b), 921600, timeout=0.05)
    await asyncio.to_thread(prove, dev)
    await asyncio.wait_for(link.identified.wait(), 10)

    pcm = bytes(range(256)) * (frame_bytes // 256)
    frames = [AudioChunk(1, seq, 16000, pcm) for seq in range(4096)]
    blob = b"".join(encode_packet("audio", encode(f)) for f in frames)

    async def uplink(reps: int) -> float:
        """Seconds for ``reps`` x 4096 frames from the device to the inbound callback."""
        nonlocal target
        target = reps * len(frames)
        received.update(frames=0, bytes=0)
        done.clear()
        started = time.perf_counter()
        writer = threading.Thread(target=lambda: [write_all(dev, blob) for _ in range(reps)])
        writer.start()
        await asyncio.wait_for(done.wait(), 300)
        took = time.perf_counter() - started
        await asyncio.to_thread(writer.join, 30)
        return took

    target = 0
    reps = 1
    up_s = await uplink(reps)
    while up_s < seconds / 2 and reps < 256:  # grow the run until it lasts long enough
        reps = max(reps * 2, int(reps * seconds / max(up_s, 1e-3)))
        reps = min(reps, 256)
        up_s = await uplink(reps)

    # Downlink: the link sends, the device thread reads and decodes.
    down_target = min(target, 4096)

    def read_down() -> int:
        decoder = SerialDecoder()
        count = 0
        deadline = time.monotonic() + 120
        while count < down_target and time.monotonic() < deadline:
            items = decoder.feed(dev.read(65536))
            count += sum(1 for item in items if isinstance(item, tuple) and item[0] == "audio")
        return count

    reader = asyncio.create_task(asyncio.to_thread(read_down))
    started = time.perf_counter()
    for f in frames[:down_target]:
        link.send("bench", f)
        if link.outbox.qsize() > 64:
            await asyncio.sleep(0)
    link.send("bench", Command("stop"))
    got_down = await reader
    down_s = time.perf_counter() - started

    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    dev.close()
    payload = len(encode(frames[0]))
    wire = len(blob) // len(frames)
    return {
        "bytes_per_s": round(received["bytes"] / up_s),
        "frames_per_s": round(received["frames"] / up_s),
        "frame_payload_bytes": payload,
        "frame_wire_bytes": wire,
        "seconds": round(up_s, 2),
        "frames": received["frames"],
        "down_bytes_per_s": round(got_down * payload / down_s),
        "down_frames": got_down,
        "garbage": sum(link.status.garbage.values()),
        "dropped": link.status.dropped,
        "uart_921600_bytes_per_s": 92160,
        "transport": "socat pty pair (not baud-limited)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--frame-bytes", type=int, default=1024)
    args = parser.parse_args()
    if shutil.which("socat") is None:
        sys.exit("socat is needed (apt-get install socat)")
    with tempfile.TemporaryDirectory(prefix="fayd-serial-") as tmp:
        proc, a, b = start_socat(Path(tmp))
        try:
            result = asyncio.run(measure(a, b, args.seconds, args.frame_bytes))
        finally:
            proc.terminate()
            proc.wait(10)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
