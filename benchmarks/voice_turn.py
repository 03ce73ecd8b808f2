"""End of speech → first audio frame on the device topic, over real voice turns.

Starts fayd on its embedded defaults (private mosquitto, default models), then a simulated
device speaks Piper-generated questions into it in real time, as a microphone would. The end
of speech is the moment the frame holding the last speech sample leaves the device; the
figure therefore includes the VAD's silence hangover (reported as ``hangover_ms``).

    .venv/bin/python benchmarks/voice_turn.py [--turns 20] [--lang zh]

``--lang zh``: a Chinese household's questions, said by the Chinese voice (tts_zh), heard by
Whisper base (the whisper-base choice, put together in a temporary folder) with
``speech.asr_language = zh``; replies come from skills and written answers (the default
chat model has no Chinese), so the bare engines there are ASR + the reply's first sentence
by the Chinese voice.

Prints one JSON object. Parts come from the timings fayd stores with each turn: ASR; LLM
first token (after ASR); TTS of the first sentence (its own duration). After the daemon
stops, the same turns run through the bare engines in this process, each timed alone (ASR of
the utterance, LLM to the first sentence, TTS of that sentence): their sum against fayd's
end-of-speech → first audio less the hangover is ``ratio_p50`` (fayd's overhead).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fayd.config import AgentConfig, LlmConfig, SpeechConfig
from fayd.llm.local import LocalLlm
from fayd.llm.text import SentenceSplitter
from fayd.models import resolve
from fayd.models.choices import assemble
from fayd.models.manifest import load_manifest
from fayd.speech.asr import WhisperAsr
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess

QUESTIONS = [
    "What is the weather like today?",
    "Can you remind me to take my pills?",
    "Tell me a short story about a cat.",
    "What time is it now?",
    "Good morning, how are you?",
    "What should I cook for dinner tonight?",
    "Please turn on the kitchen light.",
    "I feel a little tired today.",
    "Who is coming to visit this weekend?",
    "Can you tell me a joke?",
    "What day is it today?",
    "I would like to hear some music.",
    "How do I make a cup of tea?",
    "My back hurts a little this morning.",
    "Did I take my medicine already?",
    "Thank you for your help.",
    "What is the capital of France?",
    "Read me the news, please.",
    "Good night, see you tomorrow.",
    "How many days until Christmas?",
]


QUESTIONS_ZH = [
    "早上好",
    "现在几点了",
    "今天星期几",
    "明天早上八点提醒我吃降压药",
    "我吃药了吗",
    "十分钟后提醒我关火",
    "今天几号",
    "谢谢你",
    "我有点累",
    "晚安",
]


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


async def run(turns: int, lang: str = "en") -> dict:
    state = Path(tempfile.mkdtemp(prefix="fayd-bench-"))
    if lang == "zh":
        tts, questions = chinese_voice(), QUESTIONS_ZH
        asr_model = str(assemble(load_manifest().choice("asr", "whisper-base"), state / "base"))
        env = {"FAYD_SPEECH_ASR_LANGUAGE": "zh", "FAYD_SPEECH_ASR_MODEL": asr_model}
    else:
        files = resolve("tts").files
        tts, questions, env = PiperTts(files["model"], files.get("config")), QUESTIONS, {}
    daemon = DaemonProcess(state / "state", env).start()
    eos_to_audio: list[float] = []
    spoken: list[tuple[str, np.ndarray]] = []
    first_said: list[str] = []
    try:
        async with daemon.sim("bench-1") as device:
            await device.hello()
            for i in range(turns):
                text = questions[i % len(questions)]
                speech = resample(
                    pcm16_to_float(b"".join(tts.synthesize(text))), tts.sample_rate, 16000
                )
                spoken.append((text, speech))
                lead = np.zeros(8000, dtype=np.float32)
                tail = np.zeros(24000, dtype=np.float32)  # 1.5 s: room for the hangover
                started = time.monotonic()
                send = asyncio.create_task(
                    device.speak(np.concatenate([lead, speech, tail]), realtime=True)
                )
                reply = await device.collect_reply(120)
                await send
                eos = started + (len(lead) + len(speech)) / 16000
                if reply.first_audio_at is None:
                    print(f"turn {i}: no audio", file=sys.stderr)
                    first_said.append("")
                    continue
                eos_to_audio.append((reply.first_audio_at - eos) * 1000)
                first_said.append(next((h.text for h in reply.audio_humans if h.text), ""))
                print(f"turn {i}: {eos_to_audio[-1]:.0f} ms  {reply.text[:60]!r}", file=sys.stderr)
    finally:
        daemon.stop()
    conn = sqlite3.connect(state / "state" / "fayd.db")
    timings = [
        json.loads(meta)["timings"]
        for (meta,) in conn.execute("SELECT meta FROM messages WHERE role = 'assistant'")
    ]
    voice = [t for t in timings if "asr_ms" in t]
    # Since the router (issue 12) a skill or a written answer serves many of these questions
    # without the model: the model's figures and the comparison with the bare engines (which
    # always run the model) are over the turns the model answered.
    by_model = [t for t in voice if "llm_first_token_ms" in t]
    tts_ms = [t["tts_first_chunk_ms"] - t["llm_first_sentence_ms"] for t in voice]
    if lang == "zh":
        parts = bare_chinese_parts(spoken, first_said, tts, asr_model)
    else:
        parts = bare_engine_parts(spoken, tts)
    hangover = SpeechConfig().vad_min_silence_ms
    paired = len(voice) == len(eos_to_audio) == len(parts)
    model_turns = [i for i, t in enumerate(voice) if "llm_first_token_ms" in t] if paired else []
    model_eos = [eos_to_audio[i] - hangover for i in model_turns]
    model_bare = [sum(parts[i]) for i in model_turns]
    if lang == "zh":  # no model turns: every reply against ASR + its first sentence's TTS
        model_eos = [ms - hangover for ms in eos_to_audio]
        model_bare = [sum(p) for p in parts] if paired else []
    return {
        "lang": lang,
        "turns": len(eos_to_audio),
        "model_turns": len(by_model),
        "eos_to_first_audio_ms_p50": pct(eos_to_audio, 50),
        "eos_to_first_audio_ms_p90": pct(eos_to_audio, 90),
        "hangover_ms": hangover,
        "asr_ms_p50": pct([t["asr_ms"] for t in voice], 50),
        "understood_ms_p50": pct([t["understood_ms"] for t in voice if "understood_ms" in t], 50),
        "llm_first_token_ms_p50": pct([t["llm_first_token_ms"] for t in by_model], 50),
        "llm_first_sentence_ms_p50": pct([t["llm_first_sentence_ms"] for t in by_model], 50),
        "tts_first_chunk_ms_p50": pct(tts_ms, 50),
        "eos_to_first_audio_ms_mean": round(statistics.mean(eos_to_audio), 1),
        "eos_to_first_audio_ms_p50_without_hangover": pct(
            [ms - hangover for ms in eos_to_audio], 50
        ),
        "model_eos_to_first_audio_ms_p50_without_hangover": pct(model_eos, 50),
        "bare_engine_sum_ms_p50": pct([sum(p) for p in parts], 50),
        "bare_asr_ms_p50": pct([p[0] for p in parts], 50),
        "bare_llm_first_sentence_ms_p50": pct([p[1] for p in parts], 50),
        "bare_tts_first_chunk_ms_p50": pct([p[2] for p in parts], 50),
        # Model turns through fayd vs the same turns through the bare engines.
        "ratio_p50": round(pct(model_eos, 50) / pct(model_bare, 50), 3) if model_bare else None,
    }


def bare_engine_parts(
    spoken: list[tuple[str, np.ndarray]], tts: PiperTts
) -> list[tuple[float, float, float]]:
    """Each turn's ASR + LLM-to-first-sentence + TTS-of-that-sentence, each engine alone."""
    asr = WhisperAsr(resolve("asr").files["model"], "en", SpeechConfig().asr_threads)
    llm_cfg = LlmConfig()
    llm = LocalLlm(resolve("llm").files["model"], n_ctx=llm_cfg.n_ctx, threads=llm_cfg.threads)
    persona = {"role": "system", "content": AgentConfig().persona}
    llm.chat([persona, {"role": "user", "content": "Hi"}], max_tokens=1)  # as fayd warms up
    asr.transcribe(np.zeros(16000, dtype=np.float32))
    sums = []
    for _, speech in spoken:
        started = time.perf_counter()
        question = asr.transcribe(np.concatenate([np.zeros(4800, np.float32), speech]))
        asr_s = time.perf_counter() - started
        started = time.perf_counter()
        splitter, first = SentenceSplitter(), None
        stream = llm.stream_chat(
            [persona, {"role": "user", "content": question}],
            max_tokens=llm_cfg.max_tokens,
            temperature=llm_cfg.temperature,
        )
        for delta in stream:
            if sentences := splitter.feed(delta):
                first = sentences[0]
                break
        stream.close()
        first = first or splitter.flush() or question
        llm_s = time.perf_counter() - started
        started = time.perf_counter()
        next(iter(tts.synthesize(first)))
        tts_s = time.perf_counter() - started
        sums.append((asr_s * 1000, llm_s * 1000, tts_s * 1000))
    return sums


def chinese_voice():
    from fayd.speech.tts_zh import BakerTts

    return BakerTts()


def bare_chinese_parts(
    spoken: list[tuple[str, np.ndarray]], first_said: list[str], tts, asr_model: str
) -> list[tuple[float, float, float]]:
    """Each Chinese turn's ASR (Whisper base) + TTS of the reply's first sentence, alone."""
    asr = WhisperAsr(asr_model, "zh", SpeechConfig().asr_threads)
    asr.transcribe(np.zeros(16000, dtype=np.float32))
    sums = []
    for (_, speech), said in zip(spoken, first_said, strict=True):
        started = time.perf_counter()
        asr.transcribe(np.concatenate([np.zeros(4800, np.float32), speech]))
        asr_s = time.perf_counter() - started
        started = time.perf_counter()
        next(iter(tts.synthesize(said or "好。")))
        sums.append((asr_s * 1000, 0.0, (time.perf_counter() - started) * 1000))
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.turns, args.lang))))


if __name__ == "__main__":
    main()
