"""Who goes first when the CPU is short: the people in the room before the doors.

A person speaking to a device waits for their answer; an OpenAI client, an avatar page, an
MCP client or ``fayd say`` can wait a little longer. Work done for a door (its turn's
model runs, speech synthesis, embeddings) is marked here while its task runs, and the
daemon's worker pool (fayd.service.workers) runs marked work on threads of a lower CPU
priority. Marking is a context variable, so the tasks a door's turn starts inherit it."""

from __future__ import annotations

import contextvars

#: The longest doors wait for one busy stretch of the devices' turns: doors are not
#: starved by a talkative room, nor held by one that looks busy for too long.
ROOM_WAIT_S = 5.0
#: How often waiting door work looks again (only while a device's turn runs).
ROOM_POLL_S = 0.05

_FOR_A_DOOR: contextvars.ContextVar[bool] = contextvars.ContextVar("fayd_door", default=False)


def for_a_door() -> None:
    """Mark the calling task (and the tasks it starts from now on) as a door's work."""
    _FOR_A_DOOR.set(True)


def is_door_work() -> bool:
    return _FOR_A_DOOR.get()


class BusyStretch:
    """Whether a door should wait for the room now: while it is busy, up to ROOM_WAIT_S
    from the moment it was first seen busy. A room busy for longer (or stuck) holds the
    doors once, not ROOM_WAIT_S for every piece of their work."""

    def __init__(self) -> None:
        self._since: float | None = None

    def wait(self, busy: bool, now: float) -> bool:
        if not busy:
            self._since = None
            return False
        if self._since is None:
            self._since = now
        return now - self._since < ROOM_WAIT_S
