# Wire protocol v1, device side: mirrors fayd/protocol (frames.py, audio.py, serial.py,
# topics.py) with plain dicts and bytes. See docs/protocol.md.
import binascii
import json
import struct

from fayd_fw import FwError

PROTOCOL_VERSION = 1
ROLES = ("mic", "speaker", "robot", "screen", "sensor")
MAX_JSON = 65536
MAX_TEXT = 4000

# --- frames (frames.py / codec.py) ------------------------------------------------------
KINDS = (
    "hello",
    "presence",
    "heartbeat",
    "text",
    "event",
    "command",
    "ack",
    "error",
    "human",
    "audio",
    "alert",
    "challenge",
    "proof",
)


def encode(kind, frame):
    """A JSON frame (a dict) -> its wire bytes; adds "v"."""
    if kind == "audio":
        raise FwError("audio frames are binary: use pack_audio", "unexpected")
    if "v" not in frame:
        frame["v"] = PROTOCOL_VERSION
    data = json.dumps(frame).encode()
    if len(data) > MAX_JSON:
        raise FwError("%s frame of %d bytes over %d" % (kind, len(data), MAX_JSON), "too-large")
    return data


def decode(kind, payload):
    """Wire bytes -> a dict (JSON kinds) or an AudioChunk-like tuple (audio)."""
    if kind == "audio":
        return unpack_audio(payload)
    if kind not in KINDS:
        raise FwError("unknown frame kind %r" % kind, "unknown")
    if len(payload) > MAX_JSON:
        raise FwError("%s frame over %d bytes" % (kind, MAX_JSON), "too-large")
    try:
        data = json.loads(payload)
    except Exception as exc:  # ValueError, UnicodeError
        raise FwError("%s frame is not UTF-8 JSON: %s" % (kind, exc))
    if not isinstance(data, dict):
        raise FwError("%s frame must be a JSON object" % kind)
    if data.get("v", PROTOCOL_VERSION) != PROTOCOL_VERSION:
        raise FwError("%s frame version %r unsupported" % (kind, data.get("v")), "unsupported")
    return data


def Hello(device, roles, fw, caps=None, audio_in=None, audio_out=None, user=None):
    f = {"v": 1, "device": device, "roles": list(roles), "fw": fw, "caps": caps or {}}
    if audio_in:
        f["audio_in"] = AudioFormat(audio_in)
    if audio_out:
        f["audio_out"] = AudioFormat(audio_out)
    if user:
        f["user"] = user
    return f


def AudioFormat(rate):
    return {"rate": rate, "width": 2, "channels": 1}


def Presence(online):
    return {"v": 1, "online": bool(online)}


def Heartbeat(seq, uptime_s=None, rssi=None):
    f = {"v": 1, "seq": seq}
    if uptime_s is not None:
        f["uptime_s"] = uptime_s
    if rssi is not None:
        f["rssi"] = rssi
    return f


def TextIn(text, user=None, id=None):
    if not text.strip() or len(text) > MAX_TEXT:
        raise FwError("text must be 1-%d characters, not blank" % MAX_TEXT)
    f = {"v": 1, "text": text}
    if user:
        f["user"] = user
    if id:
        f["id"] = id
    return f


def SensorEvent(seq, sensor, ts=None, data=None, epoch=None):
    f = {"v": 1, "seq": seq, "sensor": sensor, "data": data or {}}
    if ts is not None:
        f["ts"] = ts
    if epoch:
        f["epoch"] = epoch
    return f


def Ack(ref, ok=True, detail=None):
    f = {"v": 1, "ref": str(ref), "ok": ok}
    if detail:
        f["detail"] = detail
    return f


def Error(code, message, ref=None):
    f = {"v": 1, "code": code, "message": message}
    if ref is not None:
        f["ref"] = str(ref)
    return f


def Proof(device, nonce, mac):
    """The answer to fayd's serial challenge (auth.serial_proof makes ``mac``)."""
    return {"v": 1, "device": device, "nonce": nonce, "mac": mac}


def challenge_nonce(frame):
    """The nonce of a challenge frame: 32-64 lowercase hex digits, or FwError."""
    nonce = frame.get("nonce")
    if not isinstance(nonce, str) or not 32 <= len(nonce) <= 64:
        raise FwError("challenge nonce must be 32-64 lowercase hex digits")
    for c in nonce:
        if c not in "0123456789abcdef":
            raise FwError("challenge nonce must be 32-64 lowercase hex digits")
    return nonce


def human_data(frame):
    """The Data object of Fay's {"Topic": "human", "Data": {...}} frame, or FwError."""
    if frame.get("Topic") != "human" or not isinstance(frame.get("Data"), dict):
        raise FwError('human frame must be {"Topic": "human", "Data": {...}}')
    return frame["Data"]


def Action(data):
    """A human frame's Action as (code, behavior, affect, intensity, priority), or None."""
    a = data.get("Action")
    if not isinstance(a, dict) or not isinstance(a.get("behavior"), str):
        return None
    intensity = a.get("intensity", 0.5)
    priority = a.get("priority", 50)
    if not isinstance(intensity, (int, float)) or not isinstance(priority, int):
        return None
    return (
        a.get("code", ""),
        a["behavior"],
        a.get("affect", "neutral"),
        float(intensity),
        priority,
    )


# --- binary audio frames (audio.py) -------------------------------------------------------
MAGIC = b"FA"
VERSION = 1
HEADER = "<2sBBHIH"
HEADER_SIZE = 12
START = 0x01
END = 0x02
MAX_PCM = 16384


def pack_audio_header(buf, stream, seq, rate, start=False, end=False):
    """Write the 12-byte header into ``buf`` (a preallocated bytearray) in place."""
    flags = (START if start else 0) | (END if end else 0)
    struct.pack_into(HEADER, buf, 0, MAGIC, VERSION, flags, stream & 0xFFFF, seq, rate)


def pack_audio(stream, seq, rate, pcm=b"", start=False, end=False):
    if len(pcm) > MAX_PCM or len(pcm) % 2:
        raise FwError("audio payload of %d bytes: even, <= %d" % (len(pcm), MAX_PCM))
    buf = bytearray(HEADER_SIZE + len(pcm))
    pack_audio_header(buf, stream, seq, rate, start, end)
    buf[HEADER_SIZE:] = pcm
    return buf


def unpack_audio(data):
    """-> (stream, seq, rate, pcm memoryview, start, end); FwError if invalid."""
    if len(data) < HEADER_SIZE:
        raise FwError("audio frame shorter than its header")
    magic, version, flags, stream, seq, rate = struct.unpack_from(HEADER, data, 0)
    if magic != MAGIC:
        raise FwError("audio frame has bad magic")
    if version != VERSION:
        raise FwError("audio frame version %d unsupported" % version, "unsupported")
    n = len(data) - HEADER_SIZE
    if n > MAX_PCM:
        raise FwError("audio payload over %d bytes" % MAX_PCM, "too-large")
    if n % 2 or not 8000 <= rate <= 48000:
        raise FwError("audio payload odd or rate %d outside 8000-48000" % rate)
    return (
        stream,
        seq,
        rate,
        memoryview(data)[HEADER_SIZE:],
        bool(flags & START),
        bool(flags & END),
    )


# --- MQTT topics (topics.py) ----------------------------------------------------------------
class Topics:
    def __init__(self, prefix="fayd/v1"):
        self.prefix = prefix

    def up(self, device, kind):
        return "%s/dev/%s/up/%s" % (self.prefix, device, kind)

    def down(self, device, kind):
        return "%s/dev/%s/down/%s" % (self.prefix, device, kind)

    def all_down(self, device):
        return "%s/dev/%s/down/+" % (self.prefix, device)

    def parse(self, topic):
        """(device, direction, kind) of a device topic, or None."""
        head = self.prefix + "/dev/"
        if not topic.startswith(head):
            return None
        parts = topic[len(head) :].split("/")
        if len(parts) != 3 or parts[1] not in ("up", "down"):
            return None
        return parts[0], parts[1], parts[2]


# --- serial framing (serial.py): 00 COBS(code | payload | crc32 LE) 00 -------------------
KIND_CODES = {
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
CODE_KINDS = {}
for _k in KIND_CODES:
    CODE_KINDS[KIND_CODES[_k]] = _k
MAX_PAYLOAD = MAX_JSON
MAX_BODY = 1 + MAX_PAYLOAD + 4
MAX_ENCODED = MAX_BODY + MAX_BODY // 254 + 1


def packet_size(payload_len):
    """Largest wire size of a packet with this payload: for preallocating buffers."""
    body = 1 + payload_len + 4
    return body + body // 254 + 3


def encode_packet_into(out, kind, payload):
    """Write the packet of one frame into the preallocated bytearray ``out``; returns its
    length. COBS (canonical) is done in place while copying, so no temporary buffers."""
    code = KIND_CODES.get(kind)
    if code is None:
        raise FwError("no serial code for frame kind %r" % kind, "unknown")
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise FwError("%s payload over %d bytes" % (kind, MAX_PAYLOAD), "too-large")
    if len(out) < packet_size(n):
        raise FwError("packet buffer too small", "too-large")
    crc = binascii.crc32(payload, binascii.crc32(bytes((code,))))
    tail = struct.pack("<I", crc)
    total = n + 5  # body = code, payload, crc
    out[0] = 0
    block = 1  # index of the current block's length byte
    w = 2
    run = 1
    i = 0
    while i < total:
        if i == 0:
            b = code
        elif i <= n:
            b = payload[i - 1]
        else:
            b = tail[i - n - 1]
        i += 1
        if b == 0:
            out[block] = run
            block = w
            w += 1
            run = 1
            continue
        out[w] = b
        w += 1
        run += 1
        if run == 0xFF:
            out[block] = run
            if i == total:  # canonical: no empty block after a final full run
                block = -1
                break
            block = w
            w += 1
            run = 1
    if block >= 0:
        out[block] = run
    out[w] = 0
    return w + 1


def encode_packet(kind, payload):
    out = bytearray(packet_size(len(payload)))
    n = encode_packet_into(out, kind, payload)
    return bytes(out[:n])


def cobs_decode(data):
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise FwError("COBS data contains a zero byte")
        end = i + code
        if end > n:
            raise FwError("COBS block runs past the end")
        out += data[i + 1 : end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return out


def decode_packet(encoded):
    """Bytes between two delimiters -> (kind, payload) or None (garbage, dropped)."""
    if len(encoded) > MAX_ENCODED:
        return None
    try:
        body = cobs_decode(encoded)
    except FwError:
        return None
    if len(body) < 5:
        return None
    crc = struct.unpack_from("<I", body, len(body) - 4)[0]
    if binascii.crc32(memoryview(body)[:-4]) != crc:
        return None
    kind = CODE_KINDS.get(body[0])
    if kind is None:
        return None
    return kind, bytes(memoryview(body)[1:-4])


class SerialDecoder:
    """Feed bytes as they arrive; get (kind, payload) tuples back. Garbage is counted."""

    def __init__(self):
        self.pending = bytearray()
        self.overflow = False
        self.garbage = 0

    def feed(self, data):
        out = []
        start = 0
        n = len(data)
        while start <= n:
            z = data.find(b"\x00", start) if isinstance(data, (bytes, bytearray)) else -1
            if z < 0:
                if not self.overflow:
                    self.pending += data[start:]
                    if len(self.pending) > MAX_ENCODED:
                        self.pending = bytearray()
                        self.overflow = True
                break
            if self.overflow:
                self.overflow = False
                self.garbage += 1
            else:
                self.pending += data[start:z]
                if self.pending:
                    item = decode_packet(self.pending)
                    if item is None:
                        self.garbage += 1
                    else:
                        out.append(item)
                    self.pending = bytearray()
            start = z + 1
        return out
