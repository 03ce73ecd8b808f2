"""Fuzz fayd over MQTT: random and mutated frames of every uplink kind, with valid sensor
events interleaved, sent to the real daemon through its embedded mosquitto.

    .venv/bin/python benchmarks/fuzz_mqtt.py [--frames 100000] [--seed 1]

Four fuzzing devices publish ``--frames`` frames in total at QoS 0, ``--rate`` a second:
random bytes, bit flips / truncations / splices of valid frames, JSON with fields of the
wrong type, deep nesting, huge numbers, NaN, oversized frames, unknown kinds, and valid JSON
that is hostile (lone surrogates, another device's id, ids with spaces, "/" or 300
characters). Meanwhile a
valid sensor publishes numbered events at QoS 1; events fayd never acked (its inbox was full)
are sent again, as a device does, until each is acked. Prints one JSON object: what was sent,
what came back, fayd's own counters, and whether it stayed up with no traceback in its log.
``tests/test_fuzz_mqtt.py`` runs the same with 10k frames.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from fayd.protocol import AudioChunk, SensorEvent, Topics, decode, encode
from fayd.testing.harness import DaemonProcess

TOPICS = Topics()
UP_KINDS = ("hello", "presence", "heartbeat", "audio", "text", "event", "ack", "error")
OTHER_KINDS = ("human", "command", "bogus", "", "x" * 80, "évent")
VALID_DEVICE = "fuzz-valid"


def seeds(device: str) -> dict[str, list[Any]]:
    """Valid JSON objects per kind (mutated into garbage); audio is handled apart."""
    return {
        "hello": [
            {
                "v": 1,
                "device": device,
                "roles": ["mic", "speaker"],
                "fw": "1.0",
                "audio_in": {"rate": 16000, "width": 2, "channels": 1},
                "caps": {"barge_in": False},
            },
            {"device": device, "roles": ["sensor"], "user": "ann"},
        ],
        "presence": [{"v": 1, "online": True}, {"online": False}],
        "heartbeat": [{"v": 1, "seq": 3, "uptime_s": 12.5, "rssi": -60}, {}],
        "text": [{"v": 1, "text": "hello", "user": "ann", "id": "t1"}],
        "event": [{"v": 1, "seq": 5, "sensor": "bp", "ts": 1.7e9, "data": {"sys": 1, "dia": 2}}],
        "ack": [{"v": 1, "ref": "4", "ok": True}],
        "error": [{"v": 1, "code": "malformed", "message": "x"}],
        "human": [{"Topic": "human", "Data": {"Key": "text"}}],
        "command": [{"v": 1, "name": "stop"}],
    }


#: Valid JSON that is hostile: lone surrogates (JSON escapes no UTF-8 encoder can write),
#: an integer too large for a float, another device's id, ids that are no ids.
HOSTILE = [
    "\udfff",
    "a\ud800b",
    {"\udc00": 1},
    ["ok", "\udfff"],
    10**400,
    VALID_DEVICE,
    "fuzz-0",
    "a b",
    "a/b",
    "x" * 300,
    "ann\n",
]
WEIRD = [
    *HOSTILE,
    None,
    True,
    -1,
    0,
    2**64,
    -(2**70),
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x" * 5000,
    "\u0000\ud7ff\uffff",
    [],
    {},
    [1, "a", None],
    {"a": {"b": {}}},
    "💥" * 50,
]


class Fuzzer:
    def __init__(self, rng: random.Random, device: str) -> None:
        self.rng = rng
        self.device = device
        self.seeds = seeds(device)

    def frame(self) -> tuple[str, bytes]:
        rng = self.rng
        roll = rng.random()
        kind = rng.choice(UP_KINDS) if roll < 0.95 else rng.choice(OTHER_KINDS)
        if roll < 0.1:
            return kind, rng.randbytes(rng.randrange(0, 300))
        if kind == "audio":
            return kind, self.audio()
        base = rng.choice(self.seeds.get(kind) or self.seeds["text"])
        roll = rng.random()
        if roll < 0.4:
            return kind, self.mutate_bytes(json.dumps(base).encode())
        if roll < 0.85:
            return kind, self.mutate_json(base)
        if roll < 0.9:
            depth = rng.randrange(100, 40000)
            return kind, b"[" * depth + b"]" * depth
        if roll < 0.92:
            return kind, b'{"text": "' + b"a" * rng.randrange(60000, 70000) + b'"}'
        if roll < 0.93:  # an integer of over 4,300 digits: json.dumps cannot even write one
            key = rng.choice(("seq", "ts", "uptime_s", "rssi", "v"))
            return kind, b'{"%s": 1%s}' % (key.encode(), b"0" * rng.randrange(300, 5000))
        return kind, json.dumps(base).encode()  # valid (or wrong kind for the seed)

    def audio(self) -> bytes:
        rng = self.rng
        n = rng.randrange(0, 1100) * 2
        chunk = AudioChunk(
            rng.randrange(65536),
            rng.randrange(2**32),
            rng.choice((8000, 16000)),
            rng.randbytes(n),
            start=rng.random() < 0.1,
            end=rng.random() < 0.1,
        )
        data = chunk.encode()
        roll = rng.random()
        if roll < 0.5:
            return self.mutate_bytes(data[:64]) + data[64:]
        if roll < 0.6:
            return data + rng.randbytes(rng.randrange(16000, 17000))
        return data

    def mutate_bytes(self, data: bytes) -> bytes:
        rng = self.rng
        buf = bytearray(data)
        for _ in range(rng.randrange(1, 6)):
            op = rng.randrange(5)
            pos = rng.randrange(len(buf) + 1)
            if op == 0 and buf:
                buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
            elif op == 1:
                del buf[pos : pos + rng.randrange(1, 20)]
            elif op == 2:
                buf[pos:pos] = rng.randbytes(rng.randrange(1, 20))
            elif op == 3:
                buf = buf[:pos]
            else:
                buf[pos:pos] = buf[: rng.randrange(0, 64)]
        return bytes(buf)

    def mutate_json(self, base: Any) -> bytes:
        rng = self.rng
        obj = json.loads(json.dumps(base))
        for _ in range(rng.randrange(1, 4)):
            keys = [*obj, "v", "device", "seq", "text", "roles", "data", "zzz"]
            key = rng.choice(keys)
            roll = rng.random()
            if roll < 0.2 and key in obj:
                del obj[key]
            elif roll < 0.3:
                obj[key] = rng.choice((1, 2, "1"))  # versions
            else:
                obj[key] = rng.choice(WEIRD)
        if rng.random() < 0.05:
            obj = rng.choice(WEIRD)
        return json.dumps(obj).encode()


async def fuzz_device(
    daemon: DaemonProcess, device: str, frames: int, seed: int, counts: Counter, rate: float
) -> None:
    fuzzer = Fuzzer(random.Random(seed), device)
    async with daemon.mqtt_client(device, timeout=30, max_queued_outgoing_messages=0) as client:
        await client.subscribe(TOPICS.all_down(device), qos=0)

        async def read() -> None:
            async for message in client.messages:
                counts["down_" + message.topic.value.rsplit("/", 1)[1]] += 1

        reader = asyncio.create_task(read())
        begun = time.monotonic()
        for i in range(frames):
            kind, payload = fuzzer.frame()
            counts[f"sent_{kind if kind in UP_KINDS else 'other'}"] += 1
            if "/" in kind or "+" in kind or "#" in kind:
                kind = "bad"
            await client.publish(TOPICS.up(device, kind or "empty"), payload, qos=0)
            if i % 50 == 0:  # paced, in bursts of 50: over ~1.5k/s mosquitto drops QoS 0
                await asyncio.sleep(max(0.0, begun + i / rate - time.monotonic()))
        await asyncio.sleep(2)  # the last error frames
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)


async def valid_sensor(
    daemon: DaemonProcess, events: int, stop: asyncio.Event, within_s: float
) -> dict:
    """Publishes ``events`` events spread over the fuzz, then resends the unacked."""
    acked: set[int] = set()
    sends = 0
    async with daemon.mqtt_client(VALID_DEVICE, timeout=30) as client:
        await client.subscribe(TOPICS.down(VALID_DEVICE, "ack"), qos=1)

        async def read() -> None:
            async for message in client.messages:
                acked.add(int(decode("ack", bytes(message.payload)).ref))  # type: ignore[arg-type]

        reader = asyncio.create_task(read())

        async def send(seq: int) -> None:
            nonlocal sends
            sends += 1
            event = SensorEvent(seq=seq, sensor="motion", ts=time.time(), data={"n": seq})
            await client.publish(TOPICS.up(VALID_DEVICE, "event"), encode(event), qos=1)

        for seq in range(events):
            await send(seq)
            if not stop.is_set():
                await asyncio.sleep(0.01)
        await stop.wait()
        deadline = time.monotonic() + within_s
        rounds = 0
        while len(acked) < events and time.monotonic() < deadline:
            await asyncio.sleep(1.0)
            rounds += 1
            for seq in sorted(set(range(events)) - acked):
                await send(seq)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    return {
        "valid_events": events,
        "valid_sends": sends,
        "valid_acked": len(acked),
        "resend_rounds": rounds,
    }


async def run(
    daemon: DaemonProcess, frames: int, seed: int, events: int = 300, rate: float = 1500
) -> dict:
    counts: Counter = Counter()
    stop = asyncio.Event()
    started = time.monotonic()
    sensor = asyncio.create_task(valid_sensor(daemon, events, stop, 60))
    per = frames // 4
    await asyncio.wait_for(
        asyncio.gather(
            *(
                fuzz_device(daemon, f"fuzz-{i}", per, seed * 10 + i, counts, rate / 4)
                for i in range(4)
            )
        ),
        600,
    )
    stop.set()
    valid = await asyncio.wait_for(sensor, 120)
    elapsed = time.monotonic() - started
    # Still serving: a fuzzing device's own valid event is acked.
    served = await still_served(daemon, "fuzz-0")
    status = json.loads(daemon.cli("status", "--json").stdout)
    conn = sqlite3.connect(daemon.state / "fayd.db", timeout=30)
    stored = conn.execute(
        "SELECT count(*), count(DISTINCT seq) FROM device_events WHERE device = ?",
        [VALID_DEVICE],
    ).fetchone()
    conn.close()
    log = daemon.log_text()
    sent = sum(v for k, v in counts.items() if k.startswith("sent_"))
    hub = next(c for c in status["components"] if c["name"] == "hub")
    return {
        "frames_sent": sent,
        "rate_per_s": rate,
        "seconds": round(elapsed, 1),
        "sent_by_kind": {k[5:]: v for k, v in sorted(counts.items()) if k.startswith("sent_")},
        "errors_received": counts["down_error"],
        "other_frames_received": sum(
            v for k, v in counts.items() if k.startswith("down_") and k != "down_error"
        ),
        "daemon_frames": status["frames"],
        "mqtt_received": status["broker"]["received"],
        **valid,
        "valid_stored": stored[0],
        "valid_stored_distinct": stored[1],
        "still_served": served,
        "daemon_up": daemon.proc is not None and daemon.proc.poll() is None,
        "hub_restarts": hub["restarts"],
        "log_tracebacks": log.count("Traceback"),
        "log_errors": log.count(" ERROR "),
    }


async def still_served(daemon: DaemonProcess, device: str, within_s: float = 60) -> bool:
    """A fuzzing device's own valid event is acked, resent once a second as the firmware
    does (the inbox may still be full of the fuzz backlog and drop it)."""
    async with daemon.mqtt_client(device, timeout=30) as client:
        await client.subscribe(TOPICS.down(device, "ack"), qos=1)
        event = SensorEvent(seq=987654321, sensor="check")

        async def acked() -> bool:
            async for message in client.messages:
                # An ack still queued from the fuzzing session may come first.
                if decode("ack", bytes(message.payload)).ref == "987654321":  # type: ignore[arg-type]
                    return True
            return False

        waiter = asyncio.create_task(acked())
        try:
            async with asyncio.timeout(within_s):
                while not waiter.done():
                    await client.publish(TOPICS.up(device, "event"), encode(event), qos=1)
                    await asyncio.wait([waiter], timeout=1.0)
                return waiter.result()
        except TimeoutError:
            return False
        finally:
            waiter.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=1500, help="garbage frames/s in total")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fayd-fuzz-") as tmp:
        daemon = DaemonProcess(Path(tmp) / "state").start()
        try:
            result = asyncio.run(run(daemon, args.frames, args.seed, rate=args.rate))
        finally:
            result_code = daemon.stop()
        result["daemon_exit"] = result_code
        print(json.dumps(result))


if __name__ == "__main__":
    main()
