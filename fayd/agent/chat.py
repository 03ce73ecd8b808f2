"""A conversation turn: persona + history + question → the model's reply, sentence by
sentence, with <think> content removed; the exchange is stored when the turn ends."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fayd.config import AgentConfig, LlmConfig
from fayd.llm.text import SentenceSplitter, ThinkFilter
from fayd.store import Store, records

log = logging.getLogger(__name__)

#: Speech starts after a first clause of this many words, not a whole first sentence.
FIRST_CLAUSE_WORDS = 4
#: Said when the language model is not installed, so a voice device still gets an answer.
NO_MODEL_REPLY = "Sorry, my language model is not installed yet, so I cannot answer."
_DONE = object()


@dataclass
class Turn:
    """One exchange, filled in as it runs; ``timings`` are milliseconds from ``started``."""

    user: str
    device: str
    question: str
    source: str = "text"
    started: float = field(default_factory=time.monotonic)
    timings: dict[str, float] = field(default_factory=dict)
    sentences: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def mark(self, name: str) -> None:
        """Record the first time ``name`` happened."""
        self.timings.setdefault(name, round((time.monotonic() - self.started) * 1000, 1))

    @property
    def answer(self) -> str:
        return " ".join(self.sentences)


class Agent:
    def __init__(self, llm: Any, store: Store, agent: AgentConfig, llm_cfg: LlmConfig) -> None:
        self.llm = llm
        self.store = store
        self.cfg = agent
        self.llm_cfg = llm_cfg

    def messages(self, history: list[dict[str, str]], question: str) -> list[dict[str, str]]:
        system = {"role": "system", "content": self.cfg.persona}
        return [system, *history, {"role": "user", "content": question}]

    async def reply(self, turn: Turn) -> AsyncIterator[str]:
        """Yield the reply's sentences as the model writes them; store the turn at the end."""
        conversation = await self.store.run(records.conversation_for, turn.user, turn.device)
        history = await self.store.run(records.history, conversation, self.cfg.history_turns)
        deltas = self._generate(self.messages(history, turn.question), turn)
        think, splitter = ThinkFilter(), SentenceSplitter(first_clause_words=FIRST_CLAUSE_WORDS)
        try:
            async for delta in deltas:
                turn.mark("llm_first_token_ms")
                for sentence in splitter.feed(think.feed(delta)):
                    turn.mark("llm_first_sentence_ms")
                    turn.sentences.append(sentence)
                    yield sentence
            rest = splitter.feed(think.flush())
            tail = splitter.flush()
            for sentence in [*rest, *([tail] if tail else [])]:
                turn.mark("llm_first_sentence_ms")
                turn.sentences.append(sentence)
                yield sentence
        finally:
            turn.stop.set()  # ends generation if the consumer went away (barge-in, error)
            await deltas.aclose()
            turn.mark("total_ms")
            if turn.sentences:
                meta = {"source": turn.source, "timings": turn.timings}
                await self.store.run(
                    records.record_turn, conversation, turn.question, turn.answer, meta
                )

    async def _generate(self, messages: list[dict[str, str]], turn: Turn) -> AsyncIterator[str]:
        """The model's text deltas, produced on a worker thread, handed over by a queue."""
        if self.llm is None:
            yield NO_MODEL_REPLY
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()

        def produce() -> None:
            try:
                for delta in self.llm.stream_chat(
                    messages,
                    max_tokens=self.llm_cfg.max_tokens,
                    temperature=self.llm_cfg.temperature,
                    stop=turn.stop,
                ):
                    loop.call_soon_threadsafe(queue.put_nowait, delta)
            except Exception as exc:  # handed to the event loop, raised there
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, _DONE)

        worker = asyncio.create_task(asyncio.to_thread(produce))
        try:
            while (item := await queue.get()) is not _DONE:
                if isinstance(item, Exception):
                    raise item
                yield str(item)
        finally:
            turn.stop.set()
            await worker
