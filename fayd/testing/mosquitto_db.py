"""What mosquitto keeps: its persistence file read as it is on disk, for tests of the
broker's quotas. mosquitto 2.0 writes format 6: a 15-byte magic, a CRC and the version,
then chunks (type and length, big-endian); a message store chunk holds the message's fixed
fields, its source id and user name, topic and payload; a retain chunk names a stored
message by its id (written in the host's byte order, as the C struct is)."""

from __future__ import annotations

import os
import signal
import struct
import time
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"\x00\xb5\x00mosquitto db"
CHUNK = struct.Struct(">II")
MSG_STORE, RETAIN = 2, 4
#: PF_msg_store: store_id (host order), expiry_time, then big-endian payloadlen,
#: source_mid, source_id_len, source_username_len, topic_len, source_port, qos, retain.
MSG_FIXED = struct.Struct("=Qq")
MSG_FIELDS = struct.Struct(">IHHHHHBB")


@dataclass(frozen=True)
class Stored:
    topic: str
    size: int
    username: str


def retained(path: Path) -> dict[str, Stored]:
    """The retained messages in a mosquitto.db, by topic."""
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise ValueError(f"{path} is not a mosquitto database")
    version = struct.unpack(">I", data[19:23])[0]
    if version != 6:
        raise ValueError(f"{path}: mosquitto database format {version}, not 6")
    stored: dict[int, Stored] = {}
    kept: list[int] = []
    at = 23
    while at + CHUNK.size <= len(data):
        kind, length = CHUNK.unpack_from(data, at)
        body = data[at + CHUNK.size : at + CHUNK.size + length]
        at += CHUNK.size + length
        if kind == MSG_STORE:
            store_id, _ = MSG_FIXED.unpack_from(body, 0)
            size, _, id_len, user_len, topic_len, *_ = MSG_FIELDS.unpack_from(body, 16)
            start = 32 + id_len
            user = body[start : start + user_len].decode(errors="replace")
            topic = body[start + user_len : start + user_len + topic_len].decode(errors="replace")
            stored[store_id] = Stored(topic, size, user)
        elif kind == RETAIN:
            kept.append(struct.unpack_from("=Q", body, 0)[0])
    return {stored[i].topic: stored[i] for i in kept if i in stored}


def save_now(pid: int, path: Path, within_s: float = 20.0) -> None:
    """Make the mosquitto of ``pid`` write its database (SIGUSR1), and wait until the file
    at ``path`` is a new one (mosquitto writes a new file and renames it over the old)."""

    def stamp() -> tuple[int, int, int] | None:
        try:
            info = path.stat()
        except FileNotFoundError:
            return None
        return info.st_ino, info.st_mtime_ns, info.st_size

    before = stamp()
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + within_s
    while stamp() in (before, None):
        if time.monotonic() > deadline:
            raise TimeoutError(f"mosquitto (pid {pid}) did not write {path} in {within_s} s")
        time.sleep(0.05)
