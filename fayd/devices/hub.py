"""The device hub: decodes uplink frames, keeps the registry, and runs each device's
conversation (voice or text) on its own task. Transports hand frames in; replies go out
through a Sender. A bad frame gets an error frame back to its device (at most a burst of
ERROR_BURST, then one a second per device), and nothing else.

Per-device settings (``fayd devices set``) live in SQLite; the hub reads them at start and
polls for changes every SETTINGS_POLL_S (a query only when the database files changed), so
the CLI works with or without the daemon."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fayd.agent import Agent
from fayd.agent.engines import Engines
from fayd.agent.expression import ActionRules
from fayd.config import Config
from fayd.devices.conversation import Conversation, Gates
from fayd.devices.reply import ReplyOutput, Sender
from fayd.devices.sensors import EventMemory, EventWriter
from fayd.devices.voice import ASR_RATE, VoiceInput
from fayd.devices.wake import WakeGate
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
from fayd.store import devices_records as reg
from fayd.store.devices_records import DeviceSettings
from fayd.transport.beat import until_beat

if TYPE_CHECKING:
    from fayd.memory import Memory

log = logging.getLogger(__name__)

#: Error frames a device gets at once for bad frames; then one per ERROR_EVERY_S.
ERROR_BURST = 10
ERROR_EVERY_S = 1.0
SETTINGS_POLL_S = 2.0
#: Settings are read at least this often, even when the database files look unchanged.
SETTINGS_FULL_S = 30.0
#: The hub counts as busy (voice or text in progress) this long after such a frame.
BUSY_S = 10.0
#: Sensor event sequence numbers are SQLite integers (signed 64-bit).
SEQ_RANGE = range(-(2**63), 2**63)
#: The settings a device is told about (``command`` "settings"); ``user`` stays in fayd.
DEVICE_SIDE = ("wake", "wake_threshold", "volume", "barge_in")


def db_files(path: Path) -> tuple[Any, ...]:
    """(mtime, size) of an SQLite database and its WAL: a write changes one of them."""
    out: list[Any] = []
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


@dataclass
class ErrorBudget:
    """A token bucket: a flood of garbage gets a few error frames, not one per frame."""

    tokens: float = ERROR_BURST
    at: float = 0.0
    suppressed: int = 0

    def take(self, now: float) -> bool:
        self.tokens = min(ERROR_BURST, self.tokens + (now - self.at) / ERROR_EVERY_S)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.suppressed += 1
        return False


@dataclass
class DeviceState:
    """What the hub knows of a device while the daemon runs."""

    id: str
    hello: Hello | None = None
    voice: VoiceInput | None = None
    onset: Any = None  # SpeechOnset, for barge-in while fayd speaks
    wake: WakeGate | None = None
    conversation: Conversation | None = None
    settings: DeviceSettings = field(default_factory=DeviceSettings)
    errors: ErrorBudget = field(default_factory=ErrorBudget)

    @property
    def user(self) -> str | None:
        """The registry's setting wins over what the device says in its hello."""
        if self.settings.user:
            return self.settings.user
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
        memory: Memory | None = None,
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
        #: Voice models change one at a time (a first audio frame, a settings change).
        self._models = asyncio.Lock()
        self._budgets: dict[str, ErrorBudget] = {}
        self.dropped = 0
        self.errors_sent = 0
        self.errors_suppressed = 0
        self.settings: dict[str, DeviceSettings] = {}
        self.settings_rev = 0
        self._last_talk = -BUSY_S  # time.monotonic() of the last audio or text frame
        self.memory = EventMemory(store, memory, cfg.agent.default_user) if memory else None
        self.events = EventWriter(store, sender, self.memory.wake if self.memory else None)

    async def inbound(self, device: str, kind: str, payload: bytes) -> None:
        """Called by a transport for every uplink frame; never blocks the transport."""
        try:
            self.inbox.put_nowait((device, kind, payload))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning("device inbox full: %d frames dropped so far", self.dropped)

    async def run(self) -> None:
        helpers = [self.events.run(), self._poll_settings()]
        if self.memory is not None:
            helpers.append(self.memory.run())
        tasks = [asyncio.create_task(h) for h in helpers]
        try:
            while True:
                for task in tasks:  # a helper that died takes the hub down (and back up)
                    if task.done():
                        task.result()
                device, kind, payload = await self.inbox.get()
                await self.handle(device, kind, payload)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            conversations = [d.conversation for d in self.devices.values() if d.conversation]
            await asyncio.gather(*(c.stop() for c in conversations), return_exceptions=True)

    async def handle(self, device: str, kind: str, payload: bytes) -> None:
        try:
            frame = decode(kind, payload)
            await self._dispatch(self._state(device), frame)
        except ProtocolError as exc:
            self._refuse(device, kind, exc)
        except RecursionError:  # JSON nested too deep for the decoder
            self._refuse(device, kind, ProtocolError(f"{kind} frame is nested too deeply"))

    def _refuse(self, device: str, kind: str, exc: ProtocolError) -> None:
        budget = self._budget(device)
        if kind == Error.KIND:  # never answer an error with an error (only log it)
            if budget.take(time.monotonic()):
                log.warning("device %s sent a bad error frame: %s", device, exc)
            else:
                self.errors_suppressed += 1
            return
        if not budget.take(time.monotonic()):
            self.errors_suppressed += 1
            return
        more = f" ({budget.suppressed} more bad frames not answered)" if budget.suppressed else ""
        budget.suppressed = 0
        log.warning("device %s sent a bad %s frame: %s%s", device, kind, exc, more)
        self.errors_sent += 1
        self.sender.send(device, Error(exc.code, str(exc)))

    def _budget(self, device: str) -> ErrorBudget:
        state = self.devices.get(device)
        if state is not None:
            return state.errors
        if len(self._budgets) > 1024:  # ids that never said anything valid
            self._budgets.clear()
        return self._budgets.setdefault(device, ErrorBudget())

    def _state(self, device: str) -> DeviceState:
        if device not in self.devices:
            state = DeviceState(device, settings=self.settings.get(device, DeviceSettings()))
            if device in self._budgets:
                state.errors = self._budgets.pop(device)
            self.devices[device] = state
        return self.devices[device]

    @property
    def busy(self) -> bool:
        """A device is talking to fayd, or fayd to it (for the loop lag monitor)."""
        recent = time.monotonic() - self._last_talk < BUSY_S
        return recent or any(state.speaking for state in self.devices.values())

    async def _dispatch(self, state: DeviceState, frame: Any) -> None:
        if isinstance(frame, AudioChunk | TextIn):
            self._last_talk = time.monotonic()
        if isinstance(frame, AudioChunk):
            if state.voice is None:
                await self._open_voice(state)
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
            if frame.seq not in SEQ_RANGE:
                raise ProtocolError(f"event seq {frame.seq} is not a signed 64-bit integer")
            await self.events.submit(state.id, frame)  # acked by the writer after its commit
        elif isinstance(frame, Error):
            if state.errors.take(time.monotonic()):  # a flood of them is not logged
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
        self._tell_settings(state)

    def _on_audio(self, state: DeviceState, chunk: AudioChunk) -> None:
        assert state.voice is not None
        conversation = self.conversation(state)
        samples = state.voice.samples_16k(chunk) if chunk.pcm else None
        if state.wake is not None:
            # With a wake word, it alone interrupts: the device may hear its own voice.
            if samples is not None and state.wake.feed(samples) and conversation.speaking:
                conversation.barge_in()
        elif state.onset is not None:
            if not conversation.speaking:
                state.onset.reset()
            elif samples is not None and state.onset.accept(samples):
                conversation.barge_in()
                state.onset.reset()
        admitted = state.wake is None or state.wake.admits(conversation.playing_until)
        if admitted and (early := state.voice.provisional()) is not None:
            conversation.speculate(early)
        for utterance in state.voice.accept(chunk, samples):
            if state.wake is not None and not state.wake.admits(conversation.playing_until):
                log.info("device %s: speech without the wake word, not answered", state.id)
                continue
            conversation.submit("voice", utterance)

    async def _open_voice(self, state: DeviceState) -> None:
        if self.engines.vad_path is None:
            raise ProtocolError("voice is unavailable: the VAD model is missing", "no-model")
        from fayd.speech.vad import SileroVad

        speech = self.cfg.speech
        # Loading models takes tens of ms (the first sherpa-onnx import far more): on a
        # worker, so other devices' frames and the loop's timers are not held up meanwhile.
        vad = await asyncio.to_thread(
            SileroVad,
            self.engines.vad_path,
            sample_rate=ASR_RATE,
            threshold=speech.vad_threshold,
            min_silence_ms=speech.vad_min_silence_ms,
        )
        async with self._models:
            state.voice = VoiceInput(state.id, vad)
            await self._update_onset(state)
            await self._update_wake(state)

    def _barge_in_allowed(self, state: DeviceState) -> bool:
        """The device's setting (``fayd devices set D barge_in=on|off``) decides when set;
        otherwise config says on/off and a device can turn it off for itself (caps
        barge_in=false), e.g. when it has no echo cancellation and would hear its own voice."""
        if state.settings.barge_in is not None:
            return state.settings.barge_in
        caps = state.hello.caps if state.hello else {}
        return self.cfg.speech.barge_in and caps.get("barge_in", True) is not False

    # --- the registry's settings --------------------------------------------------------
    async def _poll_settings(self) -> None:
        seen: tuple[Any, ...] | None = None
        asked = time.monotonic()
        while True:
            await asyncio.sleep(until_beat(SETTINGS_POLL_S))  # with the other pollers
            # Settings change only by a write to the database files: while their sizes and
            # times stay the same, skip the query (and waking the store's thread, which an
            # idle daemon should not). Asked anyway every SETTINGS_FULL_S, in case a write
            # came within the file clock's resolution of the last look.
            files = db_files(self.store.path)
            if files == seen and time.monotonic() - asked < SETTINGS_FULL_S:
                continue
            try:
                await self.reload_settings()
                seen, asked = files, time.monotonic()
            except Exception as exc:  # a busy or broken disk: try again next time
                log.warning("could not read device settings: %s", exc)

    async def reload_settings(self) -> None:
        """Apply settings changed since the last look (by ``fayd devices set``)."""
        self.settings_rev, changed = await self.store.run(reg.settings_since, self.settings_rev)
        for device, settings in changed.items():
            self.settings[device] = settings
            state = self.devices.get(device)
            if state is None or state.settings == settings:
                continue
            old, state.settings = state.settings, settings
            log.info("device %s: settings %s", device, settings.to_dict() or "cleared")
            wake_changed = (old.wake, old.wake_threshold) != (
                settings.wake,
                settings.wake_threshold,
            )
            async with self._models:
                if old.barge_in != settings.barge_in and state.voice is not None:
                    await self._update_onset(state)
                if wake_changed and state.voice is not None:
                    await self._update_wake(state)
            if state.hello is not None:
                self._tell_settings(state)

    async def _update_onset(self, state: DeviceState) -> None:
        if not self._barge_in_allowed(state):
            state.onset = None
        elif state.onset is None and self.engines.vad_path is not None:
            from fayd.speech.vad import SpeechOnset

            path, threshold = self.engines.vad_path, self.cfg.speech.barge_in_threshold
            state.onset = await asyncio.to_thread(SpeechOnset, path, threshold)

    def _wake_wanted(self, state: DeviceState) -> bool:
        """The device's setting (``wake=on|off``) decides when set; else config's wake word."""
        if self.engines.wake is None:
            return False
        if state.settings.wake is not None:
            return state.settings.wake
        return bool(self.cfg.speech.wake_word)

    async def _update_wake(self, state: DeviceState) -> None:
        """Give the device a wake word detector, or take it away, as its settings say."""
        new = None
        if self._wake_wanted(state):
            assert self.engines.wake is not None
            threshold = state.settings.wake_threshold
            options = {"threshold": threshold} if threshold else {}
            # Built on a worker (TFLite), then swapped in at once: no frame sees no detector.
            new = WakeGate(await asyncio.to_thread(self.engines.wake, **options))
        old, state.wake = state.wake, new
        if old is not None:
            old.close()
        if new is not None:
            self.conversation(state).clean_question = new.without_phrase

    def _tell_settings(self, state: DeviceState) -> None:
        """The device-side settings (volume, wake word) as a ``settings`` command."""
        args = {k: v for k, v in state.settings.to_dict().items() if k in DEVICE_SIDE}
        if args:
            self.sender.send(state.id, Command("settings", args))

    def live_status(self, device: str) -> dict[str, Any]:
        """What ``fayd status`` adds to a device's stored row: live state and counters."""
        state = self.devices.get(device)
        if state is None:
            return {"speaking": False}
        out: dict[str, Any] = {
            "speaking": state.speaking,
            "user": state.user,
            "settings": state.settings.to_dict(),
            "errors_suppressed": state.errors.suppressed,
        }
        if state.voice is not None:
            out["audio"] = state.voice.counters()
        if state.wake is not None:
            out["wake_detections"] = state.wake.detections
        if state.conversation is not None:
            out["asr_speculated"] = state.conversation.speculated
            out["interrupted"] = state.conversation.interrupted
        return out

    def stats(self) -> dict[str, Any]:
        """Frame counters for ``fayd status``."""
        memory = self.memory
        return {
            "inbox_dropped": self.dropped,
            "errors_sent": self.errors_sent,
            "errors_suppressed": self.errors_suppressed,
            "events_stored": self.events.stored,
            "events_replayed": self.events.replays,
            "events_remembered": memory.remembered if memory else 0,
        }

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
        """Devices seen before this start keep their roles until they say hello again;
        the registry's settings apply from the start."""
        await self.reload_settings()
        for row in await self.store.run(records.list_devices):
            try:
                known = {k: v for k, v in row.items() if v is not None}
                hello = Hello.from_dict({**known, "device": row["id"]})
            except ProtocolError:
                continue
            self._state(row["id"]).hello = hello
