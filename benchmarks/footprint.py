"""Footprint: RSS with the default models loaded, idle CPU, and event-loop lag during turns.

    .venv/bin/python benchmarks/footprint.py [--idle-s 60] [--turns 5]

Starts fayd on its embedded defaults, measures its resident memory once ready, its CPU use
while idle (the embedded mosquitto counted separately), then the event loop's lag (how late
a 50 ms sleep wakes) while a simulated device holds voice turns. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess

TICK = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, key: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


async def turns(daemon: DaemonProcess, count: int) -> None:
    files = resolve("tts").files
    tts = PiperTts(files["model"], files.get("config"))
    async with daemon.sim("foot-1") as device:
        await device.hello()
        for text in ["What is the weather like today?", "Tell me about your day."] * count:
            speech = resample(
                pcm16_to_float(b"".join(tts.synthesize(text))), tts.sample_rate, 16000
            )
            pad = np.zeros(16000, dtype=np.float32)
            await device.speak(np.concatenate([pad, speech, pad]), realtime=True)
            await device.collect_reply(120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=60)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    # The 1-minute load average at the start and the end: on a shared machine, other
    # people's work shows up as idle CPU and loop lag; compare runs at similar loads.
    load = [round(os.getloadavg()[0], 2)]
    daemon = DaemonProcess(Path(tempfile.mkdtemp(prefix="fayd-foot-"))).start()
    assert daemon.proc is not None
    pid = daemon.proc.pid
    try:
        time.sleep(2)  # let start-up settle
        rss = rss_mb(pid)
        broker = children(pid)
        before = cpu_s(pid), sum(cpu_s(c) for c in broker)
        time.sleep(args.idle_s)
        after = cpu_s(pid), sum(cpu_s(c) for c in broker)
        idle = (after[0] - before[0]) / args.idle_s * 100
        broker_idle = (after[1] - before[1]) / args.idle_s * 100
        since = time.time()
        asyncio.run(turns(daemon, args.turns))
        status = daemon.api("GET", "/api/status", params={"lag_since": since}, timeout=10).json()
        result = {
            "rss_mb": rss,
            "rss_peak_mb": rss_mb(pid, "VmHWM"),
            "broker_rss_mb": sum(rss_mb(c) for c in broker),
            "idle_cpu_pct": round(idle, 2),
            "broker_idle_cpu_pct": round(broker_idle, 2),
            "loop_lag_p99_ms": status["loop_lag"].get("p99_ms"),
            "loop_lag_max_ms": status["loop_lag"].get("max_ms"),
            "turns": args.turns * 2,
            "load_avg_1m": [*load, round(os.getloadavg()[0], 2)],
        }
    finally:
        daemon.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
