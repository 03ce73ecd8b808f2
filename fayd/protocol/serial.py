"""Serial framing of wire protocol v1: the same frames as MQTT, over a byte stream. No I/O.

A packet on the wire::

    0x00  COBS( code | payload | crc32 )  0x00

- ``code``: one byte naming the frame kind (:data:`KIND_CODES`), where MQTT has the topic.
- ``payload``: the frame's bytes exactly as on MQTT (JSON, or the binary audio layout).
- ``crc32``: CRC-32 (zlib/IEEE 802.3) of ``code | payload``, 4 bytes little-endian.
- COBS (Consistent Overhead Byte Stuffing) removes every 0x00 from the body, so 0x00 only
  ever delimits packets. A receiver that starts mid-stream, or sees line noise, loses at most
  the bytes up to the next 0x00 and is then back in step.

Why a 0x00 on *both* sides: the leading one ends whatever garbage came before (an ESP32
prints its boot log on the same UART), so a valid packet is never glued to garbage; empty
packets between two delimiters are skipped. It costs one byte per packet.

Why COBS + CRC-32: COBS has a fixed, tiny overhead (one byte per 254) even for binary
audio, where SLIP's escaping can double the bytes; CRC-32 is ``zlib.crc32`` here (C speed)
and ``binascii.crc32`` in MicroPython's ESP32 build, and catches every 1- and 2-bit error
and every burst of up to 32 bits in packets of this size.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from fayd.errors import ProtocolError
from fayd.protocol.audio import HEADER, MAX_PCM
from fayd.protocol.codec import KINDS, MAX_JSON

#: Kind name → packet code. Codes are part of the wire format: never renumber, only add.
KIND_CODES: dict[str, int] = {
    "hello": 0x01,
    "presence": 0x02,
    "heartbeat": 0x03,
    "text": 0x04,
    "event": 0x05,
    "human": 0x06,
    "command": 0x07,
    "ack": 0x08,
    "error": 0x09,
    "audio": 0x0A,
    "alert": 0x0B,
    "challenge": 0x0C,
    "proof": 0x0D,
}
CODE_KINDS: dict[int, str] = {code: kind for kind, code in KIND_CODES.items()}
assert set(KIND_CODES) == set(KINDS), "every protocol kind needs a serial code"

DELIMITER = b"\x00"
CRC = struct.Struct("<I")
#: Largest payload: the larger of a JSON frame and an audio frame (header + PCM).
MAX_PAYLOAD = max(MAX_JSON, HEADER.size + MAX_PCM)
#: Largest body before COBS: code byte + payload + CRC.
MAX_BODY = 1 + MAX_PAYLOAD + CRC.size
#: Largest COBS-encoded body: one overhead byte per started 254-byte block.
MAX_ENCODED = MAX_BODY + MAX_BODY // 254 + 1

#: Why a stretch of bytes between two delimiters was not a packet.
GARBAGE_REASONS = ("cobs", "short", "crc", "kind", "oversize")


@dataclass(frozen=True)
class SerialGarbage:
    """Bytes between two delimiters that were not a valid packet (reported, then dropped).

    ``reason`` is one of :data:`GARBAGE_REASONS`: ``cobs`` (not valid COBS), ``short`` (fewer
    than 5 bytes), ``crc`` (checksum mismatch), ``kind`` (valid packet, unknown kind code),
    ``oversize`` (more than :data:`MAX_ENCODED` bytes without a delimiter). ``size`` is the
    number of wire bytes dropped.
    """

    reason: str
    size: int
    detail: str = ""

    @property
    def code(self) -> str:
        """The protocol error code an ``error`` frame about this garbage would carry."""
        return {"kind": "unknown", "oversize": "too-large"}.get(self.reason, "malformed")

    def __str__(self) -> str:
        return f"{self.reason} ({self.size} bytes){': ' + self.detail if self.detail else ''}"


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (canonical form: no trailing 0x01 after a final 254-byte run)."""
    out = bytearray()
    chunks = data.split(DELIMITER)  # n zeros → n + 1 runs, each but the last ends in a zero
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        pos = 0
        while len(chunk) - pos >= 254:
            out.append(0xFF)
            out += chunk[pos : pos + 254]
            pos += 254
        if i == last and pos and pos == len(chunk):
            break  # the data ended exactly on a full run: nothing (and no zero) follows
        out.append(len(chunk) - pos + 1)
        out += chunk[pos:]
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Inverse of :func:`cobs_encode`; ProtocolError if ``data`` is not valid COBS."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ProtocolError("COBS data contains a zero byte")
        end = i + code
        if end > n:
            raise ProtocolError(f"COBS block at {i} runs {end - n} bytes past the end")
        out += data[i + 1 : end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_packet(kind: str, payload: bytes) -> bytes:
    """The wire bytes of one frame: ``00 COBS(code payload crc32) 00``.

    Raises ProtocolError with code ``unknown`` for a kind without a code, ``too-large`` for
    a payload over :data:`MAX_PAYLOAD` bytes.
    """
    code = KIND_CODES.get(kind)
    if code is None:
        raise ProtocolError(f"no serial code for frame kind {kind!r}", "unknown")
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(
            f"{kind} payload of {len(payload)} bytes over {MAX_PAYLOAD}", "too-large"
        )
    body = bytes((code,)) + payload
    body += CRC.pack(zlib.crc32(body))
    return DELIMITER + cobs_encode(body) + DELIMITER


def decode_packet(encoded: bytes) -> tuple[str, bytes] | SerialGarbage:
    """One packet's bytes between delimiters (without them) → (kind, payload) or garbage."""
    size = len(encoded)
    if size > MAX_ENCODED:
        return SerialGarbage("oversize", size, f"over {MAX_ENCODED} bytes")
    try:
        body = cobs_decode(encoded)
    except ProtocolError as exc:
        return SerialGarbage("cobs", size, str(exc))
    if len(body) < 1 + CRC.size:
        return SerialGarbage("short", size, f"{len(body)} bytes decoded")
    (crc,) = CRC.unpack_from(body, len(body) - CRC.size)
    if zlib.crc32(memoryview(body)[: -CRC.size]) != crc:
        return SerialGarbage("crc", size, "checksum mismatch")
    kind = CODE_KINDS.get(body[0])
    if kind is None:
        return SerialGarbage("kind", size, f"unknown kind code 0x{body[0]:02x}")
    return kind, body[1 : -CRC.size]


class SerialDecoder:
    """Streaming packet decoder: feed it bytes as they arrive, get frames and garbage back.

    ``feed`` never raises. Every stretch of bytes between two delimiters becomes either a
    ``(kind, payload)`` tuple or one :class:`SerialGarbage`, in stream order; so a valid
    packet survives any garbage around it. Memory stays bounded: a stretch that grows past
    :data:`MAX_ENCODED` bytes is discarded as it arrives and reported once (``oversize``)
    when its delimiter finally comes.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overflow = 0  # bytes discarded of the current oversize stretch

    def feed(self, data: bytes) -> list[tuple[str, bytes] | SerialGarbage]:
        out: list[tuple[str, bytes] | SerialGarbage] = []
        parts = bytes(data).split(DELIMITER)
        for part in parts[:-1]:  # each ends at a delimiter
            if self._overflow:
                out.append(
                    SerialGarbage(
                        "oversize", self._overflow + len(part), f"over {MAX_ENCODED} bytes"
                    )
                )
                self._overflow = 0
                continue
            if self._pending:
                self._pending += part
                part = bytes(self._pending)
                self._pending.clear()
            if part:  # empty: two delimiters in a row
                out.append(decode_packet(part))
        tail = parts[-1]
        if self._overflow:
            self._overflow += len(tail)
        elif len(self._pending) + len(tail) > MAX_ENCODED:
            self._overflow = len(self._pending) + len(tail)
            self._pending.clear()
        else:
            self._pending += tail
        return out

    @property
    def buffered(self) -> int:
        """Bytes held waiting for a delimiter (bounded by MAX_ENCODED)."""
        return len(self._pending)
