"""One device's conversation: its turns run one at a time, in order, each as its own task so
that an interruption (barge-in) can cancel the reply in progress and move on. Every turn —
a device's speech or typed text, ``fayd say``, the API — is :meth:`Conversation.turn`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fayd import logfields
from fayd.agent.chat import Chat
from fayd.agent.endpointer import EarlyEnd, Endpointer
from fayd.agent.listening import NOT_HEARD, Gates, NotHeard, Transcriber
from fayd.agent.output import ReplyOutput
from fayd.agent.ports import AgentEngines
from fayd.agent.skills import Outcome
from fayd.agent.turn import Turn
from fayd.agent.turn_end import Verdict, judge
from fayd.agent.turn_log import log_turn
from fayd.agent.understanding import Understanding
from fayd.llm.text import SentenceSplitter
from fayd.precedence import for_a_door
from fayd.protocol import Action, Command, Error, Human, Sender, TextIn
from fayd.speech import SpeechSegment

log = logging.getLogger(__name__)

#: Turns waiting behind the current one before new ones are dropped (with a warning).
QUEUE = 8
#: How long heard speech counts as a turn coming (Conversation.busy) if none follows: the
#: final utterance comes within the VAD's hangover of a pause.
HEARING_S = 3.0
#: Shown when a turn fails in a way nothing else answered (a model broke mid-turn).
TURN_FAILED = "Sorry, something went wrong with that reply (fayd status says why)."
START_OVER = ("All right, let's start again.", "好的，我们重新开始吧。")


@dataclass(frozen=True)
class Spoken:
    """An utterance cut by the device's VAD; ``clean`` tidies its transcript (the wake
    phrase Whisper also wrote down); ``early`` takes the turn back if its speaker goes on."""

    speech: SpeechSegment
    clean: Callable[[str], str] | None = None
    early: EarlyEnd | None = None


@dataclass(frozen=True)
class Announcement:
    """Something fayd says first (a reminder, a timer's alarm): spoken between turns, never
    over one; ``tone`` plays a chime before it."""

    text: str
    user: str
    action: Action | None = None
    tone: bool = False


@dataclass(frozen=True)
class Typed:
    """Typed text whose reply's sentences ``said`` is also told, as they are delivered
    (the OpenAI door streams them to its client)."""

    text: TextIn
    said: Callable[[str], None]


Utterance = Spoken | TextIn | Typed | Announcement


class Conversation:
    def __init__(
        self,
        device: str,
        chat: Chat,
        engines: AgentEngines,
        sender: Sender,
        gates: Gates,
        user: Callable[[], str],
        output: Callable[[], ReplyOutput],
        understanding: Understanding | None = None,
        door: bool = False,
        before_turn: Callable[[], Awaitable[float]] | None = None,
        language: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.device = device
        #: A door's conversation (fayd say, the OpenAI endpoint, an avatar): its work gives
        #: way to the devices' (fayd.precedence).
        self.door = door
        #: Awaited before each turn (a door's: until the devices' turns are done); the
        #: seconds it waited go into the turn's timings as ``room_wait_ms``.
        self.before_turn = before_turn
        self._waited_s = 0.0
        self.chat = chat
        self.understanding = understanding
        self.engines = engines
        self.sender = sender
        self.gates = gates
        self.ears = Transcriber(device, engines.asr, gates, language)
        self.endpoint = Endpointer(
            device, self.ears, self._judge, lambda s, c, e: self.submit(Spoken(s, c, e))
        )
        self._user = user
        self._output = output
        self.pending: asyncio.Queue[tuple[Utterance, asyncio.Future[Turn | None] | None]]
        self.pending = asyncio.Queue(QUEUE)
        self.current: asyncio.Task[Any] | None = None
        self.worker: asyncio.Task[None] | None = None
        self.reply_stream = 0
        self.generating = False
        #: When the device will have played all it was sent (time.monotonic()).
        self.playing_until = 0.0
        self.interrupted = 0
        self.dropped_turns = 0
        self._listening = False
        self._listening_at = 0.0
        #: When the user last said something here (time.monotonic(); 0: never).
        self.heard_at = 0.0

    def _judge(self, text: str) -> Verdict:
        """Whether the words so far sound finished (fayd.agent.turn_end)."""
        decision = self.understanding.glance(text) if self.understanding else None
        return judge(text, decision)

    @property
    def speaking(self) -> bool:
        """Generating a reply, or the device is still playing one."""
        return self.generating or time.monotonic() < self.playing_until

    def submit(self, item: Utterance) -> None:
        """Queue a turn; when too many wait already, it is dropped with a warning."""
        self._start_worker()
        try:
            self.pending.put_nowait((item, None))
        except asyncio.QueueFull:
            self.dropped_turns += 1
            if self.dropped_turns in (1, 10, 100) or self.dropped_turns % 1000 == 0:
                log.warning(
                    "device %s: too many waiting turns, %d dropped so far",
                    self.device,
                    self.dropped_turns,
                )

    async def ask(self, item: Utterance) -> Turn | None:
        """Queue a turn and wait for it (None: interrupted, failed or nothing heard)."""
        self._start_worker()
        done: asyncio.Future[Turn | None] = asyncio.get_running_loop().create_future()
        await self.pending.put((item, done))
        return await done

    @property
    def busy(self) -> bool:
        """Hearing an utterance or answering one (not only playing the last reply). Heard
        speech that never became a turn (no wake word, nothing recognisable) stops counting
        after HEARING_S."""
        running = self.current is not None and not self.current.done()
        hearing = self._listening and time.monotonic() - self._listening_at < HEARING_S
        return hearing or running or bool(self.pending.qsize())

    @property
    def free(self) -> bool:
        """No turn running or waiting, nothing being heard or played: a gap to speak in."""
        running = self.current is not None and not self.current.done()
        return not (self.speaking or self._listening or running or self.pending.qsize())

    def listening(self) -> None:
        """Tell the device fayd hears speech (Fay's ``log`` state), once an utterance."""
        if not self._listening:
            self._listening = True
            self._listening_at = time.monotonic()
            self.sender.send(self.device, Human(key="log", value="listening"))

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

    def _start_worker(self) -> None:
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._run(), name=f"device:{self.device}")

    async def _run(self) -> None:
        if self.door:
            for_a_door()  # this task's turns, and the tasks they start
        while True:
            item, done = await self.pending.get()
            if self.before_turn is not None:
                try:
                    self._waited_s = await self.before_turn()
                except Exception:  # the turn still runs: a worker that died would hang ask()
                    log.exception("device %s: waiting for the room failed", self.device)
                    self._waited_s = 0.0
            try:
                turn = await self.run_turn(lambda i=item: self.turn(i))
            except asyncio.CancelledError:
                if done is not None and not done.done():
                    done.cancel()
                raise
            if done is not None and not done.done():
                done.set_result(turn)

    async def run_turn(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run one turn as the current, interruptible task; its failure is reported, not
        raised, so the conversation goes on."""
        self.current = asyncio.create_task(make())
        # Background model work (memory extraction…) waits for the whole turn, not only for
        # the model's part: speech recognition and synthesis need the CPU as much.
        llm = self.engines.llm
        held = llm.user_turn() if llm is not None else contextlib.nullcontext()
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
            # The device shows (or says) words, not only an error frame: never silence.
            self.sender.send(self.device, Human(key="text", text=TURN_FAILED, is_first=True))
            self.sender.send(self.device, Human(key="text", text="", is_end=True))
            return None
        return self.current.result()

    async def turn(self, item: Utterance) -> Turn | None:
        """The one way a turn runs: hear it (speech) → the reply, spoken and shown."""
        if isinstance(item, Announcement):
            return await self.announce(item)
        user = self._user()
        self.heard_at = time.monotonic()
        timings = {}
        early = item.early if isinstance(item, Spoken) else None
        if early is not None:
            if early.withdrawn:  # its speaker went on: the next utterance carries it
                return None
            early.task = asyncio.current_task()
        if isinstance(item, Spoken):
            try:
                question, timings["asr_ms"] = await self.ears.heard(item.speech)
            except NotHeard:
                return await self.not_heard(user)
            question = item.clean(question) if item.clean else question
            if not question:
                return None
            source = "voice"
        else:
            typed = item.text if isinstance(item, Typed) else item
            question, user, source = typed.text, typed.user or user, "text"
        turn = Turn(user=user, device=self.device, question=question, source=source)
        if early is not None:
            early.turn, turn.ended_by = turn, early.verdict
            if early.waited_ms:
                timings["endpoint_wait_ms"] = early.waited_ms
        if isinstance(item, Typed):
            turn.said = item.said
        turn.timings.update(timings)
        if self._waited_s:
            turn.timings["room_wait_ms"] = round(self._waited_s * 1000)
        ended = "failed"
        with logfields.bind(device=self.device, user=user, turn_id=turn.id):
            try:
                answered = await self.answer(turn)
                ended = ""
                return answered
            except asyncio.CancelledError:
                ended = "interrupted"
                raise
            finally:
                log_turn(turn, ended)

    async def answer(self, turn: Turn) -> Turn:
        """Understand the question (router, skills: docs/understanding.md) and reply: a
        skill's words, or the model's (chit-chat); "stop" stops the device, no reply."""
        self._listening = False
        self.sender.send(self.device, Human(key="log", value="thinking"))
        if self.understanding is None:
            return await self.speak(turn)
        decision = self.understanding.decide(turn.question, turn.user, self.device)
        turn.decision = decision.explain()
        turn.mark("understood_ms")
        if decision.intent == "stop":
            self.sender.send(self.device, Command("stop", {"reason": "asked"}))
            self.playing_until = 0.0
            await self.chat.record(turn, {})
            return turn
        if decision.intent == "reset":
            await self.chat.start_over(turn.user, self.device)
            outcome: Outcome | None = Outcome(START_OVER[decision.lang == "zh"])
        else:
            turn.acted = decision.intent != "chitchat"
            outcome = await self.understanding.act(decision, turn.question, turn.user, self.device)
        if outcome is None:
            return await self.speak(turn)
        return await self.say(turn, outcome)

    async def say(self, turn: Turn, outcome: Outcome) -> Turn:
        """Deliver a skill's reply (no model: no model gate to wait for) and store it."""
        self.reply_stream = (self.reply_stream + 1) % 65536
        output = self._output()
        self.generating = True
        try:
            said = _sentences(turn, outcome.say)
            await output.deliver(turn, said, self.reply_stream, outcome.action)
        finally:
            self.generating = False
        self._played(turn, output)
        await self.chat.record(turn, {"skill": outcome.detail}, outcome.importance)
        return turn

    async def announce(self, item: Announcement) -> Turn:
        """fayd speaks first: the words (and a chime) delivered like a reply; not kept in
        the conversation's history (the announcement's own row says it was spoken)."""
        turn = Turn(user=item.user, device=self.device, question="", source="announce")
        self.reply_stream = (self.reply_stream + 1) % 65536
        output = self._output()
        self.generating = True
        try:
            said = _sentences(turn, item.text)
            await output.deliver(turn, said, self.reply_stream, item.action, tone=item.tone)
        finally:
            self.generating = False
        self._played(turn, output)
        return turn

    async def not_heard(self, user: str) -> Turn:
        """Speech that could not be recognised: the device is told why (spoken when TTS
        works), and nothing is kept in the conversation (nothing was understood)."""
        self._listening = False
        turn = Turn(user=user, device=self.device, question="", source="voice")
        self.reply_stream = (self.reply_stream + 1) % 65536
        output = self._output()
        self.generating = True
        try:
            await output.deliver(turn, _sentences(turn, NOT_HEARD), self.reply_stream)
        finally:
            self.generating = False
        self._played(turn, output)
        return turn

    async def speak(self, turn: Turn) -> Turn:
        """Run the model for ``turn`` and deliver its reply to the device."""
        self.reply_stream = (self.reply_stream + 1) % 65536
        output = self._output()
        async with self.gates.llm:
            self.generating = True
            try:
                await output.deliver(turn, self.chat.reply(turn), self.reply_stream)
            finally:
                self.generating = False
        self._played(turn, output)
        return turn

    def _played(self, turn: Turn, output: ReplyOutput) -> None:
        if "first_audio_ms" in turn.timings:
            first_audio = turn.started + turn.timings["first_audio_ms"] / 1000
            self.playing_until = first_audio + output.audio_s


async def _sentences(turn: Turn, text: str) -> AsyncIterator[str]:
    """A skill's fixed words, sentence by sentence (each is spoken as it is synthesised)."""
    splitter = SentenceSplitter()
    for sentence in [*splitter.feed(text), *filter(None, [splitter.flush()])]:
        turn.mark("llm_first_sentence_ms")
        turn.sentences.append(sentence)
        yield sentence
