"""The device hub: decodes uplink frames and hands each to whoever owns it — hellos and
presence to the registry, audio to the microphones, typed text to the Listener (the agent),
sensor events to the event writer. Transports hand frames in; nothing here blocks them. A
bad frame gets an error frame back to its device (at most a burst, then one a second per
device: fayd.protocol.budget.ErrorBudget), and nothing else."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
import time
from typing import Any

from fayd import logfields
from fayd.auth import RESERVED_IDS
from fayd.beat import Pulse, until_beat
from fayd.devices.microphones import Microphones
from fayd.devices.ports import Answers, Listener
from fayd.devices.registry import DeviceRegistry, DeviceState
from fayd.devices.sensors import EventWriter
from fayd.errors import ProtocolError, StoreError
from fayd.protocol import (
    Ack,
    AudioChunk,
    Error,
    Heartbeat,
    Hello,
    Human,
    Presence,
    Sender,
    SensorEvent,
    TextIn,
    check_device_id,
    decode,
    is_device_id,
)
from fayd.protocol.text import shown
from fayd.store import Store, records

log = logging.getLogger(__name__)

#: The hub counts as busy (voice or text in progress) this long after such a frame.
BUSY_S = 10.0
#: Frames waiting for the hub before new ones are dropped (with a warning).
INBOX = 4096
#: Shown to a device whose speech cannot even be cut into utterances (no VAD model).
NO_VAD = "I can't hear you: my voice detection isn't working (fayd status says why)."
#: The hub beats at least this often (fayd.beat.Pulse), also when no frame comes.
HEARTBEAT_S = 30.0


class DeviceHub:
    def __init__(
        self,
        store: Store,
        registry: DeviceRegistry,
        microphones: Microphones,
        listener: Listener,
        events: EventWriter,
        sender: Sender,
    ) -> None:
        self.store = store
        self.registry = registry
        self.microphones = microphones
        self.listener = listener
        self.events = events
        self.sender = sender
        self.inbox: asyncio.Queue[tuple[str, str, bytes]] = asyncio.Queue(INBOX)
        self.dropped = 0
        self.errors_sent = 0
        self.errors_suppressed = 0
        #: Hellos, presences and heartbeats the disk refused (full, failing): not stored.
        self.write_failures = 0
        self._last_talk = -BUSY_S  # time.monotonic() of the last audio or text frame
        self.pulse = Pulse(HEARTBEAT_S, essential=True)
        #: Told of every answer a device sends: its settings applied (the registry), a
        #: firmware update's steps (OTA), a carer's device taking an alert (fayd.care).
        self.answers: list[Answers] = [registry.acks]

    async def inbound(self, device: str, kind: str, payload: bytes) -> None:
        """Called by a transport for every uplink frame; never blocks the transport."""
        try:
            self.inbox.put_nowait((device, kind, payload))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning("device inbox full: %d frames dropped so far", self.dropped)

    async def run(self) -> None:
        """Forever: one frame after another, in arrival order; it beats between frames
        and, idle, on the shared beat (a frame stuck in handle() stops the beats)."""
        while True:
            self.pulse.beat()
            if not self.inbox.empty():  # a burst's frames: no timer each
                await self.handle(*self.inbox.get_nowait())
                continue
            try:
                async with asyncio.timeout(until_beat(self.pulse.every_s)):
                    device, kind, payload = await self.inbox.get()
            except TimeoutError:
                continue
            await self.handle(device, kind, payload)

    async def handle(self, device: str, kind: str, payload: bytes) -> None:
        with logfields.bind(device=device if is_device_id(device) else ""):
            await self._handle(device, kind, payload)

    async def _handle(self, device: str, kind: str, payload: bytes) -> None:
        try:
            check_device_id(device, "topic")  # the topic's id: a bad one is answered, not dropped
            if device in RESERVED_IDS:  # "cli" would speak as the administrator
                raise ProtocolError(f"{device!r} is not a device id fayd takes", "bad-id")
            frame = decode(kind, payload)
            if isinstance(frame, Ack | Error | Hello):
                for answers in self.answers:
                    answers.device_answered(device, frame, payload)
            state = self.registry.state(device)
            if not state.online and state.hello is not None and not isinstance(frame, Presence):
                # Connected after all: it was taken for offline at a start (its hello came
                # before fayd listened), and this frame is live.
                await self.registry.presence(state.id, True)
            await self._dispatch(state, frame)
        except ProtocolError as exc:
            self._refuse(device, kind, exc)
        except RecursionError:  # JSON nested too deep for the decoder
            self._refuse(device, kind, ProtocolError(f"{kind} frame is nested too deeply"))
        except (StoreError, sqlite3.Error, OSError) as exc:  # a full or failing disk: go on
            self._write_failed(device, kind, exc)

    @property
    def talking(self) -> bool:
        """A device sent voice or text within BUSY_S (for the loop lag monitor)."""
        return time.monotonic() - self._last_talk < BUSY_S

    def stats(self) -> dict[str, Any]:
        """Frame counters for ``fayd status``."""
        return {
            "inbox_dropped": self.dropped,
            "errors_sent": self.errors_sent,
            "errors_suppressed": self.errors_suppressed,
            "write_failures": self.write_failures,
        }

    def _write_failed(self, device: str, kind: str, exc: Exception) -> None:
        """A hello, presence or heartbeat the disk refused: it only updates the registry's
        row (the next one does it again), so it is counted and logged, not retried."""
        self.write_failures += 1
        n = self.write_failures
        if n in (1, 10, 100) or n % 1000 == 0:  # a full disk fails every frame: no flood
            log.error(
                "could not store %s of %s (%d such failures so far): %s",
                kind,
                shown(device[:64]),
                n,
                exc,
            )

    async def _dispatch(self, state: DeviceState, frame: Any) -> None:
        if isinstance(frame, AudioChunk | TextIn):
            self._last_talk = time.monotonic()
        if isinstance(frame, AudioChunk):
            try:
                await self.microphones.audio(state, frame)
            except ProtocolError as exc:
                if exc.code == "no-model" and frame.end:  # once an utterance, in words
                    self.sender.send(state.id, Human(key="text", text=NO_VAD, is_first=True))
                    self.sender.send(state.id, Human(key="text", text="", is_end=True))
                raise
        elif isinstance(frame, Hello):
            await self.registry.hello(state, frame)
        elif isinstance(frame, TextIn):
            # Whom it speaks for is the device's to say, not the frame's (ClaimRefused).
            user = state.ownership.speaker(frame.user)
            self.listener.typed(state.id, dataclasses.replace(frame, user=user))
        elif isinstance(frame, Presence):
            await self.registry.presence(state.id, frame.online)
        elif isinstance(frame, Heartbeat):
            await self.store.run(records.touch_device, state.id)
        elif isinstance(frame, SensorEvent):
            # Acked by the writer after its commit.
            await self.events.submit(state.id, frame, self.pulse.beat)
        elif isinstance(frame, Error):
            if state.errors.take(time.monotonic()):  # a flood of them is not logged
                log.warning("device %s reports %s: %s", state.id, frame.code, frame.message)
        elif isinstance(frame, Ack):
            log.debug("device %s acks %s", state.id, frame.ref)  # told to self.answers
        else:
            raise ProtocolError(f"a device may not send {frame.KIND} frames", "unexpected")

    def _refuse(self, device: str, kind: str, exc: ProtocolError) -> None:
        # Bad topic ids share one budget: a flood of new ones gets no new burst each.
        budget = self.registry.budget(device if is_device_id(device) else "")
        if kind == Error.KIND:  # never answer an error with an error (only log it)
            if budget.take(time.monotonic()):
                log.warning("device %s sent a bad error frame: %s", shown(device[:64]), exc)
            else:
                self.errors_suppressed += 1
            return
        if not budget.take(time.monotonic()):
            self.errors_suppressed += 1
            return
        more = f" ({budget.suppressed} more bad frames not answered)" if budget.suppressed else ""
        budget.suppressed = 0
        log.warning("device %s sent a bad %s frame: %s%s", shown(device[:64]), kind, exc, more)
        self.errors_sent += 1
        self.sender.send(device, Error.of(exc))
