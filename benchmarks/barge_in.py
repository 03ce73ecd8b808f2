"""Barge-in: from the first sound of the user talking over fayd to the stop command.

fayd runs on its embedded defaults; a simulated device asks for a long story, and as soon as
the first reply audio arrives it speaks an interruption (Piper) in real time, as a
microphone would. Onset = when the frame holding the first loud sample leaves the device.

    .venv/bin/python benchmarks/barge_in.py [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import FRAME_SAMPLES, SimDevice


async def wait_for(device: SimDevice, match, within_s: float = 120.0):
    async with asyncio.timeout(within_s):
        while True:
            kind, frame, at = await device.received.get()
            if match(kind, frame):
                return at


async def run(runs: int) -> dict:
    files = resolve("tts").files
    tts = PiperTts(files["model"], files.get("config"))
    speech = resample(
        pcm16_to_float(b"".join(tts.synthesize("Stop, please. What time is it?"))),
        tts.sample_rate,
        16000,
    )
    onset = int(np.argmax(np.abs(speech) > 0.02))
    audio = np.concatenate([speech, np.zeros(16000, dtype=np.float32)])
    daemon = DaemonProcess(Path(tempfile.mkdtemp(prefix="fayd-barge-"))).start()
    delays = []
    try:
        async with daemon.sim("barge-1") as device:
            await device.hello()
            for i in range(runs):
                await device.say_text("Tell me a long story about a dragon and a village.")
                await wait_for(device, lambda k, f: k == "audio" and bool(f.pcm))
                started = time.monotonic()
                send = asyncio.create_task(device.speak(audio, realtime=True))
                stop_at = await wait_for(device, lambda k, f: k == "command" and f.name == "stop")
                # speak() sends frame k at started + k × 32 ms: the onset frame leaves then.
                onset_sent = started + (onset // FRAME_SAMPLES) * FRAME_SAMPLES / 16000
                delays.append((stop_at - onset_sent) * 1000)
                await send
                # Let the answer to the interruption finish before the next run.
                await wait_for(device, lambda k, f: k == "audio" and f.end)
                print(f"run {i}: stop {delays[-1]:.0f} ms after onset", file=sys.stderr)
    finally:
        daemon.stop()
    return {
        "runs": len(delays),
        "stop_ms_p50": round(float(np.percentile(delays, 50)), 1),
        "stop_ms_p90": round(float(np.percentile(delays, 90)), 1),
        "stop_ms_max": round(max(delays), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    print(json.dumps(asyncio.run(run(parser.parse_args().runs))))


if __name__ == "__main__":
    main()
