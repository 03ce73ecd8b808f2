"""Endpointing policies compared offline on the same pauses: which signal decides best?

    .venv/bin/python benchmarks/endpointing_policies.py [--zh] [--reply-ms 250]

Each utterance of benchmarks/data/endpointing_set.py goes through the device's VAD as fayd
runs it; at every 200 ms pause the utterance so far is transcribed (Whisper tiny.en; base
for ``--zh``) and routed by the real router, once. Then each policy decides, from those
same texts, how long to wait at each pause:

- ``fixed_N``: N ms whatever was said (700 is fayd's old hangover);
- ``words``: the words alone (turn_end's open endings, Whisper's punctuation) — done when
  a sentence closes, more when it is open;
- ``router``: the router alone — done when it understood a request with confidence;
- ``words+router``: both (fayd.agent.turn_end.judge, the shipped one).

A pause ends the utterance when the speaker stays silent for the policy's wait. It **cuts
the speaker off** when the speaker was in fact going on and did not resume before the
reply could be taken back: ``--reply-ms`` after the end for the judged policies (a skill's
reply; a model's is later, which would take more turns back), at once for the fixed ones
(as fayd was: nothing taken back), and ``fixed_700_taken_back`` for the fixed hangover
with taking back alone. ``wait_ms`` is the silence before the end of the
whole utterance. Prints one JSON object: per policy, ``cut_off_rate`` over all utterances,
and ``endpoint_wait_ms_p50``/``p90``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.data.endpointing_set import Utterance, build
from benchmarks.intents import router
from fayd.agent.turn_end import _TERMINAL, Verdict, _open_chinese, _open_english, judge
from fayd.agent.understand.router import Decision
from fayd.models import resolve
from fayd.speech.asr import WhisperAsr
from fayd.speech.tts import PiperTts
from fayd.speech.vad import SileroVad

PAUSE_MS = 200
USUAL_MS, LONGEST_MS = 700, 1500
NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


def pauses(u: Utterance, vad_path: Path, asr: WhisperAsr, lang: str) -> list[dict[str, Any]]:
    """Every pause the VAD offers: when it began (s into the utterance), how long the
    speaker stayed silent (None: the end), and the text so far."""
    vad = SileroVad(vad_path, min_silence_ms=5000)
    audio = np.concatenate([u.samples, np.zeros(16000 * 3, dtype=np.float32)])
    out = []
    for i in range(0, audio.size, 512):
        vad.accept(audio[i : i + 512])
        early = vad.provisional(PAUSE_MS)
        if early is None:
            continue
        began = early.cut / 16000
        out.append({"at": began, "text": asr.transcribe(early.samples, lang)})
    for p in out:
        p["silence_s"] = _silence_after(u, p["at"])
    return out


def _silence_after(u: Utterance, at: float) -> float | None:
    """Seconds from ``at`` until the speaker's next words (None: they said no more): the
    end of the inserted pause ``at`` falls in, else the next 50 ms of voice."""
    for start, ms in zip(u.pause_at, u.pauses_ms, strict=True):
        if start / 16000 - 0.5 <= at <= (start + ms * 16) / 16000:
            return (start + ms * 16) / 16000 - at
    frame, loud = 160, 0  # 10 ms
    for i in range(int(at * 16000), u.samples.size - frame, frame):
        loud = loud + 1 if float(np.max(np.abs(u.samples[i : i + frame]))) > 0.05 else 0
        if loud == 5:
            return (i - 4 * frame) / 16000 - at
    return None


def words_only(text: str, _: Decision) -> Verdict:
    text = text.strip()
    chinese = any("\u3400" <= c <= "\u9fff" for c in text)
    if not text:
        return Verdict.UNSURE
    if (_open_chinese(text) if chinese else _open_english(text)) or text.endswith(("...", "-")):
        return Verdict.MORE
    return Verdict.DONE if text.endswith(_TERMINAL) else Verdict.UNSURE


def router_only(text: str, decision: Decision) -> Verdict:
    confident = decision.intent != "chitchat" and decision.via != "intent"
    return Verdict.DONE if confident else Verdict.UNSURE


def fixed(ms: int) -> Callable[[str, Decision], int]:
    return lambda text, decision: ms


def judged(
    policy: Callable[[str, Decision], Verdict], done_ms: int = PAUSE_MS
) -> Callable[[str, Decision], int]:
    waits = {Verdict.DONE: done_ms, Verdict.UNSURE: USUAL_MS, Verdict.MORE: LONGEST_MS}
    return lambda text, decision: waits[policy(text, decision)]


POLICIES: dict[str, Callable[[str, Decision], int]] = {
    "fixed_500": fixed(500),
    "fixed_700": fixed(700),
    "fixed_1000": fixed(1000),
    "fixed_1500": fixed(1500),
    "words": judged(words_only),
    "router": judged(router_only),
    "words+router": judged(judge),
    # Answering a finished request later than the pause that judged it: fewer cut-offs?
    "words+router_done300": judged(judge, done_ms=300),
    "words+router_done500": judged(judge, done_ms=500),
}


def score(
    heard: list[list[dict[str, Any]]], decide: Callable[[str, Decision], int], reply_ms: int
) -> dict[str, Any]:
    """``reply_ms``: how long after the end a turn can still be taken back (0: never)."""
    cut, waits = [], []
    for utterance in heard:
        for p in utterance:
            wait = decide(p["text"], p["decision"]) / 1000
            if p["silence_s"] is None:  # the real end: how long the speaker waited
                waits.append(wait * 1000)
                break
            if p["silence_s"] > wait + reply_ms / 1000:  # ended, and answered, mid-sentence
                cut.append(p["text"])
                break
    return {
        "cut_off_rate": round(len(cut) / len(heard), 4),
        "cut_at": cut,
        "endpoint_wait_ms_p50": round(float(np.percentile(waits, 50)), 1) if waits else None,
        "endpoint_wait_ms_p90": round(float(np.percentile(waits, 90)), 1) if waits else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zh", action="store_true")
    parser.add_argument("--reply-ms", type=int, default=250)
    args = parser.parse_args()
    files = resolve("tts").files
    piper = PiperTts(files["model"], files.get("config"))
    if args.zh:
        import tempfile

        from fayd.models.choices import assemble
        from fayd.models.manifest import load_manifest
        from fayd.speech.tts_zh import BakerTts

        utterances = [u for u in build(piper, BakerTts(), espeak=False) if u.voice == "baker"]
        base = load_manifest().choice("asr", "whisper-base")
        folder = assemble(base, Path(tempfile.mkdtemp(prefix="fayd-ep-base-")))
        asr, lang = WhisperAsr(str(folder), "zh", 2), "zh"
    else:
        utterances, lang = build(piper, None), "en"
        asr = WhisperAsr(resolve("asr").files["model"], "en", 2)
    vad_path = resolve("vad").files["model"]
    route = router()
    heard = []
    for u in utterances:
        found = pauses(u, vad_path, asr, lang)
        for p in found:
            p["decision"] = route.route(p["text"], NOW)
        heard.append(found)
        print(u.voice, u.text, [(round(p["at"], 2), p["text"]) for p in found], file=sys.stderr)
    report = {
        "utterances": len(utterances),
        "paused": sum(u.paused for u in utterances),
        "reply_ms": args.reply_ms,
        **{
            # The fixed hangover as it was: an ended turn is answered, never taken back.
            name: score(heard, decide, 0 if name.startswith("fixed") else args.reply_ms)
            for name, decide in POLICIES.items()
        },
        "fixed_700_taken_back": score(heard, fixed(700), args.reply_ms),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
