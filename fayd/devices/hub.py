"""The device hub: decodes uplink frames, keeps the registry, and runs each device's
conversation (voice or text) on its own task. Transports hand frames in; replies go out
through a Sender. A bad frame gets an error frame back to its device, and nothing else."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fayd.agent import Agent, Turn
from fayd.agent.engines import Engines
from fayd.config import Config
from fayd.devices.reply import ReplyOutput, Sender
from fayd.devices.voice import ASR_RATE, VoiceInput
from fayd.errors import ProtocolError
from fayd.protocol import (
    Ack,
    AudioChunk,
    Command,
    Error,
    Heartbeat,
    Hello,
    Presence,
    SensorEvent,
    TextIn,
    decode,
)
from fayd.store import Store, records

log = logging.getLogger(__name__)


@dataclass
class DeviceState:
    """What the hub knows of a device while the daemon runs."""

    id: str
    hello: Hello | None = None
    voice: VoiceInput | None = None
    #: Utterances and typed texts waiting for this device's conversation task.
    pending: asyncio.Queue[tuple[str, Any]] = field(default_factory=lambda: asyncio.Queue(8))
    worker: asyncio.Task[None] | None = None
    reply_stream: int = 0
    speaking: bool = False

    @property
    def user(self) -> str | None:
        return self.hello.user if self.hello else None

    def has_role(self, role: str) -> bool:
        return bool(self.hello and role in self.hello.roles)


class DeviceHub:
    def __init__(
        self, cfg: Config, store: Store, engines: Engines, agent: Agent, sender: Sender
    ) -> None:
        self.cfg = cfg
        self.store = store
        self.engines = engines
        self.agent = agent
        self.sender = sender
        self.devices: dict[str, DeviceState] = {}
        self.inbox: asyncio.Queue[tuple[str, str, bytes]] = asyncio.Queue(4096)
        self.dropped = 0
        self.errors_sent = 0

    async def inbound(self, device: str, kind: str, payload: bytes) -> None:
        """Called by a transport for every uplink frame; never blocks the transport."""
        try:
            self.inbox.put_nowait((device, kind, payload))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning("device inbox full: %d frames dropped so far", self.dropped)

    async def run(self) -> None:
        try:
            while True:
                device, kind, payload = await self.inbox.get()
                await self.handle(device, kind, payload)
        finally:
            workers = [d.worker for d in self.devices.values() if d.worker]
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def handle(self, device: str, kind: str, payload: bytes) -> None:
        try:
            frame = decode(kind, payload)
            await self._dispatch(self._state(device), frame)
        except ProtocolError as exc:
            log.warning("device %s sent a bad %s frame: %s", device, kind, exc)
            if kind != Error.KIND:  # never answer an error with an error
                self.errors_sent += 1
                self.sender.send(device, Error(exc.code, str(exc)))

    def _state(self, device: str) -> DeviceState:
        if device not in self.devices:
            self.devices[device] = DeviceState(device)
        return self.devices[device]

    async def _dispatch(self, state: DeviceState, frame: Any) -> None:
        if isinstance(frame, AudioChunk):
            self._on_audio(state, frame)
        elif isinstance(frame, Hello):
            await self._on_hello(state, frame)
        elif isinstance(frame, TextIn):
            self._enqueue(state, "text", frame)
        elif isinstance(frame, Presence):
            await self.store.run(records.set_presence, state.id, frame.online)
        elif isinstance(frame, Heartbeat):
            await self.store.run(records.touch_device, state.id)
        elif isinstance(frame, SensorEvent):
            stored = await self.store.run(records.record_event, state.id, frame)
            detail = None if stored else "duplicate"
            self.sender.send(state.id, Ack(ref=str(frame.seq), detail=detail))
        elif isinstance(frame, Error):
            log.warning("device %s reports %s: %s", state.id, frame.code, frame.message)
        elif isinstance(frame, Ack):
            log.debug("device %s acks %s", state.id, frame.ref)
        else:
            raise ProtocolError(f"a device may not send {frame.KIND} frames", "unexpected")

    async def _on_hello(self, state: DeviceState, hello: Hello) -> None:
        if hello.device != state.id:
            raise ProtocolError(
                f"hello names device {hello.device!r} on the topic of {state.id!r}", "bad-id"
            )
        state.hello = hello
        await self.store.run(records.upsert_device, hello)
        log.info(
            "device %s: hello (roles %s, fw %s)", hello.device, ",".join(hello.roles), hello.fw
        )

    def _on_audio(self, state: DeviceState, chunk: AudioChunk) -> None:
        if state.voice is None:
            if self.engines.vad_path is None:
                raise ProtocolError("voice is unavailable: the VAD model is missing", "no-model")
            from fayd.speech.vad import SileroVad

            speech = self.cfg.speech
            vad = SileroVad(
                self.engines.vad_path,
                sample_rate=ASR_RATE,
                threshold=speech.vad_threshold,
                min_silence_ms=speech.vad_min_silence_ms,
            )
            state.voice = VoiceInput(state.id, vad)
        for utterance in state.voice.accept(chunk):
            self._enqueue(state, "voice", utterance)

    def _enqueue(self, state: DeviceState, source: str, item: Any) -> None:
        if state.worker is None or state.worker.done():
            state.worker = asyncio.create_task(self._converse(state), name=f"device:{state.id}")
        try:
            state.pending.put_nowait((source, item))
        except asyncio.QueueFull:
            log.warning("device %s: too many waiting turns, dropping one", state.id)

    async def _converse(self, state: DeviceState) -> None:
        """One turn at a time per device, in the order they arrived."""
        while True:
            source, item = await state.pending.get()
            try:
                await self._turn(state, source, item)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("device %s: turn failed", state.id)
                self.sender.send(state.id, Error("turn-failed", "the reply failed; see the log"))

    async def _turn(self, state: DeviceState, source: str, item: Any) -> None:
        user = state.user or self.cfg.agent.default_user
        timings = {}
        if source == "voice":
            question, timings["asr_ms"] = await self.transcribe(item)
            if not question:
                return
        else:
            question = item.text
            user = item.user or user
        turn = Turn(user=user, device=state.id, question=question, source=source)
        turn.timings.update(timings)
        await self.speak(state, turn)

    async def transcribe(self, samples: np.ndarray) -> tuple[str, float]:
        """The utterance's text and how long ASR took (ms)."""
        if self.engines.asr is None:
            log.error("an utterance arrived but the ASR model is missing")
            return "", 0.0
        loop = asyncio.get_running_loop()
        started = loop.time()
        text = await asyncio.to_thread(self.engines.asr.transcribe, samples)
        took = round((loop.time() - started) * 1000, 1)
        log.info("heard (%.0f ms): %r", took, text)
        return text.strip(), took

    async def speak(self, state: DeviceState, turn: Turn) -> Turn:
        """Run the agent for ``turn`` and deliver its reply to the device."""
        tts = self.engines.tts if state.has_role("speaker") else None
        out_rate = state.hello.audio_out.rate if state.hello and state.hello.audio_out else None
        output = ReplyOutput(self.sender, tts, state.id, out_rate)
        state.reply_stream = (state.reply_stream + 1) % 65536
        state.speaking = True
        try:
            await output.deliver(turn, self.agent.reply(turn), state.reply_stream)
        except asyncio.CancelledError:
            self.sender.send(state.id, Command("stop"))
            raise
        finally:
            state.speaking = False
        return turn

    async def load_known(self) -> None:
        """Devices seen before this start keep their roles until they say hello again."""
        for row in await self.store.run(records.list_devices):
            try:
                known = {k: v for k, v in row.items() if v is not None}
                hello = Hello.from_dict({**known, "device": row["id"]})
            except ProtocolError:
                continue
            self._state(row["id"]).hello = hello
