"""``fayd sim device``: hear fayd with no hardware."""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import time
import wave
from pathlib import Path

import aiomqtt
import numpy as np

from fayd.auth import mqtt_password
from fayd.cli.client import runtime
from fayd.cli.devices import ensure_key, reload_broker
from fayd.cli.failures import UsageError
from fayd.config import Config
from fayd.errors import FaydError
from fayd.protocol import Ack, SensorEvent, encode
from fayd.speech.audio import read_wav, resample, write_wav
from fayd.testing.simulator import SimDevice, frames_jsonl

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


def parse_event(said: str) -> SensorEvent:
    """``panic`` or ``bp,sys=171,dia=99`` or ``door,open=true``: a sensor and its data
    (numbers and true/false as such, the rest as text)."""
    sensor, *pairs = [part.strip() for part in said.split(",")]
    data: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--event: {pair!r} is not key=value (e.g. bp,sys=171,dia=99)")
        try:
            data[key] = json.loads(raw)
        except ValueError:
            data[key] = raw
    if not sensor:
        raise UsageError("--event: name the sensor first (e.g. panic, or bp,sys=171,dia=99)")
    # A fresh epoch: each run is a new series, never taken for a replay of the last one.
    return SensorEvent(1, sensor, time.time(), data, epoch=secrets.token_hex(4))


async def send_event(device: SimDevice, event: SensorEvent) -> str:
    """Publish ``event`` as a sensor device would, and wait for fayd's acknowledgement."""
    await device.publish("event", encode(event))
    while True:
        kind, frame, _ = await device.received.get()
        if kind == "ack" and isinstance(frame, Ack) and frame.ref == str(event.seq):
            return "stored" if frame.ok and not frame.detail else (frame.detail or "refused")
        if kind == "error":
            return f"refused: {getattr(frame, 'message', frame)}"


async def run_sim(cfg: Config, args: argparse.Namespace, speech: np.ndarray | None) -> int:
    url = args.broker or runtime(cfg)["mqtt"]
    out = Path(args.out)
    secret, made = ensure_key(cfg, args.id)  # a simulated device is added like a real one
    if made:
        print(f"added {args.id} (fayd devices remove {args.id} forgets it); {reload_broker(cfg)}")
    password = mqtt_password(secret)
    # Leaving the block says the device is offline (as a real one's last will would).
    async with SimDevice(url, args.id, cfg.mqtt.prefix, password) as device:
        if args.event:
            await device.hello(roles=("sensor",), user=args.user)
            event = parse_event(args.event)
            async with asyncio.timeout(args.timeout):
                said = await send_event(device, event)
            print(f"{args.id}: {event.sensor} {json.dumps(event.data)}: {said}")
            return 0 if said == "stored" else 1
        await device.hello(user=args.user)
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
    if not args.text and not args.wav and not args.event:
        raise UsageError("sim device: give --wav FILE (or --text TEXT, or --event SENSOR)")
    if args.event:
        parse_event(args.event)  # a typo is said before connecting to anything
    speech = None if args.text or args.event else load_speech(args.wav)
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
