"""Word error rate of fayd's ASR (Whisper) on home and eldercare phrases, per voice.

Each phrase is spoken by the default Piper voice (noise off, so every run hears the same
audio) and by espeak-ng (converted to 16 kHz by sox, a harder robotic voice), then
transcribed by WhisperAsr exactly as fayd does. Texts are compared after the usual
normalisation (case, punctuation, numbers written as words), over all words of a voice:
WER = (substitutions + deletions + insertions) / reference words.

    .venv/bin/python benchmarks/asr_wer.py [--limit N]

Prints one JSON object: utterances, wer_piper, wer_espeak (+ the worst transcripts).

    .venv/bin/python benchmarks/asr_wer.py --lang zh [--limit N] [--whisper DIR]

does the same for Chinese voices (see benchmarks/asr_wer_zh.py): the Baker voice and
espeak-ng cmn, heard by the multilingual Whisper base, scored by character error rate.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from fayd.models import resolve
from fayd.speech.asr import WhisperAsr
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.speech import ESPEAK_INSTALL, espeak_16k, missing_espeak_tools
from fayd.testing.zh_score import edit_distance

PHRASES = [
    # home
    "Please turn on the kitchen light.",
    "Turn off the lights in the bedroom.",
    "Can you close the curtains in the living room?",
    "Set the heating a little warmer please.",
    "Is the front door locked?",
    "Play some quiet music for me.",
    "Turn the volume down a bit.",
    "What is the weather like today?",
    "Will it rain this afternoon?",
    "Remind me to water the plants tomorrow.",
    "Add milk and bread to the shopping list.",
    "What time is it now?",
    "What day of the week is it today?",
    "Tell me the news headlines.",
    "Read me a short poem.",
    "Call my daughter on the phone.",
    "Send a message to my son.",
    "Who is at the door?",
    "Open the garage door please.",
    "Start the robot vacuum in the hallway.",
    "Good morning, how did you sleep?",
    "Good night, see you tomorrow.",
    "Tell me a funny joke.",
    "How do I make a cup of tea?",
    "Set a timer for ten minutes.",
    "Wake me up at seven in the morning.",
    "Is the oven still on?",
    "Turn on the television for the football match.",
    "What should I cook for dinner tonight?",
    "Thank you for your help.",
    # eldercare
    "Did I take my medicine this morning?",
    "Remind me to take my blood pressure pills at eight.",
    "I feel dizzy when I stand up.",
    "My back hurts a little today.",
    "I cannot find my glasses.",
    "Help, I have fallen and I cannot get up.",
    "Please call the doctor for me.",
    "When is my next appointment at the clinic?",
    "I would like to talk to my granddaughter.",
    "I feel lonely this evening.",
    "Can you remind me to drink some water?",
    "My knee is swollen again.",
    "I did not sleep well last night.",
    "Is the nurse coming today?",
    "Please tell my family that I am fine.",
    "I need help getting out of bed.",
    "What did I eat for lunch yesterday?",
    "Remind me to check my blood sugar before breakfast.",
    "I have a headache and feel very tired.",
    "Let us go for a short walk in the garden.",
    "Put the photographs of my wedding on the screen.",
    "How many steps did I walk today?",
    "Turn the lights on, I am going to the bathroom.",
    "I am cold, please make the room warmer.",
    "Who is coming to visit me this weekend?",
    "Please speak a little slower and louder.",
]

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SAME = {"ok": "okay", "alright": "all right", "tv": "television", "mr": "mister"}


def _number(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + _number(rest))
    return str(n)


def normalise(text: str) -> list[str]:
    """Lower-case words without punctuation; numbers as words ("8:00" → "eight")."""
    text = text.lower().replace("-", " ")
    text = re.sub(r"\b(\d{1,2}):00\b", r"\1", text)  # "8:00" said as "eight"
    text = re.sub(r"\b\d+\b", lambda m: _number(int(m.group())), text)
    text = re.sub(r"[^\w\s']", " ", text).replace("'", "")
    return [_SAME.get(w, w) for w in text.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N phrases only")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--whisper", help="zh: a Whisper base folder (default: assembled)")
    parser.add_argument(
        "--window", type=float, default=30, help="encoder window (s), short utterances; 30: whole"
    )
    args = parser.parse_args()
    if args.lang == "zh":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks.asr_wer_zh import main as main_zh

        main_zh(args.limit, args.whisper)
        return
    if missing := missing_espeak_tools():
        sys.exit(f"{missing[0]} is needed ({ESPEAK_INSTALL})")

    files = resolve("tts").files
    tts = PiperTts(files["model"], files["config"], threads=2, noise_scale=0, noise_w_scale=0)
    asr = WhisperAsr(resolve("asr").files["model"], "en", threads=2, window_s=args.window)
    phrases = PHRASES[: args.limit]  # None: all
    errors = {"piper": 0, "espeak": 0}
    worst: dict[str, list[tuple[int, str, str]]] = {"piper": [], "espeak": []}
    ref_words = 0
    with tempfile.TemporaryDirectory() as tmp:
        for text in phrases:
            ref = normalise(text)
            ref_words += len(ref)
            piper = pcm16_to_float(b"".join(tts.synthesize(text)))
            audio = {
                "piper": resample(piper, tts.sample_rate, 16000),
                "espeak": espeak_16k(text, Path(tmp) / "espeak.wav"),
            }
            for voice, samples in audio.items():
                heard = asr.transcribe(samples)
                dist = edit_distance(ref, normalise(heard))
                errors[voice] += dist
                if dist:
                    worst[voice].append((dist, text, heard))
    print(
        json.dumps(
            {
                "utterances": len(phrases),
                "wer_piper": round(errors["piper"] / ref_words, 4),
                "wer_espeak": round(errors["espeak"] / ref_words, 4),
                "reference_words": ref_words,
                "asr_model": resolve("asr").name,
                "misheard_piper": [
                    {"said": t, "heard": h} for _, t, h in sorted(worst["piper"], reverse=True)[:5]
                ],
                "misheard_espeak": [
                    {"said": t, "heard": h} for _, t, h in sorted(worst["espeak"], reverse=True)[:5]
                ],
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
