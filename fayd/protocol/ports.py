"""The one port frames leave by: whatever can send a frame to a device (the MQTT link, a
serial link, the router that picks between them, a test's list)."""

from __future__ import annotations

from typing import Protocol

from fayd.protocol.audio import AudioChunk
from fayd.protocol.frames import Frame, Human

#: What may be sent to a device: a JSON frame, the reply's text and Action, or audio.
Outgoing = Frame | Human | AudioChunk


class Sender(Protocol):
    def send(self, device: str, frame: Outgoing) -> bool:
        """Queue ``frame`` for ``device``; False when it was dropped (a full queue)."""
        ...
