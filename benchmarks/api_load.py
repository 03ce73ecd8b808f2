"""The open doors under load: concurrent clients on the OpenAI endpoint, the avatar
WebSocket and the web page's live updates while a person talks to a device.

Starts fayd on its embedded defaults (private mosquitto, default models). First a simulated
device speaks ``--turns`` questions alone (Piper-generated speech, in real time, as a
microphone would); then the same questions again while ``--clients`` of each kind run:

- OpenAI clients post ``/v1/chat/completions`` one after another (a mix of questions a
  skill answers and ones the model does);
- avatar clients register on ``/ws`` as Fay's frontends do, type a line and wait for the
  reply's end frame, then type the next;
- web page clients hold the live-update stream open and read ``/api/status`` every 2 s,
  as the household page does.

    .venv/bin/python benchmarks/api_load.py [--turns 6] [--clients 2]

Prints one JSON object: ``api_ms_*`` are every API request's time to its whole answer (an
avatar turn: to its end frame); ``voice_*`` the end of speech → first audio frame, alone and
under load; ``rss_mb`` the daemon's peak resident memory (VmHWM).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import websockets

from fayd.auth import read_token
from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess

VOICE = [
    "What time is it now?",
    "Can you tell me a joke?",
    "Remind me to water the plants at six in the evening.",
    "I feel a little tired today.",
    "What day is it today?",
    "Good morning, how are you?",
]
TYPED = [
    "What's the date today?",
    "How are you today?",
    "What time is it?",
    "Tell me something nice.",
]
#: The web page's live updates (fayd.web): a Server-Sent Events stream.
LIVE_PATH = "/api/web/events"
PASSWORD = "benchmark household password"


@dataclass
class Load:
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    api_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    live_events: int = 0

    def timed(self, started: float) -> None:
        self.api_ms.append((time.monotonic() - started) * 1000)


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


async def openai_client(base: str, token: str, load: Load, n: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=180) as http:
        i = n
        while not load.stop.is_set():
            body = {
                "model": "fayd",
                "user": f"bench{n}",
                "messages": [{"role": "user", "content": TYPED[i % len(TYPED)]}],
            }
            started = time.monotonic()
            try:
                r = await http.post("/v1/chat/completions", json=body)
                if r.status_code != 200:
                    load.errors.append(f"openai {r.status_code}: {r.text[:120]}")
                else:
                    load.timed(started)
            except httpx.HTTPError as exc:
                load.errors.append(f"openai: {exc!r}")
            i += 1


async def avatar_client(ws_url: str, load: Load, n: int) -> None:
    try:
        async with websockets.connect(ws_url, max_size=2**22) as ws:
            await ws.send(json.dumps({"Username": f"avatar{n}", "Output": True}))
            i = n
            while not load.stop.is_set():
                started = time.monotonic()
                await ws.send(json.dumps({"Text": TYPED[i % len(TYPED)]}))
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 180))
                    data = frame.get("Data") or {}
                    if data.get("Key") in ("audio", "text") and data.get("IsEnd") == 1:
                        break
                load.timed(started)
                i += 1
    except (OSError, websockets.WebSocketException, TimeoutError) as exc:
        load.errors.append(f"avatar: {exc!r}")


async def web_client(base: str, load: Load) -> None:
    """A logged-in page: the session cookie, no token."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        done = await http.post("/login", json={"password": PASSWORD})
        if done.status_code != 200:
            load.errors.append(f"login {done.status_code}: {done.text[:120]}")
            return

        async def live() -> None:
            try:
                async with http.stream("GET", LIVE_PATH, timeout=None) as stream:
                    if stream.status_code != 200:
                        load.errors.append(f"live {stream.status_code}")
                        return
                    async for line in stream.aiter_lines():
                        if line.startswith("data:"):
                            load.live_events += 1
            except httpx.HTTPError as exc:
                load.errors.append(f"live: {exc!r}")

        feed = asyncio.create_task(live())
        try:
            while not load.stop.is_set():
                started = time.monotonic()
                try:
                    r = await http.get("/api/status")
                    if r.status_code == 200:
                        load.timed(started)
                    else:
                        load.errors.append(f"status {r.status_code}")
                except httpx.HTTPError as exc:
                    load.errors.append(f"status: {exc!r}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(load.stop.wait(), 2.0)
        finally:
            feed.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feed


async def voice_turns(device, spoken: list[np.ndarray]) -> list[float]:
    """End of speech → first audio frame of each turn, ms."""
    measured = []
    for i, speech in enumerate(spoken):
        lead = np.zeros(8000, dtype=np.float32)
        tail = np.zeros(24000, dtype=np.float32)
        started = time.monotonic()
        send = asyncio.create_task(device.speak(np.concatenate([lead, speech, tail]), True))
        reply = await device.collect_reply(180)
        await send
        if reply.first_audio_at is None:
            print(f"voice {i}: no audio", file=sys.stderr)
            continue
        eos = started + (len(lead) + len(speech)) / 16000
        measured.append((reply.first_audio_at - eos) * 1000)
        print(f"voice {i}: {measured[-1]:.0f} ms {reply.text[:50]!r}", file=sys.stderr)
        await asyncio.sleep(1.0)
    return measured


def set_password(daemon: DaemonProcess) -> None:
    """``fayd web password``, the password on stdin (not a terminal)."""
    subprocess.run(
        [sys.executable, "-m", "fayd", "web", "password"],
        env=daemon.env,
        input=PASSWORD + "\n",
        capture_output=True,
        check=True,
        text=True,
        timeout=60,
    )


def peak_rss_mb(pid: int) -> float | None:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


async def run(turns: int, clients: int) -> dict:
    files = resolve("tts").files
    tts = PiperTts(files["model"], files.get("config"))
    spoken = [
        resample(pcm16_to_float(b"".join(tts.synthesize(t))), tts.sample_rate, 16000)
        for t in (VOICE * turns)[:turns]
    ]
    state = Path(tempfile.mkdtemp(prefix="fayd-bench-"))
    daemon = DaemonProcess(state).start()
    try:
        base = daemon.runtime["api"]
        token = read_token(state)
        await asyncio.to_thread(set_password, daemon)
        ws_url = base.replace("http://", "ws://") + f"/ws?token={token}"
        async with daemon.sim("bench-1") as device:
            await device.hello()
            alone = await voice_turns(device, spoken)
            load = Load()
            tasks = [
                *(asyncio.create_task(openai_client(base, token, load, n)) for n in range(clients)),
                *(asyncio.create_task(avatar_client(ws_url, load, n)) for n in range(clients)),
                *(asyncio.create_task(web_client(base, load)) for _ in range(clients)),
            ]
            await asyncio.sleep(3.0)  # the clients connected and busy
            loaded = await voice_turns(device, spoken)
            load.stop.set()
            await asyncio.wait(tasks, timeout=240)
            for task in tasks:
                task.cancel()
        rss = peak_rss_mb(daemon.proc.pid) if daemon.proc else None
    finally:
        daemon.stop()
    alone_p50, loaded_p50 = pct(alone, 50), pct(loaded, 50)
    return {
        "clients": clients * 3,
        "requests": len(load.api_ms),
        "errors": len(load.errors),
        "error_samples": load.errors[:5],
        "api_ms_p50": pct(load.api_ms, 50),
        "api_ms_p99": pct(load.api_ms, 99),
        "live_events": load.live_events,
        "voice_turns": len(loaded),
        "voice_eos_to_first_audio_ms_p50_alone": alone_p50,
        "voice_eos_to_first_audio_ms_p50": loaded_p50,
        "voice_ratio_loaded_to_alone": (
            round(loaded_p50 / alone_p50, 3) if alone_p50 and loaded_p50 else None
        ),
        "rss_mb": rss,
        "daemon_log_tracebacks": daemon.log_text().count("Traceback"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--clients", type=int, default=2, help="of each kind")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.turns, args.clients))))


if __name__ == "__main__":
    main()
