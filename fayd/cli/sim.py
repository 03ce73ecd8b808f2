"""``fayd sim device``: hear fayd with no hardware."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np

from fayd.auth import mqtt_password
from fayd.cli.client import runtime
from fayd.cli.devices import ensure_key, reload_broker
from fayd.config import Config
from fayd.devices.simulator import SimDevice, frames_jsonl
from fayd.speech.audio import read_wav, resample, write_wav


async def run_sim(cfg: Config, args) -> int:
    url = args.broker or runtime(cfg)["mqtt"]
    out = Path(args.out)
    secret, made = ensure_key(cfg, args.id)  # a simulated device is added like a real one
    if made:
        print(f"added {args.id} (fayd devices remove {args.id} forgets it); {reload_broker(cfg)}")
    password = mqtt_password(secret)
    async with SimDevice(url, args.id, cfg.mqtt.prefix, password) as device:
        await device.hello()
        if args.text:
            await device.say_text(args.text)
        else:
            samples, rate = read_wav(args.wav)
            if rate != 16000:
                samples = resample(samples, rate, 16000)
            # A second of silence after the speech lets the VAD hear the end of it.
            padded = np.concatenate([samples, np.zeros(16000, dtype=np.float32)])
            print(f"speaking {len(samples) / 16000:.1f} s of {args.wav} as {args.id}")
            await device.speak(padded, realtime=args.realtime)
        reply = await device.collect_reply(args.timeout)
    (out / "frames.jsonl").write_text(frames_jsonl(reply), encoding="utf-8")
    print(f"fayd said: {reply.text}")
    if reply.pcm:
        write_wav(out / "reply.wav", bytes(reply.pcm), reply.rate)
        seconds = len(reply.pcm) / 2 / reply.rate
        print(f"saved {seconds:.1f} s of audio to {out / 'reply.wav'}")
    print(f"saved {len(reply.frames)} frames to {out / 'frames.jsonl'}")
    return 0


def sim_device(cfg: Config, args) -> int:
    if not args.text and not args.wav:
        print("fayd sim device: give --wav FILE (or --text TEXT)", file=sys.stderr)
        return 2
    Path(args.out).mkdir(parents=True, exist_ok=True)
    try:
        return asyncio.run(run_sim(cfg, args))
    except TimeoutError:
        print(
            "no complete reply within the timeout; is fayd running? (fayd status)", file=sys.stderr
        )
        return 1
