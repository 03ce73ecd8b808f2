"""The device hub: decodes uplink frames, keeps the registry, and runs each device's
conversation (voice or text) on its own task. Transports hand frames in; replies go out
through a Sender. A bad frame gets an error frame back to its device, and nothing else."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from fayd.agent import Agent
from fayd.agent.engines import Engines
from fayd.agent.expression import ActionRules
from fayd.config import Config
from fayd.devices.conversation import Conversation, Gates
from fayd.devices.reply import ReplyOutput, Sender
from fayd.devices.voice import ASR_RATE, VoiceInput
from fayd.errors import ProtocolError
from fayd.protocol import (
    Ack,
    AudioChunk,
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
    onset: Any = None  # SpeechOnset, for barge-in while fayd speaks
    conversation: Conversation | None = None

    @property
    def user(self) -> str | None:
        return self.hello.user if self.hello else None

    def has_role(self, role: str) -> bool:
        return bool(self.hello and role in self.hello.roles)

    @property
    def speaking(self) -> bool:
        return bool(self.conversation and self.conversation.speaking)


class DeviceHub:
    def __init__(
        self,
        cfg: Config,
        store: Store,
        engines: Engines,
        agent: Agent,
        sender: Sender,
        rules: ActionRules | None = None,
    ) -> None:
        self.cfg = cfg
        self.rules = rules
        self.store = store
        self.engines = engines
        self.agent = agent
        self.sender = sender
        self.devices: dict[str, DeviceState] = {}
        self.inbox: asyncio.Queue[tuple[str, str, bytes]] = asyncio.Queue(4096)
        self.gates = Gates()
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
            conversations = [d.conversation for d in self.devices.values() if d.conversation]
            await asyncio.gather(*(c.stop() for c in conversations), return_exceptions=True)

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
            self.conversation(state).submit("text", frame)
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
            self._open_voice(state)
        assert state.voice is not None
        conversation = self.conversation(state)
        if state.onset is not None:
            if not conversation.speaking:
                state.onset.reset()
            elif chunk.pcm and state.onset.accept(state.voice.samples_16k(chunk)):
                conversation.barge_in()
                state.onset.reset()
        for utterance in state.voice.accept(chunk):
            conversation.submit("voice", utterance)

    def _open_voice(self, state: DeviceState) -> None:
        if self.engines.vad_path is None:
            raise ProtocolError("voice is unavailable: the VAD model is missing", "no-model")
        from fayd.speech.vad import SileroVad, SpeechOnset

        speech = self.cfg.speech
        vad = SileroVad(
            self.engines.vad_path,
            sample_rate=ASR_RATE,
            threshold=speech.vad_threshold,
            min_silence_ms=speech.vad_min_silence_ms,
        )
        state.voice = VoiceInput(state.id, vad)
        if self._barge_in_allowed(state):
            state.onset = SpeechOnset(self.engines.vad_path, speech.barge_in_threshold)

    def _barge_in_allowed(self, state: DeviceState) -> bool:
        """Config says on/off; a device can turn it off for itself (caps barge_in=false),
        e.g. when it has no echo cancellation and would hear its own voice."""
        caps = state.hello.caps if state.hello else {}
        return self.cfg.speech.barge_in and caps.get("barge_in", True) is not False

    def conversation(self, state: DeviceState) -> Conversation:
        if state.conversation is None:
            state.conversation = Conversation(
                state.id,
                self.engines,
                self.agent,
                self.sender,
                self.gates,
                user=lambda: state.user or self.cfg.agent.default_user,
                output=lambda: self._output(state),
            )
        return state.conversation

    def _output(self, state: DeviceState) -> ReplyOutput:
        tts = self.engines.tts if state.has_role("speaker") else None
        out_rate = state.hello.audio_out.rate if state.hello and state.hello.audio_out else None
        return ReplyOutput(self.sender, tts, state.id, out_rate, self.rules)

    async def load_known(self) -> None:
        """Devices seen before this start keep their roles until they say hello again."""
        for row in await self.store.run(records.list_devices):
            try:
                known = {k: v for k, v in row.items() if v is not None}
                hello = Hello.from_dict({**known, "device": row["id"]})
            except ProtocolError:
                continue
            self._state(row["id"]).hello = hello
