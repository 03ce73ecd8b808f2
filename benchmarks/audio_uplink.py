"""Audio uplink: several simulated microphones stream at once, in real time, into the real
daemon (embedded mosquitto, QoS 0 audio frames of 512 samples = 32 ms at 16 kHz).

    .venv/bin/python benchmarks/audio_uplink.py [--devices 4] [--seconds 20] [--speech]

``frames_dropped`` = frames sent − frames the daemon's VoiceInput saw (its per-device
``audio.received`` counter in ``fayd status --json``); ``frames_lost_by_seq`` is what the
daemon itself noticed from sequence gaps. By default the devices stream quiet noise (the VAD
hears no speech, so no turn runs); ``--speech`` streams spoken sentences with pauses, so
the daemon also runs voice turns (ASR, LLM) while the audio flows. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import numpy as np

from fayd.testing.harness import DaemonProcess, run_against_daemon
from fayd.testing.simulator import FRAME_SAMPLES, SimDevice

RATE = 16000


def noise(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(int(RATE * seconds)) * 0.003).astype(np.float32)


def speech(seconds: float) -> np.ndarray:
    from fayd.models import resolve
    from fayd.speech.audio import pcm16_to_float, resample
    from fayd.speech.tts import PiperTts

    files = resolve("tts").files
    tts = PiperTts(files["model"], files["config"], threads=1)
    said = pcm16_to_float(b"".join(tts.synthesize("Please turn on the kitchen light.")))
    said = resample(said, tts.sample_rate, RATE)
    pause = np.zeros(RATE * 3, dtype=np.float32)
    one = np.concatenate([said, pause])
    return np.tile(one, int(seconds * RATE / len(one)) + 1)[: int(seconds * RATE)]


async def stream(sim: SimDevice, samples: np.ndarray) -> int:
    async with sim:
        await sim.hello(roles=("mic",))
        await sim.speak(samples, realtime=True)
        await asyncio.sleep(0.5)
    return -(-len(samples) // FRAME_SAMPLES)


def audio_counters(daemon: DaemonProcess, devices: list[str]) -> dict[str, dict]:
    status = json.loads(daemon.cli("status", "--json").stdout)
    rows = {d["id"]: d for d in status["devices"]}
    zero = {"received": 0, "lost": 0}
    return {d: rows.get(d, {}).get("audio", zero) for d in devices} | {
        "_frames": status["frames"]  # type: ignore[dict-item]
    }


async def measure(daemon: DaemonProcess, args: argparse.Namespace) -> dict[str, object]:
    devices = [f"mic-{i}" for i in range(args.devices)]
    sims = [daemon.sim(d) for d in devices]
    clips = [
        speech(args.seconds) if args.speech else noise(args.seconds, i) for i in range(len(devices))
    ]
    started = time.monotonic()
    sent = await asyncio.gather(*(stream(s, c) for s, c in zip(sims, clips, strict=True)))
    wall = time.monotonic() - started
    deadline = time.monotonic() + 30
    while True:  # until the daemon has handled what arrived (bounded)
        counters = audio_counters(daemon, devices)
        received = sum(counters[d]["received"] for d in devices)
        if received >= sum(sent) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    frames = counters.pop("_frames")
    return {
        "devices": args.devices,
        "seconds_each": args.seconds,
        "speech": args.speech,
        "frames_sent": sum(sent),
        "frames_received": received,
        "frames_dropped": sum(sent) - received,
        "frames_lost_by_seq": sum(counters[d]["lost"] for d in devices),
        "inbox_dropped": frames["inbox_dropped"],
        "stream_wall_s": round(wall, 2),
        "per_device": counters,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--speech", action="store_true", help="speech with pauses: turns run")
    args = parser.parse_args()
    print(json.dumps(run_against_daemon(lambda daemon: measure(daemon, args))))


if __name__ == "__main__":
    main()
