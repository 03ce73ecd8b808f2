"""The one port frames leave by: whatever can send a frame to a device (the MQTT link, a
serial link, the router that picks between them, a test's list)."""

from __future__ import annotations

from typing import Protocol


class Sender(Protocol):
    def send(self, device: str, frame: object) -> bool:
        """Queue ``frame`` for ``device``; False when it was dropped (a full queue)."""
        ...
