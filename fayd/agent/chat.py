"""The model's side of a turn: persona + examples + history + memory + question → the
reply, sentence by sentence, with <think> content removed and every piece judged by the
guardrails (``fayd.agent.guard``: bounds, loops, echoes, prompt format) before it is said;
the exchange is stored when the turn ends (a rejected one marked so that history and memory
skip it), and every ``extract_every_turns`` turns the model notes what it learnt (in the
background)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fayd.agent import claims, guard
from fayd.agent.language.text import language
from fayd.agent.tools import Findings, TurnTools, quote
from fayd.agent.turn import MAX_HOLD_S, Turn
from fayd.agent.unfounded import not_sure
from fayd.config import AgentConfig, LlmConfig
from fayd.embedding import EmbedderLike
from fayd.errors import FaydError, StoreError
from fayd.llm import ChatLlm
from fayd.llm.text import SentenceSplitter, ThinkFilter
from fayd.logwords import words
from fayd.memory import Memory, extract, hygiene, mentioned
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
#: What each stand-in means to a program (the control API, the OpenAI door): its error code
#: and why, so that a script can tell the turn failed although it has a reply.
MODEL_FAILURES = {
    LLM_FAILED_REPLY: ("model_failed", "the language model did not answer (see the log)"),
    NO_MODEL_REPLY: (
        "model_not_installed",
        "the language model is not installed (fayd models check)",
    ),
}


def model_failure(sentences: list[str]) -> tuple[str, str] | None:
    """(code, why) when a reply's sentence is a stand-in for a model that did not answer."""
    return next((MODEL_FAILURES[s] for s in sentences if s in MODEL_FAILURES), None)


#: A second attempt samples hotter, with a new seed: the first one's path is not taken again.
RETRY_TEMPERATURE = 0.8
_DONE = object()


@dataclass(frozen=True)
class _Failed:
    """Said instead of the model's words (no model, or it failed): not judged, not kept."""

    text: str


class Chat:
    def __init__(
        self,
        llm: ChatLlm | None,
        store: Store,
        agent: AgentConfig,
        llm_cfg: LlmConfig,
        memory: Memory | None = None,
        playbooks_dir: Path | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.llm = llm
        #: Seconds: when a mentioned fact became true (the test harness moves it on).
        self.now = now
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
        # The MiniLM embedder memory already loaded: it tells a paraphrased question.
        self._embedder = memory.embedder if memory is not None else None
        self._fallbacks = 0
        #: What the model may look up before it answers (set by fayd.service; None: nothing).
        self.tools: TurnTools | None = None

    def prefix(self) -> list[dict[str, str]]:
        """Persona and example exchanges: the same for every turn and every user."""
        return prompt_prefix(self.cfg)

    def messages(
        self, history: list[dict[str, str]], question: str, context: str = ""
    ) -> list[dict[str, str]]:
        # Persona and examples, then the conversation so far: they change little from one
        # turn to the next, so llama.cpp reuses what it already read (the examples never
        # change: every user's turn shares them). This turn's memory context comes last,
        # just before the question, where changing it costs only its own tokens.
        memory = [{"role": "system", "content": context}] if context else []
        return [*self.prefix(), *history, *memory, {"role": "user", "content": question}]

    async def reply(self, turn: Turn) -> AsyncIterator[str]:
        """Yield the reply's sentences as the model writes them, each judged before it is
        said (``fayd.agent.guard``); store the turn at the end."""
        conversation = await self._conversation(turn)
        stored = []
        if conversation is not None:
            stored = await self.store.run(records.history, conversation, self.cfg.history_turns)
        history = self._clean(stored, turn.user)
        context = await self._context(turn, conversation or 0, history)
        found = await look_up(self.tools if self.llm else None, turn, history)
        quoted = await quoted_document(self.tools, self._embedder, turn, found)
        # A model that cannot retell a passage is never given one: the documents are
        # quoted, or (nothing close enough) left out, not garbled into its reply.
        retells = self.tools is not None and not self.tools.quote
        known = found.knowledge(retold=retells) if found is not None else ""
        context = "\n\n".join(part for part in (known, context) if part)
        messages = self.messages(history, turn.question, context)
        earlier = [m["content"] for m in history if m["role"] == "assistant"]
        guards: list[guard.ReplyGuard] = []
        speaks = language(turn.question) in model_languages(self.llm_cfg)
        try:
            if quoted is not None:  # the household's document, in its own words
                turn.mark("llm_first_sentence_ms")
                turn.sentences.append(quoted)
                yield quoted
            for attempt in (
                range(1 + max(self.cfg.reply_retries, 0)) if speaks and not quoted else ()
            ):
                judge = guard.ReplyGuard(
                    turn.question, self._bounds(), earlier, turn.user, self.cfg.agent_name
                )
                judge.grounds = "\n".join([context, *(m["content"] for m in history)])
                guards.append(judge)
                # The model copies its own recent replies (the loops that took over a user's
                # every turn): after a repeat or a loop the second attempt is asked without
                # the history (the next turn then reads the history again: slower). Other
                # failures (an echo, a stock phrase) are retried on the same prompt, still
                # in llama.cpp's cache, with other sampling.
                copied = attempt > 0 and guards[-2].problem in ("repeat", "loop", "format")
                prompt = self.messages([], turn.question, context) if copied else messages
                async with contextlib.aclosing(self._attempt(prompt, turn, judge, attempt)) as said:
                    async for sentence in said:
                        turn.mark("llm_first_sentence_ms")
                        turn.sentences.append(sentence)
                        yield sentence
                if turn.sentences or turn.stop.is_set() or claims.instead(turn.question, guards):
                    break  # (a claimed action to a request: said honestly below, not retried)
                log.info(
                    "turn %d: reply attempt %d rejected (%s)", turn.id, attempt + 1, judge.problem
                )
                log.debug("turn %d: the rejected reply: %s", turn.id, words(judge.detail))
            honest = claims.instead(turn.question, guards)  # the model claimed an action
            if honest is not None and not turn.stop.is_set():
                turn.mark("llm_first_sentence_ms")
                turn.sentences.append(honest)
                yield honest
            elif not turn.sentences and not turn.stop.is_set():
                self._fallbacks += 1
                unfounded = bool(guards) and guards[-1].problem == "unfounded"
                unsure = not_sure(turn.question) if unfounded else None
                sentence = unsure or guard.fallback(turn.question, self._fallbacks - 1)
                turn.mark("llm_first_sentence_ms")
                turn.sentences.append(sentence)
                yield sentence
        finally:
            turn.stop.set()  # ends generation if the consumer went away (barge-in, error)
            turn.mark("total_ms")
            if turn.sentences and conversation is not None:
                meta = {
                    "source": turn.source,
                    "timings": turn.timings,
                    "decision": turn.decision,
                    **verdict(guards),
                    **_kept(found),
                    **({} if speaks else {"rejected": "language", "fallback": True}),
                }
                if await self._record_turn(turn, conversation, meta):
                    # What the user said is kept either way; a rejected reply (a fallback, a
                    # failure) is not.
                    kept = "rejected" not in meta
                    self._memorize(turn, conversation, CONVERSATION_IMPORTANCE, with_reply=kept)
                    self._note_mentioned(turn)
                    await self._extract_if_due(turn.user, conversation)

    async def _record_turn(self, turn: Turn, conversation: int, meta: dict[str, Any]) -> bool:
        """Store an answered turn; False when the disk refused it (the reply was given)."""
        try:
            await self.store.run(
                records.record_turn, conversation, turn.question, turn.answer, meta
            )
        except StoreError as exc:  # a full disk
            log.error("could not store the turn (it was answered): %s", exc)
            return False
        return True

    async def _conversation(self, turn: Turn) -> int | None:
        """The turn's conversation; None when a new one cannot be written (a full disk):
        the reply is made without history and not stored, instead of not made."""
        try:
            return await self.store.run(records.conversation_for, turn.user, turn.device)
        except StoreError as exc:
            log.error("could not start a conversation (replying without one): %s", exc)
            return None

    async def _attempt(
        self, messages: list[dict[str, str]], turn: Turn, judge: guard.ReplyGuard, attempt: int
    ) -> AsyncIterator[str]:
        """One generation, judged as it streams: the pieces to say. The model is stopped as
        soon as ``judge`` is done (bounds reached, a loop, an echo, prompt format)."""
        halt = threading.Event()
        deltas = self._generate(messages, turn, halt, attempt)
        # A request waits for a whole first sentence: a claim in it is never half said.
        first = None if claims.asked_for(turn.question) else FIRST_CLAUSE_WORDS
        think, splitter = ThinkFilter(), SentenceSplitter(first_clause_words=first)
        ended = True
        try:
            async for delta in deltas:
                if isinstance(delta, _Failed):
                    judge.problem = judge.cut = "model"
                    judge.said.append(delta.text)
                    yield delta.text
                    return
                turn.mark("llm_first_token_ms")
                text = think.feed(delta)
                judge.feed(text)
                for piece in splitter.feed(text):
                    if said := await self._judged(judge, piece):
                        yield said
                    if judge.done and judge.cut != "words":
                        break
                if judge.done:
                    ended = False
                    break
            if ended:
                rest = splitter.feed(think.flush())
                for piece in [*rest, *filter(None, [splitter.flush()])]:
                    if said := await self._judged(judge, piece):
                        yield said
                    if judge.done:
                        break
            elif said := judge.tail(splitter.flush() or ""):
                yield said
        finally:
            halt.set()  # the model stops after its current token
            await deltas.aclose()
        if not judge.said and judge.problem is None:
            judge.problem = "empty"

    async def _judged(self, judge: guard.ReplyGuard, piece: str) -> str | None:
        """``judge.judge(piece)``, with the MiniLM similarity of question and piece when the
        words alone leave an echo in doubt (a paraphrase)."""
        cosine = None
        if self._embedder is not None and judge.doubtful(piece):
            try:
                vectors = await asyncio.to_thread(self._embedder.embed, [judge.question, piece])
                cosine = float(np.dot(vectors[0], vectors[1]))
            except Exception as exc:  # an echo missed beats a turn lost
                log.warning("echo check without embeddings: %s", exc)
        return judge.judge(piece, cosine)

    def _bounds(self) -> guard.Bounds:
        return guard.Bounds(max(self.cfg.max_sentences, 1), max(self.cfg.max_words, 1))

    def _clean(self, history: list[dict[str, str]], user: str) -> list[dict[str, str]]:
        """The stored history without exchanges whose reply is prompt format or a loop:
        turns stored before the guardrails (new ones are skipped by ``records.history``).
        The same exchanges go every turn, so the prompt's start stays put."""
        names = (user, self.cfg.agent_name)
        out: list[dict[str, str]] = []
        for i in range(0, len(history) - 1, 2):
            question, answer = history[i], history[i + 1]
            text = answer["content"]
            if hygiene.artifact(text, names) or hygiene.looping(text):
                continue
            out += [question, answer]
        return out

    async def record(self, turn: Turn, meta: dict[str, Any], importance: int | None = None) -> None:
        """Store a turn a skill answered (no model): in the conversation, so the history
        shows it; as a memory too when it has an ``importance`` (an emergency: 10)."""
        conversation = await self._conversation(turn)
        if conversation is None:
            return
        meta = {"source": turn.source, "timings": turn.timings, "decision": turn.decision, **meta}
        if turn.ended_by:
            meta["ended_by"] = turn.ended_by
        if await self._record_turn(turn, conversation, meta):
            if importance is not None:
                self._memorize(turn, conversation, importance)
            self._note_mentioned(turn)

    async def start_over(self, user: str, device: str) -> None:
        """ "Let's start again": a new conversation from the next turn; memory stays."""
        await self.store.run(records.end_conversation, user, device)

    async def _context(self, turn: Turn, conversation: int, history: list[dict[str, str]]) -> str:
        """What memory has for this turn (rules, portrait, facts, notes, playbooks, recalled
        nodes), packed into what the model's context has left after persona, history and
        the reply."""
        if self.memory is None:
            return ""
        memory, count = self.memory, counter(self.llm)
        used = sum(count(m["content"]) + 4 for m in [*self.prefix(), *history])
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
                now=self.now(),
            )
        except FaydError as exc:  # a reply without memories beats no reply
            log.warning("memory context failed: %s", exc)
            return ""
        turn.mark("recall_ms")
        return context

    def _memorize(
        self, turn: Turn, conversation: int, importance: int, with_reply: bool = True
    ) -> None:
        """Store the exchange as a conversation node, after the reply (importance costs an
        LLM call). Tagged, unlike Fay's own conversation nodes. ``with_reply=False``: the
        user's words only (the reply was rejected by the guardrails)."""
        if self.memory is None:
            return
        memory = self.memory
        content = f"{turn.user}：{turn.question}"
        if with_reply:
            content += f"\n{self.cfg.agent_name}：{turn.answer}"
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
                    importance,
                )
            except FaydError as exc:
                log.error("could not remember the exchange: %s", exc)

        task = asyncio.create_task(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    def _note_mentioned(self, turn: Turn) -> None:
        """Keep the facts the person's own words state ("my late husband Harold", "my
        glasses are on the windowsill": ``fayd.memory.mentioned``), in the background. Only
        the question is read: fayd's reply is never a fact about the person."""
        if self.memory is None or not mentioned.mentions(turn.question):
            return
        memory = self.memory

        async def write() -> None:
            try:
                await asyncio.to_thread(
                    mentioned.note, memory, turn.user, turn.question, self.now()
                )
            except FaydError as exc:
                log.error("could not keep what was mentioned: %s", exc)

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

    async def _generate(
        self, messages: list[dict[str, str]], turn: Turn, halt: threading.Event, attempt: int
    ) -> AsyncIterator[str | _Failed]:
        """The model's text deltas, produced on a worker thread, handed over by a queue.
        ``halt`` (or the turn's ``stop``: barge-in) ends the generation after its token."""
        if self.llm is None:
            yield _Failed(NO_MODEL_REPLY)
            return
        llm = self.llm
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        temperature, options = self._sampling(turn, attempt)

        def produce() -> None:
            try:
                for delta in llm.stream_chat(
                    messages,
                    max_tokens=self.llm_cfg.max_tokens,
                    temperature=temperature,
                    stop=halt,
                    **options,
                ):
                    loop.call_soon_threadsafe(queue.put_nowait, delta)
                    turn.model_may_run.wait(MAX_HOLD_S)  # the first sentence's speech first
                    if turn.stop.is_set():
                        halt.set()
            except Exception as exc:  # handed to the event loop, raised there
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, _DONE)

        worker = asyncio.create_task(asyncio.to_thread(produce))
        said = False
        try:
            while (item := await queue.get()) is not _DONE:
                # e.g. the LAN server is down, or the local model broke: say so
                if isinstance(item, Exception):
                    log.error("the language model failed: %s: %s", type(item).__name__, item)
                    if not said:
                        yield _Failed(LLM_FAILED_REPLY)
                    return
                said = True
                yield str(item)
        finally:
            halt.set()
            await worker

    def _sampling(self, turn: Turn, attempt: int) -> tuple[float, dict[str, Any]]:
        """Temperature and options of an attempt: stop strings where a reply turns into
        prompt format, the repeat penalty, and for a second attempt a new seed, hotter."""
        options: dict[str, Any] = {
            "stop_strings": guard.stop_strings(turn.user, self.cfg.agent_name)
        }
        if self.llm_cfg.repeat_penalty != 1.0:  # 1.0 = off: not sent (a strict server)
            options["repeat_penalty"] = self.llm_cfg.repeat_penalty
        temperature = self.llm_cfg.temperature
        if attempt:
            options["seed"] = random.randrange(1, 2**31)
            temperature = max(temperature, RETRY_TEMPERATURE)
        return temperature, options


def _kept(found: Findings | None) -> dict[str, Any]:
    """What the turn's record keeps of its look-ups: the calls, and the results that stay in
    the history (``knowledge``: fayd.store.records.history)."""
    if found is None:
        return {}
    kept = found.knowledge(kept_only=True)
    return {"tools": found.record(), **({"knowledge": kept} if kept else {})}


async def quoted_document(
    tools: TurnTools | None, embedder: EmbedderLike | None, turn: Turn, found: Findings | None
) -> str | None:
    """The sentence of the household's documents that answers, when the reply model is one
    that cannot retell a passage (fayd.agent.tools.quote); else None."""
    if found is None or tools is None or not tools.quote or embedder is None:
        return None
    written = [p for c in found.calls if c.source == "kb" for p in quote.passages(c.result)]
    if not written:
        return None
    try:
        return await asyncio.to_thread(quote.quote, turn.question, written, embedder)
    except Exception:  # the model answers instead
        log.exception("turn %d: quoting the documents failed", turn.id)
        return None


async def look_up(
    tools: TurnTools | None, turn: Turn, history: list[dict[str, str]]
) -> Findings | None:
    """Prestart calls and the tool loop (fayd.agent.tools), for what the router left to the
    model; their results become the reply's only grounds for facts."""
    if tools is None:
        return None
    lang = language(turn.question)
    try:
        found = await tools.gather(turn.question, turn.user, turn.device, lang, history)
    except Exception:  # a reply without look-ups beats no reply
        log.exception("turn %d: the look-ups failed; the model answers without them", turn.id)
        return None
    turn.mark("tools_ms")
    if found is not None:
        turn.decision["tools"] = found.record()
    return found


def prompt_prefix(cfg: AgentConfig) -> list[dict[str, str]]:
    """The persona and the example exchanges (``agent.few_shot``): the start of every
    prompt, for every turn and user, so llama.cpp evaluates it once (and the daemon's
    warm-up evaluates it before the first turn)."""
    examples = guard.EXAMPLES if cfg.few_shot else ()
    return [
        {"role": "system", "content": cfg.persona},
        *(
            {"role": role, "content": text}
            for q, a in examples
            for role, text in (("user", q), ("assistant", a))
        ),
    ]


def verdict(guards: list[guard.ReplyGuard]) -> dict[str, Any]:
    """What the guardrails did, for the stored turn's meta: ``rejected`` (why no words
    of the model's were said: history and memory skip the turn), ``retried`` (why the
    first attempt was dropped), ``cut`` (why the reply ended before the model did)."""
    if not guards:
        return {}
    out: dict[str, Any] = {}
    last = guards[-1]
    if last.problem is not None:
        out["rejected"] = guards[0].problem if last.problem != "model" else "model"
        out["fallback"] = last.problem != "model"
    if len(guards) > 1:
        out["retried"] = guards[0].problem
    if last.cut not in (None, "model"):
        out["cut"] = last.cut
    if any(g.detail for g in guards):
        out["guard"] = [g.detail for g in guards if g.detail]
    return out


def model_languages(cfg: LlmConfig) -> frozenset[str]:
    """The languages the chat model talks in (``llm.languages``; see fayd.config)."""
    if cfg.languages.strip():
        return frozenset(x.strip() for x in cfg.languages.split(",") if x.strip())
    return frozenset({"en", "zh"}) if cfg.url or cfg.model_path else frozenset({"en"})
