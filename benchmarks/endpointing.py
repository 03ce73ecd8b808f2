"""When is the speaker done? Semantic endpointing against the fixed 700 ms hangover, on the
same utterances in one run (benchmarks/data/endpointing_set.py: 30 English sentences said
by Piper and by espeak-ng, some in one breath, some with a slow speaker's 300-900 ms pauses
mid-sentence; ``--zh`` adds 10 Chinese ones said by the Baker voice, heard with
``speech.asr_language = zh``).

    .venv/bin/python benchmarks/endpointing.py [--only semantic|fixed] [--zh] [--limit N]

Each mode starts fayd on its embedded defaults (``speech.endpointing``), and a simulated
device says every utterance in real time over MQTT, then listens 3 s past its end. Per
utterance: the end of speech is when its last speech sample left the device; a reply whose
first audio came before it **cut the speaker off**; two replies with audio are a **double
answer**. ``eos_to_first_audio_ms`` is end of speech → the first reply's first audio
(endpointing included), over the utterances not cut off; ``endpoint_wait_ms`` is the silence
fayd waited before ending each utterance (its turn's timings; the fixed mode's is its
hangover). Prints one JSON object: {mode: figures}, and ``verdicts`` (semantic: what ended
each turn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.data.endpointing_set import Utterance, build
from fayd.config import SpeechConfig
from fayd.models import resolve
from fayd.models.choices import assemble
from fayd.models.manifest import load_manifest
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess

LEAD_S = 0.5
LISTEN_S = 3.0  # after the end of speech: past the longest wait, and a reply's first audio


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


async def say_all(daemon: DaemonProcess, utterances: list[Utterance]) -> list[dict[str, Any]]:
    out = []
    async with daemon.sim("bench-ep") as device:
        await device.hello()
        for n, u in enumerate(utterances):
            while not device.received.empty():
                device.received.get_nowait()
            lead = np.zeros(int(LEAD_S * 16000), dtype=np.float32)
            tail = np.zeros(int(LISTEN_S * 16000), dtype=np.float32)
            started = time.monotonic()
            await device.speak(np.concatenate([lead, u.samples, tail]), realtime=True)
            eos = started + LEAD_S + u.samples.size / 16000
            frames = []
            # The reply may still be coming (a model turn): the next utterance waits until
            # one has closed and nothing more came for 1.5 s (else it would continue this
            # one, as a person talking on before the answer does).
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline:
                try:
                    async with asyncio.timeout(1.5):
                        frames.append(await device.received.get())
                except TimeoutError:
                    if _closed(frames):
                        break
            out.append(_score(u, eos, frames))
            r = out[-1]
            print(
                f"{n:2d} {u.voice:6s} replies={r['replies']} eos→audio={r['eos_to_audio_ms']}"
                f" {u.text[:50]!r} → {r['said'][:50]!r}",
                file=sys.stderr,
            )
            await asyncio.sleep(0.5)
    return out


def _closed(frames: list[tuple[str, Any, float]]) -> bool:
    """A reply came and every reply that started has closed."""
    started = sum(1 for k, f, _ in frames if k == "human" and f.key == "text" and f.is_first)
    ended = sum(1 for k, f, _ in frames if k == "human" and f.key == "text" and f.is_end)
    return ended >= max(1, started)


def _score(u: Utterance, eos: float, frames: list[tuple[str, Any, float]]) -> dict[str, Any]:
    first_audio: dict[int, float] = {}
    said = []
    for kind, frame, at in frames:
        if kind == "audio" and frame.pcm:
            first_audio.setdefault(frame.stream, at)
        if kind == "human" and frame.key == "text" and frame.text:
            said.append(frame.text)
    starts = sorted(first_audio.values())
    return {
        "voice": u.voice,
        "paused": u.paused,
        "replies": len(starts),
        "cut_off": bool(starts and starts[0] < eos),
        "eos_to_audio_ms": round((starts[0] - eos) * 1000, 1) if starts else None,
        "said": " ".join(said),
    }


def figures(results: list[dict[str, Any]], waits: list[float]) -> dict[str, Any]:
    n = len(results)
    answered = [r for r in results if r["replies"] and not r["cut_off"]]
    eos = [r["eos_to_audio_ms"] for r in answered]
    paused = [r for r in results if r["paused"]]
    return {
        "utterances": n,
        "paused_utterances": len(paused),
        "cut_off_rate": round(sum(r["cut_off"] for r in results) / n, 4),
        "cut_off_rate_paused": round(sum(r["cut_off"] for r in paused) / max(1, len(paused)), 4),
        "double_answer_rate": round(sum(r["replies"] > 1 for r in results) / n, 4),
        "unanswered": sum(1 for r in results if not r["replies"]),
        "eos_to_first_audio_ms_p50": pct(eos, 50),
        "eos_to_first_audio_ms_p90": pct(eos, 90),
        "eos_to_first_audio_ms_p50_one_breath": pct(
            [r["eos_to_audio_ms"] for r in answered if not r["paused"]], 50
        ),
        "endpoint_wait_ms_p50": pct(waits, 50),
    }


def turn_meta(state: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(state / "fayd.db")
    rows = conn.execute("SELECT meta FROM messages WHERE role = 'assistant' ORDER BY id")
    return [json.loads(meta) for (meta,) in rows]


def run_mode(mode: str, utterances: list[Utterance], env: dict[str, str]) -> dict[str, Any]:
    state = Path(tempfile.mkdtemp(prefix=f"fayd-ep-{mode}-")) / "state"
    daemon = DaemonProcess(state, {**env, "FAYD_SPEECH_ENDPOINTING": mode}).start()
    try:
        results = asyncio.run(say_all(daemon, utterances))
    finally:
        daemon.stop()
    metas = [m for m in turn_meta(state) if m.get("source") == "voice"]
    if mode == "fixed":
        waits = [float(SpeechConfig().vad_min_silence_ms)] * len(metas)
    else:
        waits = [
            m["timings"]["endpoint_wait_ms"]
            for m in metas
            if "endpoint_wait_ms" in m.get("timings", {})
        ]
    out = figures(results, waits)
    out["verdicts"] = dict(Counter(m.get("ended_by", "") for m in metas))
    out["per_utterance"] = [
        {k: r[k] for k in ("voice", "paused", "replies", "cut_off", "eos_to_audio_ms")}
        for r in results
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("semantic", "fixed"))
    parser.add_argument("--zh", action="store_true", help="the Chinese utterances (Baker voice)")
    parser.add_argument("--limit", type=int, default=0, help="the first N utterances only")
    parser.add_argument("--no-espeak", action="store_true")
    args = parser.parse_args()
    files = resolve("tts").files
    piper = PiperTts(files["model"], files.get("config"))
    env: dict[str, str] = {}
    if args.zh:
        from fayd.speech.tts_zh import BakerTts

        utterances = [u for u in build(piper, BakerTts(), espeak=False) if u.voice == "baker"]
        folder = Path(tempfile.mkdtemp(prefix="fayd-ep-base-"))
        env["FAYD_SPEECH_ASR_MODEL"] = str(
            assemble(load_manifest().choice("asr", "whisper-base"), folder)
        )
        env["FAYD_SPEECH_ASR_LANGUAGE"] = "zh"
    else:
        utterances = build(piper, None, espeak=not args.no_espeak)
    if args.limit:
        utterances = utterances[: args.limit]
    modes = [args.only] if args.only else ["fixed", "semantic"]
    report: dict[str, Any] = {mode: run_mode(mode, utterances, env) for mode in modes}
    report["asr_window_s"] = float(os.environ.get("FAYD_SPEECH_ASR_WINDOW_S", 30))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
