"""Sensor events end to end: device publish → fayd's ack (sent after the commit), through
the real daemon and its embedded mosquitto (with the ACL), into SQLite.

    .venv/bin/python benchmarks/sensor_events.py [--devices 4] [--events 10000] [--rate 1000]

Two phases, each with fresh sequence numbers, on ``--devices`` simulated sensors (one MQTT
client each, QoS 1, client id = device id):

- **flood**: every device publishes its share of ``--events`` as fast as it can;
  ``events_per_s`` = events stored / (last ack − first publish).
- **paced**: ``--rate`` events/s in total for ``--seconds``; ``p50_ms``/``p99_ms`` are
  publish → ack (the ack leaves fayd only after the event's transaction committed).

Then every device replays its first 10% (as after a reconnect). ``lost`` = events sent but
not in the database, ``duplicates`` = rows beyond one per (device, seq). The memory
observations are written behind, in the background; ``memory_nodes`` counts those there
when the run ends. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import time

import aiomqtt

from fayd.protocol import SensorEvent, Topics, decode, encode
from fayd.testing.harness import DaemonProcess, run_against_daemon
from fayd.transport.mqtt import no_delay

TOPICS = Topics()


class Sensor:
    """One simulated sensor: publishes events and timestamps the acks."""

    def __init__(self, daemon: DaemonProcess, device: str) -> None:
        self.daemon = daemon
        self.device = device
        self.sent: dict[int, float] = {}
        self.acked: dict[int, float] = {}
        self.duplicate_acks = 0
        self.all_acked = asyncio.Event()
        self.expect = 0

    async def run(self, ready: asyncio.Event, work: asyncio.Queue) -> None:
        async with self.daemon.mqtt_client(
            self.device, timeout=30, max_inflight_messages=200, max_queued_outgoing_messages=0
        ) as client:
            no_delay(client)  # measure fayd, not Nagle on this side of the socket
            await client.subscribe(TOPICS.down(self.device, "ack"), qos=1)
            reader = asyncio.create_task(self._read(client))
            ready.set()
            try:
                while (job := await work.get()) is not None:
                    await job(client)
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            ack = decode("ack", bytes(message.payload))  # type: ignore[arg-type]
            now = time.perf_counter()
            if ack.detail == "duplicate":
                self.duplicate_acks += 1
            else:
                self.acked.setdefault(int(ack.ref), now)
            if len(self.acked) + self.duplicate_acks >= self.expect:
                self.all_acked.set()

    async def publish(self, client: aiomqtt.Client, seq: int) -> None:
        payload = encode(
            SensorEvent(
                seq=seq, sensor="bp", ts=time.time(), data={"sys": 120 + seq % 40, "dia": 80}
            )
        )
        self.sent.setdefault(seq, time.perf_counter())
        await client.publish(TOPICS.up(self.device, "event"), payload, qos=1)


async def flood(sensors: list[Sensor], queues: list[asyncio.Queue], per: int, start: int) -> float:
    begun = time.perf_counter()
    for sensor, queue in zip(sensors, queues, strict=True):
        sensor.expect += per
        sensor.all_acked.clear()

        async def job(client, s=sensor):
            await asyncio.gather(*(s.publish(client, start + i) for i in range(per)))

        await queue.put(job)
    await asyncio.wait_for(asyncio.gather(*(s.all_acked.wait() for s in sensors)), 300)
    last = max(max(s.acked[start + i] for i in range(per)) for s in sensors)
    return last - begun


async def paced(
    sensors: list[Sensor], queues, rate: float, seconds: float, start: int
) -> list[float]:
    per = int(rate * seconds / len(sensors))
    interval = len(sensors) / rate
    for sensor, queue in zip(sensors, queues, strict=True):
        sensor.expect += per
        sensor.all_acked.clear()

        async def job(client, s=sensor):
            t0, tasks = time.perf_counter(), []
            for i in range(per):
                delay = t0 + i * interval - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(s.publish(client, start + i)))
            await asyncio.gather(*tasks)

        await queue.put(job)
    await asyncio.wait_for(asyncio.gather(*(s.all_acked.wait() for s in sensors)), 300)
    return [(s.acked[start + i] - s.sent[start + i]) * 1000 for s in sensors for i in range(per)]


async def replay(sensors: list[Sensor], queues, count: int) -> None:
    for sensor, queue in zip(sensors, queues, strict=True):
        sensor.expect += count
        sensor.all_acked.clear()

        async def job(client, s=sensor):
            await asyncio.gather(*(s.publish(client, i) for i in range(count)))

        await queue.put(job)
    await asyncio.wait_for(asyncio.gather(*(s.all_acked.wait() for s in sensors)), 300)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(daemon: DaemonProcess, args: argparse.Namespace) -> dict[str, object]:
    sensors = [Sensor(daemon, f"bench-sensor-{i}") for i in range(args.devices)]
    queues: list[asyncio.Queue] = [asyncio.Queue() for _ in sensors]
    readies = [asyncio.Event() for _ in sensors]
    runners = [
        asyncio.create_task(s.run(r, q)) for s, r, q in zip(sensors, readies, queues, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)
    per = args.events // args.devices
    flood_s = await flood(sensors, queues, per, 0)
    latencies = await paced(sensors, queues, args.rate, args.seconds, per)
    await replay(sensors, queues, max(1, per // 10))
    for q in queues:
        await q.put(None)
    await asyncio.wait_for(asyncio.gather(*runners), 30)

    conn = sqlite3.connect(daemon.state / "fayd.db", timeout=30)
    rows = dict(
        conn.execute(
            "SELECT device, count(*) FROM device_events WHERE device LIKE 'bench-sensor-%'"
            " GROUP BY device"
        ).fetchall()
    )
    distinct = dict(
        conn.execute(
            "SELECT device, count(DISTINCT seq) FROM device_events"
            " WHERE device LIKE 'bench-sensor-%' GROUP BY device"
        ).fetchall()
    )
    memory_nodes = conn.execute(
        "SELECT count(*) FROM memory_tags WHERE tag LIKE 'source:bench-sensor-%'"
    ).fetchone()[0]
    conn.close()
    sent = sum(len(s.sent) for s in sensors)
    return {
        "devices": args.devices,
        "events_sent": sent,
        "events_per_s": round(per * args.devices / flood_s, 1),
        "paced_rate": args.rate,
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(max(latencies), 2),
        "lost": sent - sum(distinct.values()),
        "duplicates": sum(rows.values()) - sum(distinct.values()),
        "replays_acked_as_duplicate": sum(s.duplicate_acks for s in sensors),
        "memory_nodes": memory_nodes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--events", type=int, default=10000, help="flood phase, in total")
    parser.add_argument("--rate", type=float, default=1000, help="paced phase, events/s")
    parser.add_argument("--seconds", type=float, default=5, help="paced phase length")
    args = parser.parse_args()
    print(json.dumps(run_against_daemon(lambda daemon: measure(daemon, args))))


if __name__ == "__main__":
    main()
