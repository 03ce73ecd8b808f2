"""The agent's entry point. Every turn runs here — a device's speech or typed text, ``fayd
say``/``chat`` and the API alike — on that device's :class:`Conversation`, one at a time and
in order; ``fayd say`` without a device talks on a conversation of its own ("cli") whose
frames go nowhere. The device hub hands it utterances and barge-ins through the methods of
its Listener port (``fayd.devices.ports``); replies leave through the Sender."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from fayd.agent.chat import Chat
from fayd.agent.conversation import Announcement, Conversation, Typed
from fayd.agent.expression import ActionRules
from fayd.agent.listening import Gates
from fayd.agent.output import ReplyOutput
from fayd.agent.ports import CLI, AgentEngines, Devices
from fayd.agent.turn import Turn
from fayd.agent.understand.router import is_stop
from fayd.agent.understanding import Understanding
from fayd.precedence import ROOM_POLL_S, BusyStretch
from fayd.protocol import Action, Outgoing, Sender, TextIn
from fayd.speech import Ending, SpeechSegment


class _Nowhere:
    """The CLI's conversation has no device: its frames are not sent."""

    def send(self, device: str, frame: Outgoing) -> bool:
        return True


class Dialogue:
    def __init__(
        self,
        chat: Chat,
        engines: AgentEngines,
        sender: Sender,
        devices: Devices,
        rules: ActionRules | None,
        default_user: str,
        understanding: Understanding | None = None,
    ) -> None:
        self.chat = chat
        self.understanding = understanding
        self.engines = engines
        self.sender = sender
        self.devices = devices
        self.rules = rules
        self.default_user = default_user
        self.gates = Gates()
        self.conversations: dict[str, Conversation] = {}
        #: Devices outside the registry (an avatar's WebSocket): their sender, and whether
        #: a reply is spoken there (asked at each reply's start).
        self.attached: dict[str, tuple[Sender, Callable[[], bool]]] = {}
        #: How long doors' turns have waited for the room's current busy stretch.
        self._stretch = BusyStretch()

    # --- the Listener port: what the device hub hands over --------------------------------
    def heard(
        self, device: str, speech: SpeechSegment, clean: Callable[[str], str] | None = None
    ) -> None:
        """A final utterance, cut by the device's VAD."""
        self._conversation(device).endpoint.ended(speech, clean)

    def heard_early(
        self,
        device: str,
        speech: SpeechSegment,
        clean: Callable[[str], str] | None = None,
        ending: Ending | None = None,
    ) -> None:
        """The utterance so far, once the speaker paused: transcribed ahead if ASR is idle,
        and with ``ending``, judged whether it is over (fayd.agent.endpointer)."""
        conversation = self._conversation(device)
        conversation.listening()
        conversation.endpoint.paused(speech, ending)

    def resumed(self, device: str) -> None:
        """Speech again after a pause."""
        if (found := self.conversations.get(device)) is not None:
            found.endpoint.resumed()

    def typed(self, device: str, text: TextIn) -> None:
        conversation = self._conversation(device)
        if is_stop(text.text):  # at once, not after the reply it means to stop
            conversation.barge_in()
        conversation.submit(text)

    def interrupt(self, device: str) -> bool:
        """The user talks over the reply: stop it (True when one was playing)."""
        found = self.conversations.get(device)
        return found.barge_in() if found else False

    def speaking(self, device: str) -> bool:
        found = self.conversations.get(device)
        return bool(found and found.speaking)

    def playing_until(self, device: str) -> float:
        """When the device will have played what it was sent (time.monotonic())."""
        found = self.conversations.get(device)
        return found.playing_until if found else 0.0

    # --- fayd speaks first -----------------------------------------------------------------
    def announce(
        self, device: str, user: str, text: str, action: Action | None = None, tone: bool = False
    ) -> None:
        """Say ``text`` on ``device`` between turns (after the one running, if any)."""
        self._conversation(device).submit(Announcement(text, user, action, tone))

    def free(self, device: str) -> bool:
        """Nothing is being said or heard on ``device``: a gap to speak in."""
        found = self.conversations.get(device)
        return found is None or found.free

    def heard_at(self, device: str) -> float:
        """When the user last spoke or typed on ``device`` (time.monotonic(); 0: never)."""
        found = self.conversations.get(device)
        return found.heard_at if found else 0.0

    # --- devices outside the registry --------------------------------------------------------
    def attach(self, device: str, sender: Sender, speaks: Callable[[], bool]) -> None:
        """A virtual device (fayd.doors.avatar): its replies go to ``sender``, spoken when
        ``speaks()``; its turns run the same router, skills and memory as a device's. Call
        before its first turn (a conversation keeps the sender it was made with)."""
        if device in self.conversations and device not in self.attached:
            raise ValueError(f"{device!r} already has a conversation with a registered device")
        self.attached[device] = (sender, speaks)

    # --- the rest ----------------------------------------------------------------------------
    async def say(
        self,
        text: str,
        user: str | None,
        device: str | None,
        said: Callable[[str], None] | None = None,
    ) -> Turn | None:
        """A typed turn from the API (``fayd say``, ``fayd chat``, the OpenAI door): on
        ``device``'s conversation (spoken there) when one is named, else on the CLI's;
        ``said`` is told each sentence of the reply as it is delivered."""
        conversation = self._conversation(device or CLI)
        typed = TextIn(text, user=user)
        return await conversation.ask(Typed(typed, said) if said is not None else typed)

    @property
    def busy(self) -> bool:
        """fayd is answering or speaking somewhere."""
        return any(c.speaking for c in self.conversations.values())

    def status(self, device: str) -> dict[str, Any]:
        found = self.conversations.get(device)
        if found is None:
            return {"speaking": False}
        return {
            "speaking": found.speaking,
            "asr_speculated": found.ears.speculated,
            "interrupted": found.interrupted,
        }

    async def close(self) -> None:
        """Stop every conversation (the daemon is stopping); then let the model's pending
        memory writes finish."""
        for conversation in self.conversations.values():
            await conversation.stop()
        await self.chat.close()

    def _conversation(self, device: str) -> Conversation:
        found = self.conversations.get(device)
        if found is None:
            sender = self.sender if device != CLI else _Nowhere()
            door = device == CLI or device in self.attached
            if device in self.attached:
                sender = self.attached[device][0]
            found = Conversation(
                device,
                self.chat,
                self.engines,
                sender,
                self.gates,
                user=lambda: self.devices.user_of(device) or self.default_user,
                output=lambda: self._output(device, sender),
                understanding=self.understanding,
                door=door,
                before_turn=self._room_done if door else None,
                language=lambda: self.devices.language_of(device),
            )
            self.conversations[device] = found
        return found

    async def _room_done(self) -> float:
        """Until no device's conversation hears or answers an utterance (at most
        ROOM_WAIT_S a busy stretch: fayd.precedence.BusyStretch): a door's turn (fayd say,
        the OpenAI endpoint, an avatar) waits for the person in the room, whose answer
        needs the CPU at once. A turn's state has many writers, so this looks again every
        ROOM_POLL_S, and only while a door's turn waits on a device's."""
        started, waited = time.monotonic(), False
        while self._stretch.wait(self.room_busy(), time.monotonic()):
            waited = True
            await asyncio.sleep(ROOM_POLL_S)
        return time.monotonic() - started if waited else 0.0

    def room_busy(self) -> bool:
        """A device's conversation hears or answers an utterance (fayd.precedence)."""
        return any(c.busy for c in list(self.conversations.values()) if not c.door)

    def _output(self, device: str, sender: Sender) -> ReplyOutput:
        if device in self.attached:
            speaks = self.attached[device][1]()
            tts = self.engines.tts if speaks else None
            return ReplyOutput(sender, tts, device, None, self.rules, speaker=speaks)
        speaker = device != CLI and self.devices.has_role(device, "speaker")
        tts = self.engines.tts if speaker else None
        rate = self.devices.audio_out_rate(device)
        return ReplyOutput(sender, tts, device, rate, self.rules, speaker=speaker)
