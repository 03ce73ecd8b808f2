"""Soak: the daemon's memory (RSS) under a steady home load, for as long as asked (issue 28).

    .venv/bin/python benchmarks/soak.py [--minutes 30] [--rate 10] [--devices 3]

The real daemon (``fayd run`` with its embedded mosquitto, on a state folder of its own)
gets ``--rate`` sensor events a second **in total**, spread evenly over ``--devices``
protocol clients (aiomqtt, logged in as added devices: 3 devices at 10 events/s means
3.3 events/s each). Each client sends numbered events at QoS 1 and resends the unacked
as the firmware does (chaos.py). The devices are a motion sensor, a door and a bed sensor
in turn: the routine events a home sends all day. A text turn (``POST /api/say``) is made
every ``--turn-every`` seconds. The daemon's VmRSS (``/proc/PID/status``) is sampled every
``--sample-every`` seconds.

Prints one JSON object: ``events`` (sent), ``lost`` (sent, never stored), ``ack_ms_p99``
(first send → ack), ``rss_start_mb`` (first sample after start-up), ``rss_end_mb``,
``rss_slope_mb_per_hour`` (least squares over the samples after ``--warmup-minutes``; the
target is ≤ 5), the samples, and what the memory stream holds at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import httpx
import numpy as np

from fayd.auth import read_token
from fayd.protocol import SensorEvent, Topics, decode, encode
from fayd.testing.harness import DaemonProcess, free_port

TOPICS = Topics()
#: As firmware/fayd_fw/sensor.py (and chaos.py): unacked events sent again after RESEND_S,
#: oldest first, at most RESEND_PER_SCAN each RESEND_SCAN_S.
RESEND_S = 3.0
RESEND_PER_SCAN = 8
RESEND_SCAN_S = 0.25
TURN_TIMEOUT_S = 30.0
#: After the run, how long the devices may resend what is still unacked.
DRAIN_S = 60.0
#: The routine sensors, one per device in turn, and the data each event carries.
SENSORS = ("motion", "door", "bed")
SLOPE_TARGET_MB_PER_HOUR = 5.0


def event_data(sensor: str, seq: int) -> dict[str, Any]:
    if sensor == "door":
        return {"open": seq % 2 == 1, "name": "front"}
    if sensor == "bed":
        return {"occupied": seq % 2 == 1}
    return {}


@dataclass
class Log:
    sent: dict[str, set[int]] = field(default_factory=dict)
    ack_ms: list[float] = field(default_factory=list)
    turns: list[tuple[float, bool]] = field(default_factory=list)  # (seconds, answered)
    rss: list[tuple[float, float]] = field(default_factory=list)  # (s since start, MB)


def vm_rss_mb(pid: int) -> float | None:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def slope_per_hour(samples: list[tuple[float, float]], after_s: float) -> float | None:
    """Least-squares slope of RSS (MB) over time, in MB per hour, of the samples after
    ``after_s`` (None with fewer than 3)."""
    kept = [(t, mb) for t, mb in samples if t >= after_s]
    if len(kept) < 3:
        return None
    t, mb = np.array(kept).T
    return float(np.polyfit(t / 3600.0, mb, 1)[0])


class Soak:
    def __init__(self, root: Path, args: argparse.Namespace) -> None:
        self.root = root
        self.args = args
        self.state = root / "state"
        self.devices = [f"soak-{i}" for i in range(args.devices)]
        self.passwords: dict[str, str] = {}
        self.mqtt_port, self.api_port = free_port(), free_port()
        self.daemon = DaemonProcess(
            self.state,
            {"FAYD_MQTT_EMBEDDED_PORT": str(self.mqtt_port), "FAYD_API_PORT": str(self.api_port)},
        )
        self.daemon.log = root / "daemon.log"
        self.log = Log()
        self.stop = asyncio.Event()
        self.give_up = False

    # --- the devices (as chaos.py's, with each event's first send kept) ---------------

    async def device(self, name: str, sensor: str, rate: float) -> None:
        sent = self.log.sent.setdefault(name, set())
        unacked: dict[int, float] = {}  # seq → when last sent (0: never)
        first_sent: dict[int, float] = {}
        seq = 0
        started = time.monotonic()

        async def produce() -> None:
            nonlocal seq
            while not self.stop.is_set():
                seq += 1
                sent.add(seq)
                unacked[seq] = 0.0
                await asyncio.sleep(max(0.0, started + seq / rate - time.monotonic()))

        producer = asyncio.create_task(produce())
        try:
            while not (self.stop.is_set() and not unacked) and not self.give_up:
                with contextlib.suppress(aiomqtt.MqttError, OSError, TimeoutError):
                    await self.session(name, sensor, unacked, first_sent)
                await asyncio.sleep(0.5)
        finally:
            producer.cancel()

    async def session(
        self, name: str, sensor: str, unacked: dict[int, float], first_sent: dict[int, float]
    ) -> None:
        client = aiomqtt.Client(
            "127.0.0.1",
            self.mqtt_port,
            identifier=name,
            username=name,
            password=self.passwords[name],
            timeout=5,
        )
        async with client:
            await client.subscribe(TOPICS.down(name, "ack"), qos=1)
            hello = {"v": 1, "device": name, "roles": ["sensor"]}
            await client.publish(TOPICS.up(name, "hello"), json.dumps(hello).encode(), qos=1)
            for seq in unacked:
                unacked[seq] = 0.0  # a new session: all sent again

            async def read() -> None:
                async for message in client.messages:
                    ack = decode("ack", bytes(message.payload))
                    ref = int(ack.ref)  # type: ignore[attr-defined]
                    if unacked.pop(ref, None) is not None and ref in first_sent:
                        self.log.ack_ms.append((time.monotonic() - first_sent.pop(ref)) * 1000)

            reader = asyncio.create_task(read())
            try:
                while not (self.stop.is_set() and not unacked) and not self.give_up:
                    if reader.done():
                        reader.result()  # the link went: its error ends the session
                        return
                    now = time.monotonic()
                    due = [s for s, last in sorted(unacked.items()) if now - last >= RESEND_S]
                    for s in due[:RESEND_PER_SCAN]:
                        unacked[s] = now
                        first_sent.setdefault(s, now)
                        event = SensorEvent(
                            seq=s, sensor=sensor, ts=time.time(), data=event_data(sensor, s)
                        )
                        await client.publish(TOPICS.up(name, "event"), encode(event), qos=1)
                    await asyncio.sleep(RESEND_SCAN_S)
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    # --- turns and samples -------------------------------------------------------------

    async def turns(self) -> None:
        headers = {"Authorization": f"Bearer {read_token(self.state)}"}
        api = f"http://127.0.0.1:{self.api_port}/api/say"
        async with httpx.AsyncClient(timeout=TURN_TIMEOUT_S, headers=headers) as http:
            while not self.stop.is_set():
                began = time.monotonic()
                ok = False
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    done = await http.post(api, json={"text": "what time is it?"})
                    body = done.json() if done.status_code == 200 else {}
                    ok = bool(body.get("reply")) and "failed" not in body
                self.log.turns.append((time.monotonic() - began, ok))
                await asyncio.sleep(max(0.0, began + self.args.turn_every - time.monotonic()))

    async def sample(self, started: float) -> None:
        assert self.daemon.proc is not None
        while not self.stop.is_set():
            mb = vm_rss_mb(self.daemon.proc.pid)
            if mb is not None:
                self.log.rss.append((round(time.monotonic() - started, 1), round(mb, 1)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), self.args.sample_every)

    # --- the run -----------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        await asyncio.to_thread(self.daemon.start)
        for name in self.devices:
            login = await asyncio.to_thread(self.daemon.add_device, name)
            self.passwords[name] = login["mqtt_password"]
        started = time.monotonic()
        each = self.args.rate / len(self.devices)
        workers = [
            asyncio.create_task(self.device(name, SENSORS[i % len(SENSORS)], each))
            for i, name in enumerate(self.devices)
        ]
        side = [asyncio.create_task(self.turns()), asyncio.create_task(self.sample(started))]
        await asyncio.sleep(self.args.minutes * 60)
        assert self.daemon.proc is not None
        end_mb = vm_rss_mb(self.daemon.proc.pid)  # before the drain: the load's own figure
        if end_mb is not None:
            self.log.rss.append((round(time.monotonic() - started, 1), round(end_mb, 1)))
        self.stop.set()
        await asyncio.gather(*side)
        try:
            await asyncio.wait_for(asyncio.gather(*workers), DRAIN_S)
        except TimeoutError:
            self.give_up = True
            await asyncio.gather(*workers, return_exceptions=True)
        return self.result(time.monotonic() - started)

    def stored(self) -> tuple[dict[str, set[int]], dict[str, int]]:
        conn = sqlite3.connect(self.state / "fayd.db", timeout=30)
        try:
            query = "SELECT seq FROM device_events WHERE device = ?"
            seqs = {d: {s for (s,) in conn.execute(query, [d])} for d in self.devices}
            memory = {
                "memory_nodes": conn.execute("SELECT count(*) FROM memory_nodes").fetchone()[0],
                "events_not_yet_remembered": conn.execute(
                    "SELECT count(*) FROM device_events WHERE remembered = 0"
                ).fetchone()[0],
            }
        finally:
            conn.close()
        return seqs, memory

    def result(self, seconds: float) -> dict[str, Any]:
        stored, memory = self.stored()
        sent = sum(len(s) for s in self.log.sent.values())
        lost = sum(len(self.log.sent[d] - stored[d]) for d in self.devices)
        rss = self.log.rss
        warmup_s = self.args.warmup_minutes * 60
        slope = slope_per_hour(rss, warmup_s)
        acks = np.array(self.log.ack_ms) if self.log.ack_ms else np.zeros(1)
        turn_s = np.array([s for s, ok in self.log.turns if ok] or [0.0])
        return {
            "events": sent,
            "lost": lost,
            "ack_ms_p50": round(float(np.percentile(acks, 50)), 1),
            "ack_ms_p99": round(float(np.percentile(acks, 99)), 1),
            "rss_start_mb": rss[0][1] if rss else None,
            "rss_end_mb": rss[-1][1] if rss else None,
            "rss_slope_mb_per_hour": None if slope is None else round(slope, 2),
            "slope_after_minutes": self.args.warmup_minutes,
            "slope_target_met": slope is not None and slope <= SLOPE_TARGET_MB_PER_HOUR,
            "minutes": self.args.minutes,
            "rate_total_per_s": self.args.rate,
            "devices": len(self.devices),
            "sensors": [SENSORS[i % len(SENSORS)] for i in range(len(self.devices))],
            "turns": len(self.log.turns),
            "turns_answered": sum(ok for _, ok in self.log.turns),
            "turn_s_p50": round(float(np.percentile(turn_s, 50)), 2),
            **memory,
            "seconds": round(seconds, 1),
            "rss_samples": rss,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="load time (≥ 30 to report)")
    parser.add_argument("--rate", type=float, default=10.0, help="events a second, all devices")
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--turn-every", type=float, default=10.0, help="seconds between turns")
    parser.add_argument("--sample-every", type=float, default=30.0, help="seconds between RSS")
    parser.add_argument(
        "--warmup-minutes", type=float, default=5.0, help="samples left out of the slope"
    )
    parser.add_argument("--keep-log", type=Path, help="copy the daemon's log here")
    args = parser.parse_args()
    if args.minutes <= 0 or args.rate <= 0 or args.devices < 1:
        parser.error("--minutes and --rate must be positive, --devices at least 1")
    with tempfile.TemporaryDirectory(prefix="fayd-soak-") as tmp:
        soak = Soak(Path(tmp), args)
        try:
            result = asyncio.run(soak.run())
        finally:
            code = soak.daemon.stop()
            if args.keep_log and soak.daemon.log.exists():
                shutil.copyfile(soak.daemon.log, args.keep_log)
        result["daemon_exit"] = code
        result["log_tracebacks"] = soak.daemon.log_text().count("Traceback")  # before cleanup
    print(json.dumps(result))


if __name__ == "__main__":
    main()
