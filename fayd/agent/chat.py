"""The model's side of a turn: persona + history + memory + question → the reply, sentence
by sentence, with <think> content removed; the exchange is stored when the turn ends, and
every ``extract_every_turns`` turns the model notes what it learnt (in the background)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

from fayd.agent.turn import MAX_HOLD_S, Turn
from fayd.config import AgentConfig, LlmConfig
from fayd.errors import FaydError, ModelError
from fayd.llm import ChatLlm
from fayd.llm.text import SentenceSplitter, ThinkFilter
from fayd.memory import Memory, extract
from fayd.memory.budget import context_size, counter
from fayd.memory.context import assemble
from fayd.store import Store, records

log = logging.getLogger(__name__)

#: Speech starts after a first clause of this many words, not a whole first sentence.
FIRST_CLAUSE_WORDS = 4
#: Importance of a remembered exchange. Not asked of the LLM: retrieval does not weigh
#: importance (benchmarks/memory_recall.py chose weight 0), and the call would hold the
#: model while the user's next question waits.
CONVERSATION_IMPORTANCE = 3
#: Said when the language model fails (a server that does not answer, an overlong prompt).
LLM_FAILED_REPLY = "Sorry, I cannot think right now: my language model is not answering."
#: Said when the language model is not installed, so a voice device still gets an answer.
NO_MODEL_REPLY = "Sorry, my language model is not installed yet, so I cannot answer."
_DONE = object()


class Chat:
    def __init__(
        self,
        llm: ChatLlm | None,
        store: Store,
        agent: AgentConfig,
        llm_cfg: LlmConfig,
        memory: Memory | None = None,
        playbooks_dir: Path | None = None,
    ) -> None:
        self.llm = llm
        self.playbooks_dir = playbooks_dir
        self.store = store
        self.cfg = agent
        self.llm_cfg = llm_cfg
        self.memory = memory
        self._writes: set[asyncio.Task[None]] = set()
        # Extractions run one at a time, in turn order (each overwrites the digest).
        self._extractions: set[asyncio.Task[None]] = set()
        self._extract_lock = asyncio.Lock()
        self._closing = threading.Event()

    def messages(
        self, history: list[dict[str, str]], question: str, context: str = ""
    ) -> list[dict[str, str]]:
        # Persona, then the conversation so far: both change little from one turn to the
        # next, so llama.cpp reuses what it already read. This turn's memory context comes
        # last, just before the question, where changing it costs only its own tokens.
        system = {"role": "system", "content": self.cfg.persona}
        memory = [{"role": "system", "content": context}] if context else []
        return [system, *history, *memory, {"role": "user", "content": question}]

    async def reply(self, turn: Turn) -> AsyncIterator[str]:
        """Yield the reply's sentences as the model writes them; store the turn at the end."""
        conversation = await self.store.run(records.conversation_for, turn.user, turn.device)
        history = await self.store.run(records.history, conversation, self.cfg.history_turns)
        context = await self._context(turn, conversation, history)
        messages = self.messages(history, turn.question, context)
        deltas = self._generate(messages, turn)
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
                self._memorize(turn, conversation)
                await self._extract_if_due(turn.user, conversation)

    async def _context(self, turn: Turn, conversation: int, history: list[dict[str, str]]) -> str:
        """What memory has for this turn (rules, portrait, facts, notes, playbooks, recalled
        nodes), packed into what the model's context has left after persona, history and
        the reply."""
        if self.memory is None:
            return ""
        memory, count = self.memory, counter(self.llm)
        used = count(self.cfg.persona) + sum(count(m["content"]) for m in history)
        budget = min(
            self.cfg.memory_tokens,
            context_size(self.llm) - used - count(turn.question) - self.llm_cfg.max_tokens - 64,
        )
        if budget <= 0:
            return ""
        try:
            context = await asyncio.to_thread(
                assemble,
                memory,
                turn.user,
                turn.question,
                conversation,
                budget,
                count,
                playbooks_dir=self.playbooks_dir,
            )
        except FaydError as exc:  # a reply without memories beats no reply
            log.warning("memory context failed: %s", exc)
            return ""
        turn.mark("recall_ms")
        return context

    def _memorize(self, turn: Turn, conversation: int) -> None:
        """Store the exchange as a conversation node, after the reply (importance costs an
        LLM call). Tagged, unlike Fay's own conversation nodes."""
        if self.memory is None:
            return
        memory = self.memory
        content = f"{turn.user}：{turn.question}\n{self.cfg.agent_name}：{turn.answer}"
        tags = [
            f"session:{conversation}",
            f"date:{time.strftime('%Y-%m-%d')}",
            f"device:{turn.device}",
        ]

        async def write() -> None:
            try:
                await asyncio.to_thread(
                    memory.remember,
                    content,
                    turn.user,
                    "observation",
                    "conversation",
                    False,
                    tags,
                    "conversation",
                    CONVERSATION_IMPORTANCE,
                )
            except FaydError as exc:
                log.error("could not remember the exchange: %s", exc)

        task = asyncio.create_task(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _extract_if_due(self, user: str, conversation: int) -> None:
        """Start the MemoryFS extraction when this turn completes a block of
        ``extract_every_turns``, counted in the stored conversation (a restart keeps it)."""
        every = self.cfg.extract_every_turns
        if every <= 0 or self.memory is None or self.llm is None or self._closing.is_set():
            return
        turns = await self.store.run(extract.turns_done, conversation)
        if not extract.due(turns, every):
            return
        store, llm, name = self.memory.store, self.llm, self.cfg.agent_name

        async def run() -> None:
            async with self._extract_lock:
                if self._closing.is_set():
                    return
                # A worker thread; the model is asked as background work, so the user's
                # next turn goes first (fayd.llm.local.PriorityGate).
                try:
                    await asyncio.to_thread(
                        extract.run_extraction,
                        store,
                        llm,
                        user,
                        conversation,
                        turns,
                        every,
                        name,
                        self._closing,
                    )
                except Exception:  # it reports its own failures; anything else is a bug
                    log.exception("memory extraction crashed")

        task = asyncio.create_task(run())
        self._extractions.add(task)
        task.add_done_callback(self._extractions.discard)

    async def idle(self) -> None:
        """Wait until pending memory writes and extractions are done (tests, tools)."""
        while pending := self._writes | self._extractions:
            await asyncio.wait(pending)

    async def close(self) -> None:
        """Let pending memory writes finish (they are quick) and abandon pending extractions
        (one could hold the model for a minute; it writes nothing when abandoned) before the
        store closes."""
        self._closing.set()
        pending = self._writes | self._extractions
        if pending:
            await asyncio.wait(pending, timeout=30)

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
                    turn.model_may_run.wait(MAX_HOLD_S)  # the first sentence's speech first
            except Exception as exc:  # handed to the event loop, raised there
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, _DONE)

        worker = asyncio.create_task(asyncio.to_thread(produce))
        said = False
        try:
            while (item := await queue.get()) is not _DONE:
                if isinstance(item, ModelError):  # e.g. the LAN server is down: say so
                    log.error("the language model failed: %s", item)
                    if not said:
                        yield LLM_FAILED_REPLY
                    return
                if isinstance(item, Exception):
                    raise item
                said = True
                yield str(item)
        finally:
            turn.stop.set()
            await worker
