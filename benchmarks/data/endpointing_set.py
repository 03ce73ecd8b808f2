"""Utterances for benchmarks/endpointing.py: what an older person says to the box, some in
one breath, some with the pauses slow speakers make (``|`` marks where: at a clause
boundary, mid-clause, after a filler). Each is rendered as one sentence by a voice, and the
pauses (300-900 ms, from a seed) are cut into it at the quietest point near the mark, so
the words around a pause keep the sentence's own intonation (a separately spoken prefix
would fall like a finished sentence, which slow speakers' pauses do not).

English is said by Piper and by espeak-ng (its SSML ``<break>`` inserts the pause itself);
Chinese by the Baker voice (tts_zh) when installed."""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import wave
from dataclasses import dataclass

import numpy as np

from fayd.speech.audio import pcm16_to_float, resample

RATE = 16000

ENGLISH = [
    # in one breath
    "What time is it?",
    "What day is it today?",
    "Good morning, how are you?",
    "Set a timer for ten minutes.",
    "Did I take my medicine this morning?",
    "Thank you very much.",
    "Turn on the kitchen light, please.",
    "What are my reminders for today?",
    "I feel a bit dizzy.",
    "How many days until Christmas?",
    "Good night.",
    "Tell me a joke.",
    # paused at a clause boundary
    "Remind me to call my daughter | at five o'clock this afternoon.",
    "I went out to the garden this morning, | and I saw a robin.",
    "My knee hurts | when I go up the stairs.",
    "Remind me tomorrow morning | to water the plants.",
    "If it gets cold tonight, | remind me to close the window.",
    "I made some soup for lunch | but it was too salty.",
    # paused mid-clause
    "Set a timer for | fifteen minutes.",
    "What time is | my appointment with the doctor?",
    "Can you tell me | what day it is today?",
    "I would like to | hear a story about the sea.",
    "Please remind me to take | my blood pressure tablets at eight.",
    "My son is coming to | visit on Sunday.",
    "Tell me about | the kings and queens of England.",
    "I can't remember where I put | my reading glasses.",
    # after a filler or with two pauses
    "Um, | what time is it now?",
    "And then, | we went down to the seaside.",
    "Well, | I think | I'd like a cup of tea.",
    "So, | what's the date | today?",
]

CHINESE = [
    "现在几点了？",
    "今天星期几？",
    "谢谢你。",
    "我有点头晕。",
    "明天早上八点 | 提醒我吃药。",
    "我想 | 听一个故事。",
    "嗯 | 现在几点了？",
    "我今天去了公园， | 然后碰到了老朋友。",
    "十分钟以后 | 提醒我关火。",
    "我的眼镜 | 不知道放在哪里了。",
]


@dataclass(frozen=True)
class Utterance:
    text: str  # with | where the speaker pauses
    voice: str  # piper, espeak, baker
    samples: np.ndarray  # 16 kHz float32, pauses included
    pauses_ms: tuple[int, ...]
    #: Sample index where each pause starts (the speaker has said the words before it).
    pause_at: tuple[int, ...]

    @property
    def words(self) -> str:
        return " ".join(part.strip() for part in self.text.split("|"))

    @property
    def paused(self) -> bool:
        return bool(self.pauses_ms)


def pause_lengths(text: str, rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.randrange(300, 901, 50) for _ in range(text.count("|")))


def piper_utterance(tts, text: str, rng: random.Random, voice: str = "piper") -> Utterance:
    """Piper says the whole sentence; each pause goes at the quietest 10 ms near where the
    words before it end (found by saying them alone)."""
    pauses = pause_lengths(text, rng)
    whole = _say(tts, text.replace(" |", "").replace("|", ""))
    parts = [p.strip() for p in text.split("|")]
    cuts, said = [], ""
    for part in parts[:-1]:
        said = f"{said} {part}".strip()
        alone = _trim(_say(tts, said.rstrip(",，")))
        lo = min(int(0.35 * RATE), alone.size // 3)  # a short "Well," must not cut at 0
        cuts.append(_quietest(whole, alone.size, lo=lo, hi=int(0.05 * RATE)))
    return _with_pauses(text, voice, whole, cuts, pauses)


def espeak_utterance(text: str, rng: random.Random) -> Utterance:
    """espeak-ng says it with SSML breaks where the speaker pauses."""
    pauses = pause_lengths(text, rng)
    parts = [p.strip() for p in text.split("|")]
    ssml = "<speak>"
    for i, part in enumerate(parts):
        ssml += part
        if i < len(pauses):
            ssml += f' <break time="{pauses[i]}ms"/> '
    ssml += "</speak>"
    done = subprocess.run(
        [shutil.which("espeak-ng") or "espeak-ng", "-m", "-v", "en-us", "-s", "150", "--stdout"],
        input=ssml.encode(),
        capture_output=True,
        check=True,
        timeout=30,
    )
    with wave.open(io.BytesIO(done.stdout)) as wav:
        rate = wav.getframerate()
        audio = pcm16_to_float(wav.readframes(wav.getnframes()))
    audio = _trim(resample(audio, rate, RATE))
    # Where each break starts: the longest quiet runs, in order.
    starts = _quiet_runs(audio, len(pauses))
    return Utterance(text, "espeak", audio, pauses, tuple(starts))


def _say(tts, text: str) -> np.ndarray:
    audio = pcm16_to_float(b"".join(tts.synthesize(text)))
    return resample(audio, tts.sample_rate, RATE)


def _trim(audio: np.ndarray, floor: float = 0.01) -> np.ndarray:
    loud = np.flatnonzero(np.abs(audio) > floor)
    return audio[loud[0] : loud[-1] + 1] if loud.size else audio


def _quietest(whole: np.ndarray, near: int, lo: int, hi: int) -> int:
    """The start of the quietest 10 ms frame in [near - lo, near + hi]."""
    frame = RATE // 100
    best, best_energy = near, float("inf")
    for start in range(max(0, near - lo), min(whole.size - frame, near + hi), frame // 2):
        energy = float(np.mean(whole[start : start + frame] ** 2))
        if energy < best_energy:
            best, best_energy = start, energy
    return best


def _quiet_runs(audio: np.ndarray, count: int) -> list[int]:
    frame = RATE // 100
    quiet = [
        float(np.max(np.abs(audio[i : i + frame]))) < 0.01
        for i in range(0, audio.size - frame, frame)
    ]
    runs, start = [], None
    for i, q in enumerate([*quiet, False]):
        if q and start is None:
            start = i
        elif not q and start is not None:
            runs.append((i - start, start * frame))
            start = None
    longest = sorted(runs, reverse=True)[:count]
    return sorted(at for _, at in longest)


def _with_pauses(
    text: str, voice: str, whole: np.ndarray, cuts: list[int], pauses: tuple[int, ...]
) -> Utterance:
    whole = _trim(whole)
    pieces, at, starts, added = [], 0, [], 0
    for cut, ms in zip(cuts, pauses, strict=True):
        pieces += [whole[at:cut], np.zeros(RATE * ms // 1000, dtype=np.float32)]
        starts.append(cut + added)
        added += RATE * ms // 1000
        at = cut
    pieces.append(whole[at:])
    return Utterance(text, voice, np.concatenate(pieces), pauses, tuple(starts))


def build(piper, baker=None, seed: int = 7, espeak: bool = True) -> list[Utterance]:
    rng = random.Random(seed)
    out = [piper_utterance(piper, text, rng) for text in ENGLISH]
    if espeak and shutil.which("espeak-ng"):
        out += [espeak_utterance(text, rng) for text in ENGLISH]
    if baker is not None:
        out += [piper_utterance(baker, text, rng, "baker") for text in CHINESE]
    return out
