"""One device's conversation: its turns run one at a time, in order, each as its own task so
that an interruption (barge-in) can cancel the reply in progress and move on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from fayd.agent import Agent, Turn
from fayd.agent.engines import Engines
from fayd.devices.reply import ReplyOutput, Sender
from fayd.protocol import Command, Error, TextIn
from fayd.speech.vad import SpeechSegment

log = logging.getLogger(__name__)


def _quiet(task: asyncio.Task[Any]) -> None:
    """Retrieve a speculation's outcome so an unused failure is not reported as lost."""
    if not task.cancelled():
        task.exception()


class Gates:
    """One FIFO lock per model: devices take turns in arrival order (asyncio.Lock wakes its
    waiters first-come first-served), so a busy device cannot starve another."""

    def __init__(self) -> None:
        self.asr = asyncio.Lock()
        self.llm = asyncio.Lock()


class Conversation:
    def __init__(
        self,
        device: str,
        engines: Engines,
        agent: Agent,
        sender: Sender,
        gates: Gates,
        user: Callable[[], str],
        output: Callable[[], ReplyOutput],
    ) -> None:
        self.device = device
        self.engines = engines
        self.agent = agent
        self.sender = sender
        self.gates = gates
        self._user = user
        self._output = output
        self.pending: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(8)
        self.current: asyncio.Task[Any] | None = None
        self.worker: asyncio.Task[None] | None = None
        self.reply_stream = 0
        self.generating = False
        #: When the device will have played all it was sent (time.monotonic()).
        self.playing_until = 0.0
        self.interrupted = 0
        self.dropped_turns = 0
        self._speculation: tuple[SpeechSegment, asyncio.Task[tuple[str, float]]] | None = None
        #: Final utterances whose text came from a speculative transcription.
        self.speculated = 0
        #: Cleans a transcript before it is answered (the hub removes the wake phrase).
        self.clean_question: Callable[[str], str] = lambda text: text

    @property
    def speaking(self) -> bool:
        """Generating a reply, or the device is still playing one."""
        return self.generating or time.monotonic() < self.playing_until

    def submit(self, source: str, item: SpeechSegment | TextIn) -> None:
        """Queue an utterance ("voice") or a typed text ("text") for this device."""
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._run(), name=f"device:{self.device}")
        try:
            self.pending.put_nowait((source, item))
        except asyncio.QueueFull:
            self.dropped_turns += 1
            if self.dropped_turns in (1, 10, 100) or self.dropped_turns % 1000 == 0:
                log.warning(
                    "device %s: too many waiting turns, %d dropped so far",
                    self.device,
                    self.dropped_turns,
                )

    def barge_in(self) -> bool:
        """The user started speaking over the reply: stop it now. True if one was stopped."""
        if not self.speaking:
            return False
        self.sender.send(self.device, Command("stop", {"reason": "barge-in"}))
        self.playing_until = 0.0
        if self.generating and self.current and not self.current.done():
            self.current.cancel()
        self.interrupted += 1
        log.info("device %s: interrupted, reply stopped", self.device)
        return True

    async def stop(self) -> None:
        if self.worker:
            self.worker.cancel()
            await asyncio.gather(self.worker, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            source, item = await self.pending.get()
            await self.run_turn(lambda s=source, i=item: self._turn(s, i))

    async def run_turn(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run one turn as the current, interruptible task; its failure is reported, not
        raised, so the conversation goes on."""
        self.current = asyncio.create_task(make())
        # Background model work (memory extraction…) waits for the whole turn, not only for
        # the model's part: speech recognition and synthesis need the CPU as much.
        user_turn = getattr(self.engines.llm, "user_turn", None)
        held = user_turn() if user_turn is not None else contextlib.nullcontext()
        try:
            with held:
                await asyncio.wait({self.current})
        except asyncio.CancelledError:  # the daemon is stopping
            self.current.cancel()
            await asyncio.gather(self.current, return_exceptions=True)
            raise
        if self.current.cancelled():
            return None
        if exc := self.current.exception():
            log.error("device %s: turn failed", self.device, exc_info=exc)
            self.sender.send(self.device, Error("turn-failed", "the reply failed; see the log"))
            return None
        return self.current.result()

    async def _turn(self, source: str, item: Any) -> None:
        user = self._user()
        timings = {}
        if source == "voice":
            question, timings["asr_ms"] = await self._heard(item)
            question = self.clean_question(question)
            if not question:
                return
        else:
            question = item.text
            user = item.user or user
        turn = Turn(user=user, device=self.device, question=question, source=source)
        turn.timings.update(timings)
        await self.speak(turn)

    def speculate(self, early: SpeechSegment) -> None:
        """Transcribe a provisional utterance now, while the VAD still waits out the
        silence that will end it; the final one reuses the text if nothing was said since.
        Only when ASR is idle: speculation must never delay a real turn."""
        if self.engines.asr is None or self.gates.asr.locked():
            return
        if self._speculation is not None:
            self._speculation[1].cancel()
        task = asyncio.create_task(self.transcribe(early.samples))
        task.add_done_callback(_quiet)
        self._speculation = (early, task)

    async def _heard(self, segment: SpeechSegment) -> tuple[str, float]:
        """The final utterance's text: the speculation's when it covered the same speech
        (ASR time then counts only what was left to wait), else a fresh transcription."""
        speculation, self._speculation = self._speculation, None
        if speculation is not None:
            early, task = speculation
            if early.vad_start == segment.vad_start and segment.cut <= early.cut:
                loop = asyncio.get_running_loop()
                started = loop.time()
                try:
                    text, _ = await task
                    self.speculated += 1
                    return text, round((loop.time() - started) * 1000, 1)
                except Exception:  # cancelled or failed: transcribe as usual
                    pass
            else:
                task.cancel()
        return await self.transcribe(segment.samples)

    async def transcribe(self, samples: np.ndarray) -> tuple[str, float]:
        """The utterance's text and how long ASR took (ms, waiting for the model included)."""
        if self.engines.asr is None:
            log.error("an utterance arrived but the ASR model is missing")
            return "", 0.0
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with self.gates.asr:
            text = await asyncio.to_thread(self.engines.asr.transcribe, samples)
        took = round((loop.time() - started) * 1000, 1)
        log.info("device %s heard (%.0f ms): %r", self.device, took, text)
        return text.strip(), took

    async def speak(self, turn: Turn) -> Turn:
        """Run the agent for ``turn`` and deliver its reply to the device."""
        self.reply_stream = (self.reply_stream + 1) % 65536
        output = self._output()
        async with self.gates.llm:
            self.generating = True
            try:
                await output.deliver(turn, self.agent.reply(turn), self.reply_stream)
            finally:
                self.generating = False
        if "first_audio_ms" in turn.timings:
            first_audio = turn.started + turn.timings["first_audio_ms"] / 1000
            self.playing_until = first_audio + output.audio_s
        return turn
