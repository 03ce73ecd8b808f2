"""Wire protocol v1: every frame kind round-trips; framing is byte-exact; bad input is a
ProtocolError with a code, never another exception."""

from __future__ import annotations

import json
import random

import pytest

from fayd.errors import ProtocolError
from fayd.protocol import (
    KINDS,
    MAX_JSON,
    Ack,
    Action,
    Alert,
    AudioChunk,
    AudioFormat,
    Challenge,
    Command,
    Error,
    Heartbeat,
    Hello,
    Human,
    Presence,
    Proof,
    SensorEvent,
    TextIn,
    Topics,
    chunk_pcm,
    decode,
    encode,
)

EXAMPLES = [
    Hello(
        "kitchen-1",
        ("mic", "speaker"),
        fw="0.1.0",
        caps={"servos": 4},
        audio_in=AudioFormat(16000),
        audio_out=AudioFormat(22050),
        user="grandma",
    ),
    Hello("s2", ("sensor",)),
    Presence(online=True),
    Presence(online=False),
    Heartbeat(seq=7, uptime_s=12.5, rssi=-61),
    TextIn("What time is it?", user="alice", id="t1"),
    SensorEvent(seq=42, sensor="bp", ts=1700000000.0, data={"sys": 152, "dia": 96}),
    Command("stop"),
    Command("volume", {"level": 0.4}, id="c9"),
    Ack("42"),
    Ack("c9", ok=False, detail="busy"),
    Error("malformed", "not JSON", ref="3"),
    Alert("a-7", "emergency", "critical", "I've fallen", 1764400000.0, "ann", "kitchen-1"),
    Human(
        key="audio",
        text="这边请",
        is_first=True,
        lips=({"Lip": "aa", "Time": 0},),
        sentiment=0.7,
        action=Action("guidance.invite", "invite", "warm", 0.74, 82),
        time=1.25,
        stream=3,
        seq=0,
        conv_id="c1",
        conv_msg_no=2,
        username="主人",
    ),
    Human(key="audio", is_end=True, stream=3),
    Human(key="text", text="Hello there.", is_first=True, is_end=True),
    Human(key="log", value="thinking"),
    AudioChunk(5, 0, 16000, b"\x01\x00\xff\x7f", start=True),
    AudioChunk(5, 1, 16000, b"", end=True),
    Challenge("00112233445566778899aabbccddeeff"),
    Proof("kitchen-1", "00112233445566778899aabbccddeeff", "ab" * 32),
]


def test_every_kind_has_an_example() -> None:
    assert {f.KIND for f in EXAMPLES} == set(KINDS)


@pytest.mark.parametrize("frame", EXAMPLES, ids=lambda f: f.KIND)
def test_round_trip(frame) -> None:
    assert decode(frame.KIND, encode(frame)) == frame


def test_hello_bytes_exact() -> None:
    frame = Hello("d1", ("mic",), audio_in=AudioFormat(16000))
    assert encode(frame) == (
        b'{"v":1,"device":"d1","roles":["mic"],"fw":"unknown","caps":{},'
        b'"audio_in":{"rate":16000,"width":2,"channels":1}}'
    )


def test_challenge_and_proof_bytes_exact() -> None:
    """docs/protocol.md, "Who is on the port": the handshake's frames and the proof."""
    from fayd.auth import serial_proof

    nonce = "00112233445566778899aabbccddeeff"
    assert encode(Challenge(nonce)) == b'{"v":1,"nonce":"00112233445566778899aabbccddeeff"}'
    mac = serial_proof("11" * 32, "kitchen-1", nonce)
    assert mac == "89844fa731aeb47e99dfa172af33d4b0b125fe449187a9ada774945ae10449cd"
    assert encode(Proof("kitchen-1", nonce, mac)) == (
        b'{"v":1,"device":"kitchen-1","nonce":"00112233445566778899aabbccddeeff",'
        b'"mac":"' + mac.encode() + b'"}'
    )


def test_human_frame_is_fays_shape() -> None:
    frame = Human(
        key="audio",
        text="这边请",
        is_first=True,
        sentiment=0.7,
        action=Action("guidance.invite", "invite", "warm", 0.74, 82),
    )
    assert json.loads(encode(frame)) == {
        "Topic": "human",
        "Data": {
            "Key": "audio",
            "Text": "这边请",
            "IsFirst": 1,
            "IsEnd": 0,
            "Lips": [],
            "Sentiment": 0.7,
            "Action": {
                "code": "guidance.invite",
                "behavior": "invite",
                "affect": "warm",
                "intensity": 0.74,
                "priority": 82,
            },
        },
    }
    # UTF-8, not \u escapes: what Fay's clients and the MQTT tools show.
    assert "这边请".encode() in encode(frame)


def test_audio_header_bytes_exact() -> None:
    chunk = AudioChunk(
        stream=0x0102, seq=0x03040506, rate=16000, pcm=b"\x10\x20", start=True, end=True
    )
    assert chunk.encode() == b"FA\x01\x03\x02\x01\x06\x05\x04\x03\x80\x3e\x10\x20"


def test_chunk_pcm_splits_and_marks_start() -> None:
    pcm = bytes(range(256)) * 40  # 10240 bytes
    chunks = list(chunk_pcm(pcm, 22050, stream=9, frame_bytes=4096))
    assert [len(c.pcm) for c in chunks] == [4096, 4096, 2048]
    assert [c.seq for c in chunks] == [0, 1, 2]
    assert [c.start for c in chunks] == [True, False, False]
    assert b"".join(c.pcm for c in chunks) == pcm


def test_unknown_fields_are_ignored() -> None:
    data = b'{"v":1,"device":"d1","roles":["mic"],"future":{"x":1},"fw":"2"}'
    assert decode("hello", data) == Hello("d1", ("mic",), fw="2")


BAD = [
    ("hello", b"not json", "malformed"),
    ("hello", b"\xff\xfe", "malformed"),
    ("hello", b"[1,2]", "malformed"),
    ("hello", b'{"v":1,"roles":["mic"]}', "malformed"),  # no device
    ("hello", b'{"v":1,"device":"a/b","roles":[]}', "bad-id"),
    ("hello", b'{"v":1,"device":"d","roles":"mic"}', "malformed"),
    ("hello", b'{"v":2,"device":"d","roles":[]}', "unsupported"),
    ("hello", b'{"device":"d","roles":[],"audio_in":{"rate":16000,"channels":2}}', "malformed"),
    ("text", b'{"text":"   "}', "malformed"),
    ("text", json.dumps({"text": "x" * 5000}).encode(), "malformed"),
    ("event", b'{"seq":"1","sensor":"bp"}', "malformed"),
    ("event", b'{"seq":true,"sensor":"bp"}', "malformed"),
    ("presence", b'{"online":"yes"}', "malformed"),
    ("human", b'{"Topic":"other","Data":{}}', "malformed"),
    ("nonsense", b"{}", "unknown"),
    ("hello", b"{" + b" " * MAX_JSON + b"}", "too-large"),
    ("audio", b"FA\x01", "malformed"),
    ("audio", b"XX\x01\x00\x00\x00\x00\x00\x00\x00\x80\x3e", "malformed"),
    ("audio", b"FA\x02\x00\x00\x00\x00\x00\x00\x00\x80\x3e", "unsupported"),
    ("audio", b"FA\x01\x00\x00\x00\x00\x00\x00\x00\x80\x3e\x00", "malformed"),  # odd bytes
    ("audio", b"FA\x01\x00\x00\x00\x00\x00\x00\x00\x80\x3e" + b"\0" * 16386, "too-large"),
    ("audio", b"FA\x01\x00\x00\x00\x00\x00\x00\x00\x10\x00", "malformed"),  # 16 Hz
    # Valid JSON that is hostile (issue 14): each crashed the device hub.
    ("hello", b'{"device":"d","roles":[],"user":"\\udfff"}', "malformed"),
    ("heartbeat", b'{"uptime_s":1' + b"0" * 400 + b"}", "malformed"),  # no float that large
    ("event", b'{"seq":1' + b"0" * 5000 + b',"sensor":"bp"}', "malformed"),  # > 4,300 digits
    ("event", b'{"seq":' + str(2**63).encode() + b',"sensor":"bp"}', "malformed"),
    ("hello", b"[" * 30000 + b"]" * 30000, "malformed"),  # deeper than the decoder recurses
    ("hello", b'{"device":"d\\n","roles":[]}', "bad-id"),  # "$" alone let this through
    ("hello", b'{"device":"' + b"x" * 300 + b'","roles":[]}', "bad-id"),
    ("hello", b'{"device":"d","roles":["mic\\u0000"]}', "malformed"),
    ("text", b'{"text":"hi","user":"' + b"u" * 65 + b'"}', "malformed"),
    ("text", b'{"text":"hi","user":" "}', "malformed"),
    # The serial handshake: a nonce and a proof are lowercase hex of their exact sizes.
    ("challenge", b'{"nonce":"00112233"}', "malformed"),
    ("challenge", b'{"nonce":"' + b"AB" * 16 + b'"}', "malformed"),
    ("proof", b'{"device":"d","nonce":"' + b"ab" * 16 + b'","mac":"00"}', "malformed"),
    (
        "proof",
        b'{"device":"a/b","nonce":"' + b"ab" * 16 + b'","mac":"' + b"0" * 64 + b'"}',
        "bad-id",
    ),
    ("proof", b'{"device":"d","mac":"' + b"0" * 64 + b'"}', "malformed"),  # no nonce
]


@pytest.mark.parametrize(("kind", "payload", "code"), BAD)
def test_bad_frames_raise_protocol_error(kind: str, payload: bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode(kind, payload)
    assert info.value.code == code


def test_random_garbage_only_ever_raises_protocol_error() -> None:
    rng = random.Random(1234)
    valid = [encode(f) for f in EXAMPLES]
    for i in range(5000):
        kind = rng.choice(KINDS)
        base = bytearray(rng.choice(valid))
        for _ in range(rng.randint(1, 4)):  # mutate a valid frame
            if base:
                base[rng.randrange(len(base))] = rng.randrange(256)
        payload = bytes(base) if i % 2 else rng.randbytes(rng.randint(0, 64))
        try:
            decode(kind, payload)
        except ProtocolError:
            pass


def test_encode_refuses_oversized_frames() -> None:
    with pytest.raises(ProtocolError):
        encode(AudioChunk(1, 0, 16000, b"\0" * 16386))
    with pytest.raises(ProtocolError):
        encode(Error("x", "y" * (MAX_JSON + 1)))


def test_topics() -> None:
    t = Topics("fayd/v1")
    assert t.up("kitchen-1", "hello") == "fayd/v1/dev/kitchen-1/up/hello"
    assert t.down("kitchen-1", "human") == "fayd/v1/dev/kitchen-1/down/human"
    assert t.parse("fayd/v1/dev/kitchen-1/up/audio") == ("kitchen-1", "up", "audio")
    assert t.parse("fayd/v1/dev/kitchen-1/sideways/audio") is None
    assert t.parse("other/v1/dev/kitchen-1/up/audio") is None
    assert t.parse("fayd/v1/dev/a/b/up/audio") is None
    # A bad id is the hub's to refuse (an error frame on its down topic, a log line).
    assert t.parse("fayd/v1/dev/a b/up/hello") == ("a b", "up", "hello")
    assert t.all_up == "fayd/v1/dev/+/up/+"


@pytest.mark.parametrize(
    ("kind", "payload", "field"),
    [
        ("hello", b'{"device":"d","roles":["mic"],"caps":{"wake":"\\ud800"}}', "caps.wake"),
        ("event", b'{"seq":1,"sensor":"door","data":{"a":[1,{"\\udc00":2}]}}', "data.a[1]"),
        ("ack", b'{"ref":"1","ok":true,"applied":["\\udfff"]}', "applied[0]"),  # unknown field
        ("text", b'{"text":"hi \\udfff there"}', "text"),
        ("error", b'{"code":"x","message":"\\udfff"}', "message"),
        ("hello", b'{"device":"d","roles":["mic","mic\\u0007"]}', "roles[1]"),
        ("heartbeat", b'{"uptime_s":1' + b"0" * 400 + b"}", "uptime_s"),
    ],
)
def test_a_refused_field_is_named_in_the_error_frame(kind: str, payload: bytes, field: str) -> None:
    """Every string, keys and unknown fields too, must be UTF-8 encodable; the error frame
    that answers says which field was not (and can itself be written)."""
    with pytest.raises(ProtocolError) as info:
        decode(kind, payload)
    frame = Error.of(info.value)
    assert frame.field is not None and frame.field.startswith(field), frame
    assert field.split("[")[0] in frame.message
    assert decode("error", encode(frame)) == frame


def test_text_limits_are_per_field() -> None:
    """Free text (a turn, an error's message) up to 4,000 characters; names up to 64."""
    assert decode("text", json.dumps({"text": "x" * 4000}).encode()).text == "x" * 4000
    assert decode("ack", json.dumps({"ref": "1", "detail": "d" * 4000}).encode())
    with pytest.raises(ProtocolError, match="'fw' is 65 characters long"):
        decode("hello", json.dumps({"device": "d", "roles": [], "fw": "f" * 65}).encode())
    assert decode("hello", json.dumps({"device": "d", "roles": [], "user": "祖母"}).encode())
