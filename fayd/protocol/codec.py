"""bytes ↔ frames. The kind comes from the transport (MQTT topic, serial packet type)."""

from __future__ import annotations

import json
from typing import Any

from fayd.errors import ProtocolError
from fayd.protocol.audio import AudioChunk
from fayd.protocol.frames import JSON_KINDS, PROTOCOL_VERSION, FieldError
from fayd.protocol.text import BadText, check_strings

#: Largest JSON frame accepted or sent (a reply chunk's Lips track fits easily).
MAX_JSON = 65536
KINDS = (*JSON_KINDS, AudioChunk.KIND)


def kind_of(frame: Any) -> str:
    return frame.KIND


def encode(frame: Any) -> bytes:
    """A frame's wire bytes: JSON (UTF-8, compact) or the binary audio layout."""
    if isinstance(frame, AudioChunk):
        return frame.encode()
    data = json.dumps(frame.to_dict(), ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_JSON:
        raise ProtocolError(f"{frame.KIND} frame of {len(data)} bytes over {MAX_JSON}", "too-large")
    return data


def decode(kind: str, payload: bytes) -> Any:
    """Parse one frame of ``kind``; raises ProtocolError with a code for an error frame."""
    if kind == AudioChunk.KIND:
        return AudioChunk.decode(payload)
    cls = JSON_KINDS.get(kind)
    if cls is None:
        raise ProtocolError(f"unknown frame kind {kind!r} (known: {', '.join(KINDS)})", "unknown")
    if len(payload) > MAX_JSON:
        raise ProtocolError(f"{kind} frame of {len(payload)} bytes over {MAX_JSON}", "too-large")
    try:
        data = json.loads(payload)
    except RecursionError as exc:
        raise ProtocolError(f"{kind} frame is nested too deeply") from exc
    except ValueError as exc:  # not UTF-8, not JSON, an integer of over 4,300 digits
        raise ProtocolError(f"{kind} frame is not UTF-8 JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"{kind} frame must be a JSON object")
    try:
        # Every string, in known fields or not: one that cannot be written stops here.
        check_strings("", data)
    except BadText as exc:
        raise FieldError(f"{kind} frame: field '{exc.field}' {exc.problem}", exc.field) from exc
    version = data.get("v", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"{kind} frame version {version!r} unsupported", "unsupported")
    return cls.from_dict(data)
