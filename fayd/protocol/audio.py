"""Binary audio frames: a 12-byte header, then raw PCM (s16le mono). Never base64.

offset  size  field
0       2     magic b"FA"
2       1     version (1)
3       1     flags: bit 0 START of stream, bit 1 END of stream, others 0
4       2     stream id, u16 little-endian (a new id per utterance or reply)
6       4     sequence number within the stream, u32 LE, from 0
10      2     sample rate in Hz, u16 LE
12      n     PCM samples, signed 16-bit little-endian mono (n even, n <= 16384)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from fayd.errors import ProtocolError

MAGIC = b"FA"
VERSION = 1
HEADER = struct.Struct("<2sBBHIH")
START = 0x01
END = 0x02
#: Largest PCM payload of one frame: 512 ms at 16 kHz.
MAX_PCM = 16384


@dataclass(frozen=True)
class AudioChunk:
    """One binary audio frame of a stream."""

    KIND = "audio"
    stream: int
    seq: int
    rate: int
    pcm: bytes = b""
    start: bool = False
    end: bool = False

    def encode(self) -> bytes:
        if len(self.pcm) > MAX_PCM or len(self.pcm) % 2:
            raise ProtocolError(f"audio payload of {len(self.pcm)} bytes: even, <= {MAX_PCM}")
        flags = (START if self.start else 0) | (END if self.end else 0)
        try:
            header = HEADER.pack(MAGIC, VERSION, flags, self.stream, self.seq, self.rate)
        except struct.error as exc:
            raise ProtocolError(f"audio header field out of range: {exc}") from exc
        return header + self.pcm

    @classmethod
    def decode(cls, data: bytes) -> AudioChunk:
        if len(data) < HEADER.size:
            raise ProtocolError(f"audio frame of {len(data)} bytes is shorter than its header")
        magic, version, flags, stream, seq, rate = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise ProtocolError(f"audio frame has bad magic {magic!r}")
        if version != VERSION:
            raise ProtocolError(f"audio frame version {version} unsupported", "unsupported")
        pcm = bytes(data[HEADER.size :])
        if len(pcm) > MAX_PCM:
            raise ProtocolError(f"audio payload of {len(pcm)} bytes over {MAX_PCM}", "too-large")
        if len(pcm) % 2:
            raise ProtocolError("audio payload has an odd number of bytes")
        if not 8000 <= rate <= 48000:
            raise ProtocolError(f"audio sample rate {rate} outside 8000-48000 Hz")
        return cls(stream, seq, rate, pcm, bool(flags & START), bool(flags & END))


def chunk_pcm(pcm: bytes, rate: int, stream: int, frame_bytes: int = 4096, first_seq: int = 0):
    """Split PCM into frames of a stream; the first is marked START (the END mark is separate)."""
    frame_bytes -= frame_bytes % 2
    for i, offset in enumerate(range(0, len(pcm), frame_bytes)):
        seq = first_seq + i
        yield AudioChunk(stream, seq, rate, pcm[offset : offset + frame_bytes], start=seq == 0)
