"""How well the router understands (docs/understanding.md): every line of an evaluation
set routed as text, then spoken by the Piper voice and by espeak-ng and routed from what the
real ASR (Whisper) wrote down.

    .venv/bin/python benchmarks/intents.py [--data FILE] [--no-audio] [--misses]

Prints one JSON object: utterances, intent_accuracy_text, intent_accuracy_piper,
intent_accuracy_espeak, slot_exact_text, slot_exact_piper, emergency_recall,
emergency_false_alarms, router_ms_p50, router_ms_p95, and the same by language. A qa.csv
match counts as chit-chat (it is the conversational answer, given without the model). The
default ASR hears English only (Whisper tiny.en), so the audio runs take the English lines;
how many were spoken is in the output.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from fayd.agent.clock.pending import slots_json
from fayd.agent.language.intents import IntentClassifier, load_examples
from fayd.agent.understand.qa import DEFAULT_QA, QaTable
from fayd.agent.understand.router import Router
from fayd.embedding import Embedder
from fayd.models import resolve

DATA = Path(__file__).parent / "data" / "intents_eval.jsonl"
DEFAULT_NOW = "2026-12-01T10:00"


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def router() -> Router:
    files = resolve("embed").files
    embedder = Embedder(files["model"], files["tokenizer"], threads=1)
    from fayd.agent.features import all_skills

    qa = QaTable.load(DEFAULT_QA, all_skills().names)
    return Router(embedder, IntentClassifier(embedder, load_examples([])), qa)


def now_of(line: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(line.get("now", DEFAULT_NOW)).replace(tzinfo=UTC)


def judge(line: dict[str, Any], decision: Any) -> tuple[bool, bool | None]:
    """(intent right, slots exact — None when the line scores no slots)."""
    intent = "chitchat" if decision.intent == "qa" else decision.intent
    right = intent == line["intent"]
    want = line.get("slots")
    if want is None:
        return right, None
    got = slots_json(decision.slots) if right else {}
    return right, right and all(got.get(k) == v for k, v in want.items())


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2) if values else 0.0


def run_text(r: Router, lines: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict]]:
    stats: Counter[str] = Counter()
    ms, misses = [], []
    for line in lines:
        decision = r.route(line["text"], now_of(line))
        ms.append(decision.ms)
        right, exact = judge(line, decision)
        lang = line["lang"]
        stats[f"n_{lang}"] += 1
        stats[f"right_{lang}"] += right
        if exact is not None:
            stats["slots"] += 1
            stats["slots_exact"] += exact
        emergency, said = line["intent"] == "emergency", decision.intent == "emergency"
        stats["emergencies"] += emergency
        stats["caught"] += emergency and said
        stats["others"] += not emergency
        stats["false_alarms"] += said and not emergency
        if not right or exact is False:
            misses.append(
                {
                    "text": line["text"],
                    "want": line["intent"],
                    "got": decision.intent,
                    "via": decision.via,
                    "score": round(decision.score, 3),
                    "want_slots": line.get("slots"),
                    "got_slots": slots_json(decision.slots),
                }
            )
    n = stats["n_en"] + stats["n_zh"]
    return {
        "utterances": n,
        "intent_accuracy_text": round((stats["right_en"] + stats["right_zh"]) / n, 4),
        "intent_accuracy_text_en": round(stats["right_en"] / max(1, stats["n_en"]), 4),
        "intent_accuracy_text_zh": round(stats["right_zh"] / max(1, stats["n_zh"]), 4),
        "slot_exact_text": round(stats["slots_exact"] / max(1, stats["slots"]), 4),
        "slots_scored": stats["slots"],
        "emergency_recall": round(stats["caught"] / max(1, stats["emergencies"]), 4),
        "emergency_false_alarms": round(stats["false_alarms"] / max(1, stats["others"]), 4),
        "router_ms_p50": percentile(ms, 50),
        "router_ms_p95": percentile(ms, 95),
    }, misses


def spoken(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for x in lines if x["lang"] == "en" and x.get("audio", True)]


def run_audio(
    r: Router, lines: list[dict[str, Any]], voice: str, misses: list[dict] | None = None
) -> dict[str, Any]:
    from fayd.speech.asr import WhisperAsr
    from fayd.speech.audio import pcm16_to_float, resample

    asr = WhisperAsr(resolve("asr").files["model"], language="en", threads=2)
    if voice == "piper":
        from fayd.speech.tts import PiperTts

        files = resolve("tts").files
        tts = PiperTts(files["model"], files["config"], threads=2, noise_scale=0, noise_w_scale=0)

        def say(text: str) -> np.ndarray:
            pcm = b"".join(tts.synthesize(text))
            return resample(pcm16_to_float(pcm), tts.sample_rate, 16000)

    else:
        from fayd.testing.speech import espeak_16k

        folder = Path(tempfile.mkdtemp(prefix="fayd-intents-"))

        def say(text: str) -> np.ndarray:
            return espeak_16k(text, folder / "said.wav")

    right = exact = scored = 0
    for line in lines:
        heard = asr.transcribe(say(line["text"]))
        decision = r.route(heard, now_of(line))
        ok, slots_ok = judge(line, decision)
        if misses is not None and (not ok or slots_ok is False):
            misses.append(
                {
                    "voice": voice,
                    "text": line["text"],
                    "heard": heard,
                    "want": line["intent"],
                    "got": decision.intent,
                    "want_slots": line.get("slots"),
                    "got_slots": slots_json(decision.slots),
                }
            )
        right += ok
        if slots_ok is not None:
            scored += 1
            exact += slots_ok
    return {
        f"intent_accuracy_{voice}": round(right / max(1, len(lines)), 4),
        f"slot_exact_{voice}": round(exact / max(1, scored), 4),
        f"{voice}_utterances": len(lines),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-audio", action="store_true", help="the text run only")
    parser.add_argument("--misses", action="store_true", help="also print what went wrong")
    args = parser.parse_args()
    lines = load(args.data)
    r = router()
    result, misses = run_text(r, lines)
    if not args.no_audio:
        for voice in ("piper", "espeak"):
            result.update(run_audio(r, spoken(lines), voice, misses if args.misses else None))
    print(json.dumps(result))
    if args.misses:
        for miss in misses:
            print(json.dumps(miss, ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":
    main()
