"""Chit-chat a person would accept, from the real daemon with the bundled model.

Starts fayd on its embedded defaults (private mosquitto, default models) and plays sessions
of older people's small talk (feelings, memories, the day, questions about fayd), one user a
session, 8+ turns each, as text turns through the API (``fayd say``'s route); then speaks a
few of them through a simulated device (Piper voice → the real ASR → router → chat → TTS).

    .venv/bin/python benchmarks/chitchat.py [--spoken 10] [--dump replies.jsonl]

Prints one JSON object. Over the turns the router left to chit-chat:
``loop_rate`` (a reply that goes round in a loop: ``fayd.memory.hygiene.looping``),
``echo_rate`` (a reply sentence that repeats or paraphrases the question: word ratio ≥
``guard.ECHO_RATIO`` or MiniLM cosine ≥ ``guard.ECHO_COSINE``), ``empty_rate``,
``fallback_rate`` (the guard said its honest short line), ``retried_rate``, ``mean_words``,
``p95_words``, ``on_topic`` (mean cosine of question and reply), ``reply_ms_p50``; and
``eos_to_first_audio_ms_p50`` over the spoken turns (end of speech → first audio frame,
the VAD's hangover included). ``extracted_*``: what the background extraction kept and
dropped (``fayd.memory.extract.drop_unfounded``); ``--dump`` writes every reply and
extracted item as JSON lines for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from fayd.agent import guard
from fayd.auth import read_token
from fayd.embedding import Embedder
from fayd.llm.text import word_count
from fayd.memory import hygiene
from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.speech.tts import PiperTts
from fayd.testing.harness import DaemonProcess, run_against_daemon

#: One session a user: small talk as older people make it, 8+ turns each.
SESSIONS: dict[str, list[str]] = {
    "Margaret": [
        "Good morning Fay.",
        "I didn't sleep very well last night.",
        "My knees always ache when it's cold.",
        "I had porridge for breakfast, with a bit of honey.",
        "My daughter phoned yesterday, she lives in Canada.",
        "I miss her terribly sometimes.",
        "She's coming to visit in the summer, I hope.",
        "Well, I'd better get on with the washing up.",
    ],
    "Arthur": [
        "Hello there.",
        "I used to be a train driver, you know.",
        "Forty years on the railways.",
        "Steam engines were my favourite, they had character.",
        "Nobody remembers those days now.",
        "My wife used to pack me sandwiches every morning.",
        "She passed away three years ago.",
        "It's very quiet in the house without her.",
        "Thank you for listening to an old man.",
    ],
    "Joan": [
        "Are you there Fay?",
        "I feel a bit lonely today.",
        "Nobody has called all week.",
        "I watched a programme about birds this morning.",
        "There's a robin that comes to my garden every day.",
        "I put out some seeds for him.",
        "Do you like birds?",
        "It makes me happy to see him.",
    ],
    "Harold": [
        "Good afternoon.",
        "What are you exactly?",
        "So you're a kind of computer?",
        "Can you hear everything I say?",
        "Where do you keep the things I tell you?",
        "My grandson set you up for me.",
        "He's very clever with gadgets.",
        "I still prefer my old radio though.",
    ],
    "Dorothy": [
        "I've been baking this morning.",
        "A lemon cake, my mother's recipe.",
        "She was a wonderful cook.",
        "We didn't have much money when I was small.",
        "But we always had something on the table.",
        "Do you have a favourite cake?",
        "I'll save a slice for my neighbour.",
        "She's been very kind to me since my fall.",
    ],
    "Walter": [
        "Morning Fay.",
        "I'm feeling rather grumpy today.",
        "My back is stiff and the tablets don't help much.",
        "The doctor says I should walk more.",
        "But it's hard when you're eighty-five.",
        "I used to walk for miles in the hills.",
        "Those were good days.",
        "Maybe I'll go round the block after lunch.",
    ],
    "Edith": [
        "Hello love.",
        "I was thinking about my wedding day.",
        "It was in nineteen sixty-two, a very cold spring.",
        "My dress was borrowed from my cousin.",
        "We danced all evening.",
        "Do you think people still dance like that?",
        "I loved a waltz more than anything.",
        "I still have the photographs in a box.",
    ],
    "Frank": [
        "Evening Fay.",
        "I've just finished the crossword.",
        "Took me most of the afternoon.",
        "One clue had me stuck for an hour.",
        "Do you like puzzles?",
        "My brother and I used to race each other at them.",
        "He lives in a care home now.",
        "I should visit him more often.",
        "Anyway, it's nearly time for my tea.",
    ],
    "Irene": [
        "I'm a bit worried today.",
        "I can't find my reading glasses anywhere.",
        "I've looked in every room.",
        "I'm getting so forgetful these days.",
        "It frightens me a little.",
        "Oh, they were on my head all along!",
        "That made me laugh.",
        "You must think I'm silly.",
    ],
    "George": [
        "Hello.",
        "Do you ever get bored, sitting there all day?",
        "I get bored sometimes.",
        "The days are very long when you live alone.",
        "I listen to the cricket on the radio.",
        "I used to play cricket when I was young.",
        "I was a decent bowler in my day.",
        "Do you know anything about cricket?",
    ],
    "Mary": [
        "Good morning, dear.",
        "I've been sorting through old letters.",
        "Some of them are from my sister.",
        "She wrote to me every week when she lived abroad.",
        "Her handwriting was always so neat.",
        "I do miss getting letters.",
        "Nobody writes letters any more, do they?",
        "I think I'll keep them all.",
    ],
    "Stanley": [
        "Are you awake?",
        "I'm feeling quite cheerful this morning.",
        "The sun is coming through the kitchen window.",
        "I've had two cups of tea already.",
        "My friend Bill is coming round later for a game of cards.",
        "We've played every Thursday for twenty years.",
        "He usually wins, mind you.",
        "What do you think I should make us for lunch?",
    ],
    "Betty": [
        "Hello Fay, it's me again.",
        "I went to the shops with my neighbour today.",
        "Everything is so expensive now.",
        "I remember when bread cost a few pennies.",
        "I bought some flowers for the table though.",
        "Yellow tulips, they're my favourite.",
        "They make the room look brighter.",
        "Do you like flowers?",
        "I think I'll have a little rest now.",
    ],
}
#: Turns spoken through the simulated device (its own user): easy for the ASR, chit-chat.
SPOKEN = [
    "I feel a bit tired this afternoon.",
    "My sister used to sing in a choir.",
    "I made some vegetable soup today.",
    "The house is very quiet without the children.",
    "I love the smell of fresh bread.",
    "My cat likes to sleep on the windowsill.",
    "I used to go dancing every Saturday.",
    "I had a lovely chat with my neighbour.",
    "My garden needs some work.",
    "I miss the seaside.",
]


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1) if values else 0.0


async def text_turns(daemon: DaemonProcess) -> list[dict[str, Any]]:
    api = daemon.runtime["api"]
    headers = {"Authorization": f"Bearer {read_token(daemon.state)}"}
    out = []
    async with httpx.AsyncClient(timeout=300, headers=headers) as client:
        for user, session in SESSIONS.items():
            for text in session:
                started = time.monotonic()
                response = await client.post(f"{api}/api/say", json={"text": text, "user": user})
                response.raise_for_status()
                done = response.json()
                ms = (time.monotonic() - started) * 1000
                out.append({"user": user, "question": text, "reply": done["reply"], "ms": ms})
                decision = done.get("decision") or {}
                out[-1]["intent"] = decision.get("intent", "chitchat")
                out[-1]["written"] = decision.get("via") == "smalltalk"
                print(
                    f"{user:9} {out[-1]['intent']:10} {text!r} → {done['reply']!r}", file=sys.stderr
                )
    return out


async def spoken_turns(daemon: DaemonProcess, count: int) -> list[float]:
    files = resolve("tts").files
    tts = PiperTts(files["model"], files.get("config"))
    eos_to_audio: list[float] = []
    async with daemon.sim("bench-1") as device:
        await device.hello()
        for text in SPOKEN[:count]:
            speech = resample(
                pcm16_to_float(b"".join(tts.synthesize(text))), tts.sample_rate, 16000
            )
            lead = np.zeros(8000, dtype=np.float32)
            tail = np.zeros(24000, dtype=np.float32)  # 1.5 s: room for the VAD's hangover
            started = time.monotonic()
            send = asyncio.create_task(
                device.speak(np.concatenate([lead, speech, tail]), realtime=True)
            )
            reply = await device.collect_reply(120)
            await send
            eos = started + (len(lead) + len(speech)) / 16000
            if reply.first_audio_at is not None:
                eos_to_audio.append((reply.first_audio_at - eos) * 1000)
            print(f"spoken {text!r} → {reply.text!r}", file=sys.stderr)
    return eos_to_audio


def stored(state: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Guard verdicts of the stored replies, and the extracted document entries."""
    conn = sqlite3.connect(state / "fayd.db")
    try:
        metas = [
            json.loads(meta)
            for (meta,) in conn.execute(
                "SELECT meta FROM messages WHERE role = 'assistant' ORDER BY id"
            )
        ]
        docs = conn.execute(
            "SELECT d.username, d.category, e.text FROM memory_document_entries e"
            " JOIN memory_documents d ON d.id = e.document_id"
            " WHERE d.category IN ('user_persona', 'character_persona', 'important_event',"
            " 'recent_digest')"
        ).fetchall()
    finally:
        conn.close()
    return metas, [{"user": u, "category": c, "text": t} for u, c, t in docs]


def dropped_items(log: str) -> list[dict[str, str]]:
    found = re.findall(r"extracted (\S+) dropped \((.*?)\): (.*)$", log, re.MULTILINE)
    return [{"category": c, "reason": r, "text": t} for c, r, t in found]


def echoes(question: str, reply: str, embedder: Embedder) -> bool:
    """Any sentence of the reply echoes the question, by the guard's own measure."""
    for sentence in filter(None, re.split(r"(?<=[.!?])\s+", reply)):
        q, s = embedder.embed([question, sentence])
        judge = guard.ReplyGuard(question)
        if judge.judge(sentence, float(np.dot(q, s))) is None and judge.problem == "echo":
            return True
    return False


async def measure(daemon: DaemonProcess, spoken: int, dump: Path | None) -> dict[str, Any]:
    turns = await text_turns(daemon)
    eos_to_audio = await spoken_turns(daemon, spoken) if spoken else []
    await asyncio.sleep(5)  # the last extraction's writes
    metas, extracted = stored(daemon.state)
    embed = resolve("embed").files
    embedder = Embedder(embed["model"], embed["tokenizer"], threads=1)
    chit = [t for t in turns if t["intent"] == "chitchat"]
    for t in chit:
        q, r = embedder.embed([t["question"], t["reply"] or " "])
        t["cosine"] = float(np.dot(q, r))
        t["words"] = word_count(t["reply"])
        t["loop"] = hygiene.looping(t["reply"])
        t["echo"] = echoes(t["question"], t["reply"], embedder)
        t["fallback"] = t["reply"] in guard.FALLBACKS["en"]
    n = max(len(chit), 1)
    chat_metas = [
        m for m in metas if (m.get("decision") or {}).get("intent", "chitchat") == "chitchat"
    ]
    if dump:
        with dump.open("w") as f:
            for t in turns:
                f.write(json.dumps(t) + "\n")
            for item in extracted:
                f.write(json.dumps({"extracted": item}) + "\n")
            for reason in dropped_items(daemon.log_text()):
                f.write(json.dumps({"dropped": reason}) + "\n")
    return {
        "replies": len(chit),
        "routed_to_skills": len(turns) - len(chit),
        # Small talk answered with written words (a loss, a greeting…), not by the model.
        "written_small_talk": sum(t["written"] for t in chit),
        "sessions": len(SESSIONS),
        "loop_rate": round(sum(t["loop"] for t in chit) / n, 3),
        "echo_rate": round(sum(t["echo"] for t in chit) / n, 3),
        "empty_rate": round(sum(not t["reply"].strip() for t in chit) / n, 3),
        "fallback_rate": round(sum(t["fallback"] for t in chit) / n, 3),
        "retried_rate": round(sum("retried" in m for m in chat_metas) / max(len(chat_metas), 1), 3),
        "guard_cuts": _counts(m.get("cut") for m in chat_metas),
        "guard_rejected": _counts(m.get("rejected") for m in chat_metas),
        "mean_words": round(statistics.mean(t["words"] for t in chit), 1) if chit else 0,
        "p95_words": pct([t["words"] for t in chit], 95),
        "on_topic": round(statistics.mean(t["cosine"] for t in chit), 3) if chit else 0,
        "reply_ms_p50": pct([t["ms"] for t in chit], 50),
        "eos_to_first_audio_ms_p50": pct(eos_to_audio, 50),
        "spoken": len(eos_to_audio),
        "extracted_kept": len(extracted),
        "extracted_dropped": len(dropped_items(daemon.log_text())),
    }


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        if v:
            out[v] = out.get(v, 0) + 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spoken", type=int, default=10, help="turns spoken through a device")
    parser.add_argument("--dump", type=Path, help="write replies and extracted items here")
    args = parser.parse_args()
    result = run_against_daemon(lambda daemon: measure(daemon, args.spoken, args.dump))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
