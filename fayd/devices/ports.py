"""What the device side hands voice and text to, and the voice models it is given, as plain
types and Protocols: ``fayd.service`` wires in the agent (``fayd.agent.Dialogue``) and the
models it loaded; nothing here imports them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fayd.protocol import Ack, Error, Hello, TextIn
from fayd.speech import Ending, SpeechSegment, WakeDetector


class Answers(Protocol):
    """Told of every answer a device sends (an ``ack``, an ``error``, a ``hello`` after a
    restart), decoded, with its raw payload for the fields a frame type does not keep:
    its settings applied, a firmware update's steps, a carer's device taking an alert."""

    def device_answered(self, device: str, frame: Ack | Error | Hello, payload: bytes) -> None: ...


class Listener(Protocol):
    """Takes what devices say and tells whether a device is being answered."""

    def heard(
        self, device: str, speech: SpeechSegment, clean: Callable[[str], str] | None = None
    ) -> None:
        """A final utterance; ``clean`` tidies its transcript (removes the wake phrase)."""
        ...

    def heard_early(
        self,
        device: str,
        speech: SpeechSegment,
        clean: Callable[[str], str] | None = None,
        ending: Ending | None = None,
    ) -> None:
        """The utterance so far, when the speaker paused (it may still go on); ``ending``
        lets the listener end the utterance there (semantic endpointing)."""
        ...

    def resumed(self, device: str) -> None:
        """Speech again after a pause: the speaker was not done."""
        ...

    def typed(self, device: str, text: TextIn) -> None: ...

    def interrupt(self, device: str) -> bool:
        """The user started talking over the reply (barge-in); True if one was stopped."""
        ...

    def speaking(self, device: str) -> bool:
        """A reply to this device is being made or played."""
        ...

    def playing_until(self, device: str) -> float:
        """When the device will have played what it was sent (time.monotonic())."""
        ...


@dataclass(frozen=True)
class VoiceModels:
    """The VAD model file (each device gets its own VAD: its state is per stream), and a
    maker of wake-word detectors (one per device; None = no wake word)."""

    vad_path: Path | None = None
    wake: Callable[..., WakeDetector] | None = None
