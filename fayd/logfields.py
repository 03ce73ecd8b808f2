"""Structured fields on log records: the device, the user and the turn a line is about.

Set for a stretch of code with :func:`bind` (the hub while it handles a device's frame, a
conversation while a turn runs); tasks started meanwhile inherit them (contextvars). A call
may also pass them itself: ``log.info(..., extra={"device": d})``. :class:`FieldsFilter`
copies them onto the record as ``DEVICE``, ``USER`` and ``TURN_ID``, which systemd-python's
JournalHandler sends to journald as fields (``journalctl DEVICE=kitchen-1``); upper-case is
what journald takes as a field name."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager

#: record attribute a caller may pass in ``extra`` → the journal field it becomes.
FIELDS = {"device": "DEVICE", "user": "USER", "turn_id": "TURN_ID"}
_current: dict[str, contextvars.ContextVar[str]] = {
    name: contextvars.ContextVar(f"fayd_log_{name}", default="") for name in FIELDS
}


@contextmanager
def bind(**fields: object) -> Iterator[None]:
    """Within the block (and tasks it starts), records carry these fields."""
    tokens = [(_current[k], _current[k].set(str(v))) for k, v in fields.items() if v]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def current() -> dict[str, str]:
    """The journal fields bound here and now (for a record, or a test)."""
    return {FIELDS[k]: v.get() for k, v in _current.items() if v.get()}


class FieldsFilter(logging.Filter):
    """Puts DEVICE, USER and TURN_ID on each record: its own ``extra`` first, else what is
    bound. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, field in FIELDS.items():
            value = getattr(record, name, "") or _current[name].get()
            if value and not hasattr(record, field):
                setattr(record, field, str(value))
        return True
