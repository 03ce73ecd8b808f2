"""Wire protocol v1: frames as plain data, their bytes, and the MQTT topic scheme."""

from fayd.protocol.audio import AudioChunk, chunk_pcm
from fayd.protocol.codec import KINDS, MAX_JSON, decode, encode
from fayd.protocol.frames import (
    PROTOCOL_VERSION,
    ROLES,
    Ack,
    Action,
    Alert,
    AudioFormat,
    Challenge,
    Command,
    Error,
    FieldError,
    Heartbeat,
    Hello,
    Human,
    Presence,
    Proof,
    SensorEvent,
    TextIn,
    check_device_id,
    is_device_id,
)
from fayd.protocol.ports import Outgoing, Sender
from fayd.protocol.topics import Topics

__all__ = [
    "KINDS",
    "MAX_JSON",
    "PROTOCOL_VERSION",
    "ROLES",
    "Ack",
    "Action",
    "Alert",
    "AudioChunk",
    "AudioFormat",
    "Challenge",
    "Command",
    "Error",
    "FieldError",
    "Heartbeat",
    "Hello",
    "Human",
    "Outgoing",
    "Presence",
    "Proof",
    "Sender",
    "SensorEvent",
    "TextIn",
    "Topics",
    "check_device_id",
    "chunk_pcm",
    "decode",
    "encode",
    "is_device_id",
]
