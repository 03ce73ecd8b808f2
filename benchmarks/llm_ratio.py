"""Generation speed inside fayd vs bare llama-cpp-python: same model, threads, prompt, seed.

fayd's path is the agent's: ``LocalLlm.stream_chat`` on a worker thread, deltas handed to the
event loop by an asyncio queue (``Chat._generate``), then ThinkFilter and SentenceSplitter,
as ``Chat.reply`` does. The bare path iterates ``Llama.create_chat_completion(stream=True)``.
Both decode greedily, so they write the same reply; runs alternate between the two (and which
goes first), so a noisy neighbour slows both alike.

Generation speed is (tokens − 1) / (last token − first token): prompt evaluation is excluded.

    .venv/bin/python benchmarks/llm_ratio.py [--runs 5] [--threads 1] [--max-tokens 128]

Prints one JSON object: fayd_tok_s, bare_tok_s (medians), ratio (fayd / bare, target ≥ 0.95).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from fayd.agent.chat import Chat
from fayd.agent.turn import Turn
from fayd.config import AgentConfig, LlmConfig
from fayd.llm.local import LocalLlm
from fayd.llm.text import SentenceSplitter, ThinkFilter
from fayd.models import resolve

PROMPT = [
    {"role": "system", "content": "You are a kind companion for an elderly person at home."},
    {"role": "user", "content": "Tell me a long story about a cat who lives in a lighthouse."},
]
SEED = 1234


async def fayd_run(llm: LocalLlm, max_tokens: int) -> tuple[int, float, str]:
    """(tokens, seconds from first to last token, text) through fayd's streaming path."""
    agent = Chat(llm, None, AgentConfig(), LlmConfig(max_tokens=max_tokens, temperature=0.0))
    turn = Turn(user="bench", device="bench", question=PROMPT[-1]["content"])
    think, splitter = ThinkFilter(), SentenceSplitter()
    deltas, sentences = 0, []
    first = 0.0
    async for delta in agent._generate(PROMPT, turn):
        if not deltas:
            first = time.perf_counter()
        deltas += 1
        sentences += splitter.feed(think.feed(delta))
    sentences += splitter.feed(think.flush())
    if tail := splitter.flush():
        sentences.append(tail)
    last = time.perf_counter()
    return deltas, last - first, " ".join(sentences)


def bare_run(llm, max_tokens: int) -> tuple[int, float, str]:  # llm: llama_cpp.Llama
    chunks = llm.create_chat_completion(
        messages=PROMPT, max_tokens=max_tokens, temperature=0.0, stream=True
    )
    deltas, parts, first = 0, [], 0.0
    for chunk in chunks:
        content = chunk["choices"][0]["delta"].get("content")
        if content:
            if not deltas:
                first = time.perf_counter()
            deltas += 1
            parts.append(content)
    last = time.perf_counter()
    return deltas, last - first, "".join(parts)


def tok_s(tokens: int, seconds: float) -> float:
    return (tokens - 1) / seconds if tokens > 1 and seconds > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    # One thread by default: on a shared 2-core machine, two llama.cpp threads wait on each
    # other at every layer and a busy neighbour makes the figure swing 10x (measured 4-77
    # tok/s); one thread gives a stable comparison. --threads 2 measures fayd's default.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()

    import llama_cpp

    path = resolve("llm").files["model"]
    fayd_llm = LocalLlm(path, n_ctx=2048, threads=args.threads, seed=SEED)
    bare_llm = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=2048,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        seed=SEED,
        verbose=False,
    )
    # One warm-up each: the first generation pays for page-ins and graph set-up.
    asyncio.run(fayd_run(fayd_llm, 8))
    bare_run(bare_llm, 8)

    fayd_speeds, bare_speeds, tokens, same = [], [], [], True
    for i in range(args.runs):
        order = ("fayd", "bare") if i % 2 == 0 else ("bare", "fayd")
        texts = {}
        for side in order:
            if side == "fayd":
                n, secs, texts[side] = asyncio.run(fayd_run(fayd_llm, args.max_tokens))
                fayd_speeds.append(tok_s(n, secs))
            else:
                n, secs, texts[side] = bare_run(bare_llm, args.max_tokens)
                bare_speeds.append(tok_s(n, secs))
            tokens.append(n)
        # The splitter re-joins sentences with single spaces: compare the words.
        same = same and texts["fayd"].split() == texts["bare"].split()

    fayd_tok_s, bare_tok_s = statistics.median(fayd_speeds), statistics.median(bare_speeds)
    print(
        json.dumps(
            {
                "fayd_tok_s": round(fayd_tok_s, 1),
                "bare_tok_s": round(bare_tok_s, 1),
                "ratio": round(fayd_tok_s / bare_tok_s, 3) if bare_tok_s else None,
                "threads": args.threads,
                "runs": args.runs,
                "tokens_per_run": statistics.median(tokens),
                "same_output": same,
                "fayd_tok_s_runs": [round(s, 1) for s in fayd_speeds],
                "bare_tok_s_runs": [round(s, 1) for s in bare_speeds],
                "model": path.name,
            }
        )
    )


if __name__ == "__main__":
    main()
