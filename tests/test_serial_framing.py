"""Serial framing (COBS + CRC-32, 0x00 delimiters): exact bytes, the kind code table, and a
streaming decoder that survives 100k random and mutated packets without losing a valid one."""

from __future__ import annotations

import random
import zlib
from collections import Counter

import pytest

from fayd.errors import ProtocolError
from fayd.protocol import KINDS, AudioChunk, Heartbeat, encode
from fayd.protocol.serial import (
    CODE_KINDS,
    GARBAGE_REASONS,
    KIND_CODES,
    MAX_ENCODED,
    MAX_PAYLOAD,
    SerialDecoder,
    SerialGarbage,
    cobs_decode,
    cobs_encode,
    decode_packet,
    encode_packet,
)

# Canonical COBS vectors (Cheshire & Baker; the examples on Wikipedia's COBS page).
RUN_254 = bytes(range(1, 255))
COBS_VECTORS = [
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (RUN_254, b"\xff" + RUN_254),
    (b"\x00" + RUN_254, b"\x01\xff" + RUN_254),
    (RUN_254 + b"\xff", b"\xff" + RUN_254 + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
    (b"", b"\x01"),
]


@pytest.mark.parametrize(("raw", "encoded"), COBS_VECTORS)
def test_cobs_matches_the_canonical_vectors(raw: bytes, encoded: bytes) -> None:
    assert cobs_encode(raw) == encoded
    assert cobs_decode(encoded) == raw


def test_cobs_round_trips_random_data() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        n = rng.choice((rng.randrange(0, 40), rng.randrange(200, 800)))
        raw = bytes(rng.choice((0, rng.randrange(256))) for _ in range(n))
        encoded = cobs_encode(raw)
        assert b"\x00" not in encoded
        assert len(encoded) <= len(raw) + len(raw) // 254 + 1
        assert cobs_decode(encoded) == raw


def test_cobs_rejects_a_block_running_past_the_end() -> None:
    with pytest.raises(ProtocolError, match="past the end"):
        cobs_decode(b"\x05\x11\x22")
    with pytest.raises(ProtocolError, match="zero"):
        cobs_decode(b"\x02\x11\x00")


def test_crc_is_standard_crc32() -> None:
    assert zlib.crc32(b"123456789") == 0xCBF43926  # the CRC-32/ISO-HDLC check value


def test_every_protocol_kind_has_a_unique_code() -> None:
    assert set(KIND_CODES) == set(KINDS)
    assert len(set(KIND_CODES.values())) == len(KIND_CODES)
    assert all(0 < code < 0x80 for code in KIND_CODES.values())
    assert {CODE_KINDS[c]: c for c in CODE_KINDS} == KIND_CODES


def test_exact_bytes_of_a_json_frame() -> None:
    # The example in docs/protocol.md, "Serial framing".
    payload = encode(Heartbeat())
    assert payload == b'{"v":1,"seq":0}'
    packet = encode_packet("heartbeat", b'{"v":1}')
    assert packet == bytes.fromhex("00 0d 03 7b 22 76 22 3a 31 7d c9 e0 1a f2 00")
    assert decode_packet(packet[1:-1]) == ("heartbeat", b'{"v":1}')


def test_exact_bytes_of_an_audio_frame_with_zeros() -> None:
    # Also in docs/protocol.md: the zeros of the audio header are stuffed away by COBS.
    chunk = AudioChunk(stream=1, seq=0, rate=16000, pcm=b"\x00\x00\x10\x20", start=True)
    payload = encode(chunk)
    assert payload == bytes.fromhex("46 41 01 01 01 00 00 00 00 00 80 3e 00 00 10 20")
    packet = encode_packet("audio", payload)
    assert packet == bytes.fromhex(
        "00 07 0a 46 41 01 01 01 01 01 01 01 03 80 3e 01 07 10 20 55 45 1d 5f 00"
    )
    assert SerialDecoder().feed(packet) == [("audio", payload)]


def test_encode_refuses_unknown_kinds_and_oversize_payloads() -> None:
    with pytest.raises(ProtocolError) as info:
        encode_packet("telepathy", b"{}")
    assert info.value.code == "unknown"
    with pytest.raises(ProtocolError) as info:
        encode_packet("text", b"x" * (MAX_PAYLOAD + 1))
    assert info.value.code == "too-large"


def test_largest_payload_fits_the_decoder_limit() -> None:
    payload = bytes(range(1, 256)) * (MAX_PAYLOAD // 255) + b"\x01" * (MAX_PAYLOAD % 255)
    packet = encode_packet("human", payload)
    assert len(packet) - 2 <= MAX_ENCODED
    assert SerialDecoder().feed(packet) == [("human", payload)]


def test_decoder_takes_any_split_of_the_stream() -> None:
    packets = [encode_packet(k, f'{{"n":{i}}}'.encode()) for i, k in enumerate(KINDS)]
    stream = b"".join(packets)
    expected = [(k, f'{{"n":{i}}}'.encode()) for i, k in enumerate(KINDS)]
    one_by_one = SerialDecoder()
    got = [item for b in stream for item in one_by_one.feed(bytes((b,)))]
    assert got == expected
    assert SerialDecoder().feed(stream) == expected
    assert one_by_one.buffered == 0


def test_decoder_reports_each_kind_of_garbage_and_keeps_the_neighbours() -> None:
    good = encode_packet("text", b'{"text":"hi"}')
    flipped = bytearray(good)
    flipped[5] ^= 0x01
    unknown = b"\x7f{}"
    unknown_packet = b"\x00" + cobs_encode(unknown + zlib.crc32(unknown).to_bytes(4, "little"))
    stream = (
        b"ets Jun  8 2016 00:22:57\r\nrst:0x1 (POWERON_RESET)\r\n"  # an ESP32 boot log
        + good
        + bytes(flipped)
        + good
        + b"\x00\x03\x01\x02"  # short: two bytes
        + good
        + b"\x00\x09\x11"  # bad COBS: block runs past the end
        + good
        + unknown_packet
        + good
    )
    items = SerialDecoder().feed(stream + b"\x00")
    frames = [i for i in items if not isinstance(i, SerialGarbage)]
    reasons = [i.reason for i in items if isinstance(i, SerialGarbage)]
    assert frames == [("text", b'{"text":"hi"}')] * 5
    assert reasons == ["cobs", "crc", "short", "cobs", "kind"]
    assert [SerialGarbage(r, 1).code for r in ("kind", "oversize", "crc")] == [
        "unknown",
        "too-large",
        "malformed",
    ]


def test_an_endless_stretch_without_delimiter_is_dropped_with_bounded_memory() -> None:
    decoder = SerialDecoder()
    good = encode_packet("ack", b'{"ref":"1"}')
    out = []
    for _ in range(20):  # 20 x 10 KB without a zero: twice the limit and more
        out += decoder.feed(b"\x55" * 10_000)
        assert decoder.buffered <= MAX_ENCODED
    out += decoder.feed(good)
    assert len(out) == 2
    assert isinstance(out[0], SerialGarbage) and out[0].reason == "oversize"
    assert out[0].size == 200_000
    assert out[1] == ("ack", b'{"ref":"1"}')


# --- fuzz ----------------------------------------------------------------------------------

FUZZ_ITEMS = 100_000


def _valid(rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(KINDS)
    size = rng.choice((rng.randrange(0, 24), rng.randrange(0, 120), rng.randrange(0, 600)))
    return kind, rng.randbytes(size)


def _mutate(rng: random.Random, packet: bytes) -> bytes:
    """Damage the body of a packet (never only its delimiters, which would leave it valid)."""
    original = packet[1:-1]
    body = bytearray(original)
    # Damage it again while it still holds the packet intact between zeros (a delete and an
    # insert that cancel out, or a zero next to it that is only an extra delimiter).
    while original in bytes(body).split(b"\x00"):
        _damage(rng, body)
    tail = b"\x00" if rng.random() < 0.8 else b""  # sometimes the end delimiter is lost too
    return b"\x00" + bytes(body) + tail


def _damage(rng: random.Random, body: bytearray) -> None:
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(5)
        pos = rng.randrange(len(body)) if body else 0
        if op == 0 and body:
            body[pos] ^= 1 << rng.randrange(8)  # a bit flip
        elif op == 1 and len(body) > 1:
            del body[pos]  # a lost byte
        elif op == 2:
            body.insert(pos, rng.randrange(256))  # a spurious byte (maybe a zero)
        elif op == 3 and body:
            body[pos] = rng.randrange(1, 256) if body[pos] == 0 else 0  # a byte turned 0
        else:
            del body[rng.randrange(len(body) + 1) :]  # cut short
            body += rng.randbytes(rng.randrange(1, 5))


def _random_garbage(rng: random.Random) -> bytes:
    pick = rng.random()
    if pick < 0.45:
        return rng.randbytes(rng.randrange(1, 80))
    if pick < 0.6:
        return bytes(rng.choice((0, 1, 2, 0xFF, rng.randrange(256))) for _ in range(20))
    if pick < 0.75:
        return b"I (312) boot: ESP-IDF v5.1 2nd stage bootloader\r\n"[: rng.randrange(1, 52)]
    if pick < 0.99995:
        kind_byte = rng.choice((0x00, 0x4B, 0x7F, 0xFF))
        body = bytes((kind_byte,)) + rng.randbytes(rng.randrange(0, 16))
        return b"\x00" + cobs_encode(body + zlib.crc32(body).to_bytes(4, "little")) + b"\x00"
    return b"\x33" * (MAX_ENCODED + rng.randrange(1, 1000))  # oversize, no delimiter


def test_fuzz_100k_random_and_mutated_packets_never_lose_a_valid_one() -> None:
    rng = random.Random(20261129)
    stream = bytearray()
    expected: list[tuple[str, bytes]] = []
    made = Counter()
    for i in range(FUZZ_ITEMS):
        if i % 2:
            kind, payload = _valid(rng)
            stream += _mutate(rng, encode_packet(kind, payload))
            made["mutated"] += 1
        else:
            stream += _random_garbage(rng)
            made["random"] += 1
        if rng.random() < 0.5:  # valid packets interleaved with the garbage
            kind, payload = _valid(rng)
            stream += encode_packet(kind, payload)
            expected.append((kind, payload))
    stream += b"\x00"

    decoder = SerialDecoder()
    frames: list[tuple[str, bytes]] = []
    garbage: Counter[str] = Counter()
    pos = 0
    while pos < len(stream):
        size = rng.choice((1, 7, 64, 512, 4096))  # reads of every size a UART driver returns
        for item in decoder.feed(bytes(stream[pos : pos + size])):
            if isinstance(item, SerialGarbage):
                garbage[item.reason] += 1
            else:
                assert isinstance(item, tuple)
                frames.append(item)
        pos += size

    assert made["random"] + made["mutated"] == FUZZ_ITEMS
    assert frames == expected  # every valid frame, in order, and nothing else
    assert set(garbage) == set(GARBAGE_REASONS)
    assert sum(garbage.values()) >= FUZZ_ITEMS // 2
    assert decoder.buffered == 0


def test_docs_show_these_exact_bytes() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Serial framing") :]
    assert "00 0d 03 7b 22 76 22 3a 31 7d c9 e0 1a f2 00" in section
    assert "00 07 0a 46 41 01 01 01 01 01 01 01 03 80 3e 01 07 10 20 55 45 1d 5f 00" in section
    for kind, code in KIND_CODES.items():
        assert f"| `0x{code:02x}` | `{kind}` |" in section
    assert f"{MAX_ENCODED:,}" in section
