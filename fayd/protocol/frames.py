"""JSON frames of wire protocol v1: plain data, no I/O.

Each frame kind is a frozen dataclass with ``KIND`` (the last segment of its MQTT topic),
``to_dict()`` and ``from_dict()``. Optional fields are omitted when None; unknown fields are
ignored on decode so newer devices can talk to older daemons. See docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fayd.errors import ProtocolError
from fayd.protocol.text import (
    MAX_NAME,
    MAX_TEXT,
    BadText,
    check_name,
    check_strings,
    check_text,
    shown,
)

PROTOCOL_VERSION = 1
DEVICE_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
ROLES = ("mic", "speaker", "robot", "screen", "sensor")
#: Sensor event sequence numbers are SQLite integers (signed 64-bit).
SEQ_RANGE = range(-(2**63), 2**63)


class FieldError(ProtocolError):
    """One field of a frame is wrong; the error frame names it (``field``)."""

    def __init__(self, message: str, field: str, code: str = "malformed") -> None:
        super().__init__(message, code)
        self.field = field


def _quoted(value: str, limit: int = 40) -> str:
    """A peer's string in a message: quoted, escaped, cut short."""
    return f"'{shown(value[:limit])}'" + ("…" if len(value) > limit else "")


def is_device_id(device: object) -> bool:
    # fullmatch: "$" alone would let a trailing newline through. Dots alone ("." "..") are
    # refused: an id becomes a file or folder name (provisioning, logs), where they mean
    # "here" and "the folder above".
    return (
        isinstance(device, str)
        and DEVICE_ID_RE.fullmatch(device) is not None
        and device.strip(".") != ""
    )


def check_device_id(device: str, field: str = "device") -> str:
    if not is_device_id(device):
        quoted = _quoted(device) if isinstance(device, str) else type(device).__name__
        size = f" ({len(device)} characters)" if isinstance(device, str) else ""
        message = f"bad device id {quoted}{size}: 1-64 of A-Z a-z 0-9 _ . -, not only dots"
        raise FieldError(message, field, "bad-id")
    return device


def _check(value: Any, typ: Any, name: str) -> Any:
    """Validate one decoded JSON value against a field's type."""
    origin = typing.get_origin(typ)
    if origin is typing.Union or isinstance(typ, type(int | None)):
        inner = [t for t in typing.get_args(typ) if t is not type(None)]
        return None if value is None else _check(value, inner[0], name)
    if origin is tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise FieldError(f"field {name!r} must be a list of strings", name)
        return tuple(value)
    if origin is dict or typ is dict:
        if not isinstance(value, dict):
            raise FieldError(f"field {name!r} must be an object", name)
        return value
    if dataclasses.is_dataclass(typ):
        if not isinstance(value, dict):
            raise FieldError(f"field {name!r} must be an object", name)
        return typ.from_dict(value)
    if typ in (int, float) and isinstance(value, bool):
        raise FieldError(f"field {name!r} must be a number", name)
    if typ is float and isinstance(value, int):
        try:
            return float(value)
        except OverflowError as exc:  # an integer of hundreds of digits
            raise FieldError(f"field {name!r} is out of range", name) from exc
    if not isinstance(value, typ):
        raise FieldError(f"field {name!r} must be {typ.__name__}", name)
    return value


def _check_texts(cls: type[Frame], values: dict[str, Any]) -> None:
    """Each string field within its limits: a free-text field (``TEXT_FIELDS``) up to
    MAX_TEXT characters, every other (a name, an id, a code) up to MAX_NAME without control
    characters; ``user`` is never blank, ``device`` is a device id. Strings inside objects
    must at least encode."""
    for name, value in values.items():
        try:
            if name == "device" and value is not None:
                check_device_id(value)
            elif isinstance(value, dict):
                check_strings(name, value)
            elif name in cls.TEXT_FIELDS and isinstance(value, str):
                check_text(name, value, MAX_TEXT, blank=True)
            elif isinstance(value, str):
                check_name(name, value, blank=name != "user")
            elif isinstance(value, tuple):
                for i, item in enumerate(value):
                    check_name(f"{name}[{i}]", item)
        except BadText as exc:
            message = f"{cls.KIND} frame: field '{exc.field}' {exc.problem}"
            raise FieldError(message, exc.field) from exc


class Frame:
    """Base of the JSON frames: generic dict conversion driven by the dataclass fields."""

    KIND: ClassVar[str] = ""
    #: Fields of free text (up to MAX_TEXT characters); every other string is a name.
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"v": PROTOCOL_VERSION}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Frame | AudioFormat):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Frame:
        hints = typing.get_type_hints(cls)
        values = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name in data:
                values[f.name] = _check(data[f.name], hints[f.name], f.name)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FieldError(f"{cls.KIND} frame lacks required field {f.name!r}", f.name)
        _check_texts(cls, values)
        try:
            return cls(**values)
        except ValueError as exc:  # __post_init__ checks
            raise ProtocolError(f"{cls.KIND} frame: {exc}") from exc


@dataclass(frozen=True)
class AudioFormat:
    """PCM format of a stream: v1 carries signed 16-bit little-endian mono only."""

    rate: int = 16000
    width: int = 2
    channels: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AudioFormat:
        names = ("rate", "width", "channels")
        fmt = cls(**{k: _check(data[k], int, k) for k in names if k in data})
        if (fmt.width, fmt.channels) != (2, 1) or not 8000 <= fmt.rate <= 48000:
            raise ProtocolError(f"unsupported audio format {fmt}: v1 is s16le mono 8-48 kHz")
        return fmt


@dataclass(frozen=True)
class Hello(Frame):
    """First frame of a device after it connects: who it is and what it can do."""

    KIND: ClassVar[str] = "hello"
    device: str
    roles: tuple[str, ...]
    fw: str = "unknown"
    #: Free-form capabilities, e.g. {"servos": 4, "screen": [240, 240], "wake": "hey_jarvis"}.
    caps: dict[str, Any] = field(default_factory=dict)
    #: Microphone format (role "mic").
    audio_in: AudioFormat | None = None
    #: Preferred speaker format (role "speaker"); fayd resamples to it.
    audio_out: AudioFormat | None = None
    #: The household member this device belongs to, if it is personal.
    user: str | None = None

    def __post_init__(self) -> None:
        check_device_id(self.device)


@dataclass(frozen=True)
class Presence(Frame):
    """Online/offline; retained, and the device's MQTT last will says online=false."""

    KIND: ClassVar[str] = "presence"
    online: bool


@dataclass(frozen=True)
class Heartbeat(Frame):
    KIND: ClassVar[str] = "heartbeat"
    seq: int = 0
    uptime_s: float | None = None
    rssi: int | None = None


@dataclass(frozen=True)
class TextIn(Frame):
    """Typed (or on-device recognised) text for a conversation turn."""

    KIND: ClassVar[str] = "text"
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset({"text"})
    text: str
    user: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise FieldError("text frame: text is empty", "text")
        if len(self.text) > MAX_TEXT:  # decode says so first; this for frames made in fayd
            raise FieldError(f"text frame: text longer than {MAX_TEXT} characters", "text")


@dataclass(frozen=True)
class SensorEvent(Frame):
    """A sensor reading or event, numbered so fayd can de-duplicate replays."""

    KIND: ClassVar[str] = "event"
    seq: int
    #: bp, motion, door, bed, panic, temperature, … (unknown names are kept as strings)
    sensor: str
    #: Device clock, Unix seconds, if the device has one.
    ts: float | None = None
    data: dict[str, Any] = field(default_factory=dict)
    #: Names the run of ``seq``: a device makes a new one when its counter starts again
    #: (its flash was erased), so its new events are not taken for replays. 1-16 characters.
    epoch: str | None = None

    def __post_init__(self) -> None:
        if self.seq not in SEQ_RANGE:
            raise FieldError(f"event seq {self.seq} is not a signed 64-bit integer", "seq")
        if self.epoch is not None and not 0 < len(self.epoch) <= 16:
            raise FieldError("event frame: epoch must be 1-16 characters", "epoch")


@dataclass(frozen=True)
class Command(Frame):
    """fayd → device: stop, volume, set, … (unknown names are answered with an error)."""

    KIND: ClassVar[str] = "command"
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Ack(Frame):
    """Acknowledges a frame by its id or sequence number."""

    KIND: ClassVar[str] = "ack"
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset({"detail"})
    ref: str
    ok: bool = True
    detail: str | None = None


@dataclass(frozen=True)
class Error(Frame):
    """Something the peer sent could not be handled; nothing else is affected."""

    KIND: ClassVar[str] = "error"
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset({"message"})
    code: str
    message: str
    ref: str | None = None
    #: The field of the refused frame that was wrong, when one was (``user``, ``data.note``).
    field: str | None = None

    @classmethod
    def of(cls, exc: ProtocolError, ref: str | None = None) -> Error:
        """The error frame that answers a refused frame."""
        field = exc.field[:MAX_NAME] if isinstance(exc, FieldError) else None
        return cls(exc.code, str(exc)[:MAX_TEXT], ref, field)


@dataclass(frozen=True)
class Action:
    """Semantic action of a reply (seed 000): each device maps it to its own motions."""

    code: str
    behavior: str
    affect: str = "neutral"
    intensity: float = 0.5
    priority: int = 50

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        return cls(
            code=_check(data.get("code"), str, "Action.code"),
            behavior=_check(data.get("behavior"), str, "Action.behavior"),
            affect=_check(data.get("affect", "neutral"), str, "Action.affect"),
            intensity=_check(data.get("intensity", 0.5), float, "Action.intensity"),
            priority=_check(data.get("priority", 50), int, "Action.priority"),
        )


@dataclass(frozen=True)
class Human:
    """Fay's ``{"Topic": "human", "Data": {…}}`` frame, field names exactly as Fay's.

    ``Key`` is "audio" (a spoken chunk; its PCM follows on the audio topic as ``Stream``
    from sequence ``Seq``), "text" (the whole reply as text) or "log" (a state such as
    "listening" or "thinking"). An ``IsEnd=1`` audio frame with no text closes a reply.
    """

    KIND: ClassVar[str] = "human"
    key: str
    text: str = ""
    value: str | None = None
    is_first: bool = False
    is_end: bool = False
    lips: tuple[dict[str, Any], ...] = ()
    sentiment: float | None = None
    action: Action | None = None
    #: Seconds of audio in this chunk.
    time: float | None = None
    stream: int | None = None
    seq: int | None = None
    conv_id: str | None = None
    conv_msg_no: int | None = None
    username: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"Key": self.key}
        if self.key == "audio":
            data.update(Text=self.text, IsFirst=int(self.is_first), IsEnd=int(self.is_end))
            data["Lips"] = list(self.lips)
        elif self.key == "text":
            data.update(Value=self.text, IsFirst=int(self.is_first), IsEnd=int(self.is_end))
        if self.value is not None:
            data["Value"] = self.value
        optional = {
            "Sentiment": self.sentiment,
            "Action": self.action.to_dict() if self.action else None,
            "Time": self.time,
            "Stream": self.stream,
            "Seq": self.seq,
            "CONV_ID": self.conv_id,
            "CONV_MSG_NO": self.conv_msg_no,
        }
        data.update({k: v for k, v in optional.items() if v is not None})
        out: dict[str, Any] = {"Topic": "human", "Data": data}
        if self.username is not None:
            out["Username"] = self.username
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Human:
        if data.get("Topic") != "human" or not isinstance(data.get("Data"), dict):
            raise ProtocolError('human frame must be {"Topic": "human", "Data": {...}}')
        d = data["Data"]
        key = _check(d.get("Key"), str, "Key")
        text = d.get("Text") if key == "audio" else d.get("Value") if key == "text" else ""
        lips = _check(d.get("Lips", []), list, "Lips")
        action = d.get("Action")
        return cls(
            key=key,
            text=_check(text or "", str, "Text"),
            value=_check(d.get("Value"), str | None, "Value") if key == "log" else None,
            is_first=bool(_check(d.get("IsFirst", 0), int, "IsFirst")),
            is_end=bool(_check(d.get("IsEnd", 0), int, "IsEnd")),
            lips=tuple(x for x in lips if isinstance(x, dict)),
            sentiment=_check(d.get("Sentiment"), float | None, "Sentiment"),
            action=Action.from_dict(_check(action, dict, "Action")) if action else None,
            time=_check(d.get("Time"), float | None, "Time"),
            stream=_check(d.get("Stream"), int | None, "Stream"),
            seq=_check(d.get("Seq"), int | None, "Seq"),
            conv_id=_check(d.get("CONV_ID"), str | None, "CONV_ID"),
            conv_msg_no=_check(d.get("CONV_MSG_NO"), int | None, "CONV_MSG_NO"),
            username=_check(data.get("Username"), str | None, "Username"),
        )


#: JSON frame classes by kind (the audio kind is binary: see fayd.protocol.audio).
@dataclass(frozen=True)
class Alert(Frame):
    """fayd → the household's devices (and, retained, ``<prefix>/alerts/<id>``): something is
    wrong — someone asked for help aloud; later, a care rule. Devices show or say it."""

    KIND: ClassVar[str] = "alert"
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset({"text"})
    id: str
    #: "emergency" (a call for help, a fall …); the care rules add theirs.
    kind: str
    #: "critical", "warning" or "info".
    severity: str
    #: What happened, in words (what was said, for an emergency).
    text: str
    at: float
    user: str | None = None
    device: str | None = None
    #: "open", then "acknowledged" and "resolved" (the care rules' escalation).
    state: str = "open"
    detail: dict[str, Any] = field(default_factory=dict)


#: A challenge's nonce: 128-256 random bits in lowercase hex.
NONCE_RE = re.compile(r"[0-9a-f]{32,64}")
#: A proof: an HMAC-SHA256 in lowercase hex.
PROOF_RE = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Challenge(Frame):
    """fayd → a board on a serial port, after its hello: prove you hold your device's key.
    The nonce is fresh for every hello and good for one answer. Serial only: over MQTT the
    broker's login is the proof."""

    KIND: ClassVar[str] = "challenge"
    nonce: str

    def __post_init__(self) -> None:
        if not NONCE_RE.fullmatch(self.nonce):
            raise FieldError("challenge nonce must be 32-64 lowercase hex digits", "nonce")


@dataclass(frozen=True)
class Proof(Frame):
    """A board → fayd, the answer to a challenge: ``mac`` is HMAC-SHA256(key,
    "fayd-serial-v1\\n<device>\\n<nonce>\\n") in hex (fayd.auth.device_keys.serial_proof)."""

    KIND: ClassVar[str] = "proof"
    device: str
    nonce: str
    mac: str

    def __post_init__(self) -> None:
        check_device_id(self.device)
        if not NONCE_RE.fullmatch(self.nonce):
            raise FieldError("proof nonce must be 32-64 lowercase hex digits", "nonce")
        if not PROOF_RE.fullmatch(self.mac):
            raise FieldError("proof mac must be 64 lowercase hex digits", "mac")


JSON_KINDS: dict[str, type] = {
    cls.KIND: cls
    for cls in (
        Hello,
        Presence,
        Heartbeat,
        TextIn,
        SensorEvent,
        Command,
        Ack,
        Error,
        Human,
        Alert,
        Challenge,
        Proof,
    )
}
