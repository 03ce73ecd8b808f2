"""Chinese voices heard back by Whisper base: ``benchmarks/asr_wer.py --lang zh``.

Each line of benchmarks/data/zh_daily.txt (an older person's day: greetings, times,
medicine, meals, family, weather, falls, reminders with numbers) is spoken by the Baker
voice (fayd.speech.tts_zh) and by espeak-ng's ``cmn`` voice (the floor Debian ships),
then transcribed by the multilingual Whisper base (the ``whisper-base`` choice, put
together in a temporary folder unless --whisper DIR names one) as fayd hears Chinese
(fayd.speech.asr.WhisperAsr, "zh"). Scores: character error rate (simplified characters,
numbers in words, punctuation removed) and syllable error rate (toned pinyin: Whisper's
homophone spellings such as 午/五 do not count). Also each voice's real-time factor and
the resident memory its loading adds to this process, beside the default English Piper
voice's.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fayd.models import load_manifest, resolve
from fayd.models.choices import assemble
from fayd.speech.audio import pcm16_to_float, resample
from fayd.testing.speech import ESPEAK_INSTALL, espeak_16k, missing_espeak_tools
from fayd.testing.zh_score import (
    OPENCC_INSTALL,
    Listener,
    edit_distance,
    have_opencc,
    spoken,
    syllables,
)

DATA = Path(__file__).with_name("data") / "zh_daily.txt"
ENGLISH = ["Good morning, how did you sleep?", "Remind me to take my pills at eight."]


def lines(limit: int | None = None) -> list[str]:
    found = [s.strip() for s in DATA.read_text(encoding="utf-8").splitlines()]
    found = [s for s in found if s and not s.startswith("#")]
    return found[:limit]


def rss_mb() -> float:
    """This process's resident memory now (not the peak), MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / 2**20


def loaded(build: Callable[[], object]) -> tuple[object, float]:
    before = rss_mb()
    made = build()
    return made, round(rss_mb() - before, 1)


def speak_tts(tts, text: str) -> tuple[np.ndarray, float]:
    """16 kHz audio of ``text`` and the seconds synthesis took."""
    start = time.perf_counter()
    pcm = b"".join(tts.synthesize(text))
    took = time.perf_counter() - start
    return resample(pcm16_to_float(pcm), tts.sample_rate, 16000), took


def main(limit: int | None, whisper: str | None) -> None:
    if missing := missing_espeak_tools():
        sys.exit(f"{missing[0]} is needed ({ESPEAK_INSTALL})")
    if not have_opencc():
        sys.exit(f"OpenCC is needed to score Whisper's traditional characters ({OPENCC_INSTALL})")
    from fayd.speech.tts import PiperTts
    from fayd.speech.tts_zh import BakerTts

    baker, baker_mb = loaded(lambda: BakerTts(threads=2))
    files = resolve("tts").files
    piper, piper_mb = loaded(
        lambda: PiperTts(files["model"], files["config"], threads=2, noise_scale=0, noise_w_scale=0)
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = whisper or str(assemble(load_manifest().choice("asr", "whisper-base"), Path(tmp)))
        listener = Listener(folder)
        said = lines(limit)
        heard: dict[str, list[tuple[str, str]]] = {"baker": [], "espeak_cmn": []}
        seconds = {"baker": 0.0, "espeak_cmn": 0.0, "piper_en": 0.0}
        audio_s = {"baker": 0.0, "espeak_cmn": 0.0, "piper_en": 0.0}
        for text in said:
            audio, took = speak_tts(baker, text)
            seconds["baker"] += took
            audio_s["baker"] += len(audio) / 16000
            heard["baker"].append((text, listener.hear(audio)))
            start = time.perf_counter()
            audio = espeak_16k(text, Path(tmp) / "espeak.wav", voice="cmn")
            seconds["espeak_cmn"] += time.perf_counter() - start
            audio_s["espeak_cmn"] += len(audio) / 16000
            heard["espeak_cmn"].append((text, listener.hear(audio)))
        for text in ENGLISH:
            audio, took = speak_tts(piper, text)
            seconds["piper_en"] += took
            audio_s["piper_en"] += len(audio) / 16000
    report: dict[str, object] = {"utterances": len(said), "asr_model": "whisper-base (zh)"}
    for voice, pairs in heard.items():
        report[voice] = _scores(pairs)
    report["rtf"] = {v: round(seconds[v] / max(audio_s[v], 1e-9), 3) for v in seconds}
    report["rss_load_mb"] = {"baker": baker_mb, "piper_en": piper_mb, "espeak_cmn": 0.0}
    print(json.dumps(report, ensure_ascii=False, indent=1))


def _scores(pairs: list[tuple[str, str]]) -> dict[str, object]:
    chars = [(spoken(s), spoken(h)) for s, h in pairs]
    sylls = [(syllables(s), syllables(h)) for s, h in pairs]
    char_errors = [edit_distance(s, h) for s, h in chars]
    syll_errors = [edit_distance(s, h) for s, h in sylls]
    worst = sorted(zip(char_errors, pairs, strict=True), key=lambda x: -x[0])[:6]
    return {
        "cer": round(sum(char_errors) / sum(len(s) for s, _ in chars), 4),
        "syllable_error_rate": round(sum(syll_errors) / sum(len(s) for s, _ in sylls), 4),
        "exact_lines": sum(e == 0 for e in char_errors),
        "misheard": [{"said": s, "heard": h} for e, (s, h) in worst if e],
    }
