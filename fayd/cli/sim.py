"""``fayd sim device``: hear fayd with no hardware."""

from __future__ import annotations

import argparse
import asyncio
import wave
from pathlib import Path

import aiomqtt
import numpy as np

from fayd.auth import mqtt_password
from fayd.cli.client import runtime
from fayd.cli.devices import ensure_key, reload_broker
from fayd.cli.failures import UsageError
from fayd.config import Config
from fayd.devices.simulator import SimDevice, frames_jsonl
from fayd.errors import FaydError
from fayd.speech.audio import read_wav, resample, write_wav

#: How to make a WAV fayd can read, for the error that says it could not.
MAKE_WAV = 'make one with: espeak-ng --stdout "Hello" > hello.wav (or sox IN -b 16 OUT.wav)'


def load_speech(path: str) -> np.ndarray:
    """The WAV's speech as 16 kHz float32 with a second of silence after it (the VAD hears
    the end of speech in it); a file that is missing or not PCM WAV is one clear error."""
    try:
        samples, rate = read_wav(path)
    except FileNotFoundError as exc:
        raise FaydError(f"no such file: {path}") from exc
    except (wave.Error, EOFError, ValueError) as exc:
        raise FaydError(
            f"{path} is not a PCM WAV file ({str(exc) or 'it ends too soon'}); {MAKE_WAV}"
        ) from exc
    if not len(samples):
        raise FaydError(f"{path} has no audio in it; {MAKE_WAV}")
    if rate != 16000:
        samples = resample(samples, rate, 16000)
    return np.concatenate([samples, np.zeros(16000, dtype=np.float32)])


async def run_sim(cfg: Config, args: argparse.Namespace, speech: np.ndarray | None) -> int:
    url = args.broker or runtime(cfg)["mqtt"]
    out = Path(args.out)
    secret, made = ensure_key(cfg, args.id)  # a simulated device is added like a real one
    if made:
        print(f"added {args.id} (fayd devices remove {args.id} forgets it); {reload_broker(cfg)}")
    password = mqtt_password(secret)
    # Leaving the block says the device is offline (as a real one's last will would).
    async with SimDevice(url, args.id, cfg.mqtt.prefix, password) as device:
        await device.hello()
        if speech is None:
            await device.say_text(args.text)
        else:
            print(f"speaking {(len(speech) - 16000) / 16000:.1f} s of {args.wav} as {args.id}")
            await device.speak(speech, realtime=args.realtime)
        reply = await device.collect_reply(args.timeout)
    (out / "frames.jsonl").write_text(frames_jsonl(reply), encoding="utf-8")
    print(f"fayd said: {reply.text}")
    if reply.pcm:
        write_wav(out / "reply.wav", bytes(reply.pcm), reply.rate)
        seconds = len(reply.pcm) / 2 / reply.rate
        print(f"saved {seconds:.1f} s of audio to {out / 'reply.wav'}")
    print(f"saved {len(reply.frames)} frames to {out / 'frames.jsonl'}")
    return 0


def sim_device(cfg: Config, args: argparse.Namespace) -> int:
    if not args.text and not args.wav:
        raise UsageError("sim device: give --wav FILE (or --text TEXT)")
    speech = None if args.text else load_speech(args.wav)  # before connecting to anything
    Path(args.out).mkdir(parents=True, exist_ok=True)
    try:
        return asyncio.run(run_sim(cfg, args, speech))
    except aiomqtt.MqttError as exc:  # no broker there, or it refused the device's login
        where = args.broker or "the daemon's broker"
        raise FaydError(f"MQTT with {where} failed: {exc}") from exc
    except TimeoutError as exc:
        raise FaydError(
            f"no complete reply within {args.timeout:g} s; is fayd running? (fayd status)"
        ) from exc
