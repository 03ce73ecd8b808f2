"""A board on the device end of a serial port (a socat PTY), in Python, for the tests: frames
in COBS packets and the handshake the firmware makes (hello → challenge → proof → ack) with
the device's key. Blocking reads with a deadline; no threads."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fayd.auth import serial_proof
from fayd.protocol import Challenge, Error, Hello, Proof, decode, encode
from fayd.protocol.serial import SerialDecoder, encode_packet

Frames = list[tuple[str, Any]]


class SerialBoard:
    """``key`` None: a board that cannot answer (it never sends a proof)."""

    def __init__(
        self, path: Path | str, device: str, key: str | None, roles: tuple[str, ...] = ("sensor",)
    ) -> None:
        self.device = device
        self.key = key
        self.roles = roles
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.decoder = SerialDecoder()
        self.frames: Frames = []  # every frame fayd sent, decoded, in order
        self.proofs: list[bytes] = []  # the proof packets written (a wire capture)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def packet(self, frame: Any) -> bytes:
        return encode_packet(frame.KIND, encode(frame))

    def send(self, frame: Any) -> None:
        self.write(self.packet(frame))

    def hello(self) -> bytes:
        return self.packet(Hello(self.device, self.roles, fw="test"))

    def read(self, done: Callable[[Frames], object], within_s: float = 30.0) -> Frames:
        """Read fayd's frames until ``done(frames)`` (all received so far) holds."""
        deadline = time.monotonic() + within_s
        while not done(self.frames):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.device}: not done after {within_s} s: {self.frames}")
            self._read_some(min(left, 0.2))
        return self.frames

    def wait(self, kind: str, within_s: float = 30.0, after: int | None = None) -> Any:
        """The first frame of ``kind`` from index ``after`` on (default: from now)."""
        start = len(self.frames) if after is None else after
        found: list[Any] = []

        def seen(frames: Frames) -> bool:
            found[:] = [f for k, f in frames[start:] if k == kind]
            return bool(found)

        self.read(seen, within_s)
        return found[0]

    def drain(self, for_s: float) -> Frames:
        """Whatever fayd sends within ``for_s`` (for checking that it sends nothing more)."""
        deadline = time.monotonic() + for_s
        while (left := deadline - time.monotonic()) > 0:
            self._read_some(left)
        return self.frames

    def challenged(self, within_s: float = 60.0, before: bytes = b"") -> Challenge:
        """Say hello (after ``before``: line noise, a boot log) until fayd challenges; it may
        open the port after our first bytes. The latest challenge: a later hello's voids
        the earlier ones."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            start = len(self.frames)
            self.write(before + self.hello())
            try:
                self.wait("challenge", within_s=1.0, after=start)
            except TimeoutError:
                continue
            self.drain(0.1)
            return [f for k, f in self.frames[start:] if k == "challenge"][-1]
        raise TimeoutError(f"{self.device}: no challenge within {within_s} s: {self.frames}")

    def prove(self, within_s: float = 60.0) -> Challenge:
        """Say hello, answer fayd's challenge with the key and wait for fayd's ack of the
        proof, again until it comes. Returns the challenge answered."""
        assert self.key is not None, "a board without a key cannot prove anything"
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            challenge = self.challenged(max(deadline - time.monotonic(), 1.0))
            if self.taken(challenge):
                return challenge
        raise TimeoutError(f"{self.device}: fayd took no proof within {within_s} s: {self.frames}")

    def taken(self, challenge: Challenge, key: str | None = None) -> bool:
        """Answer ``challenge``; True when fayd acks the proof, False when it refuses it."""
        mark = len(self.frames)
        self.answer(challenge, key)
        frames = self.read(lambda fs: self._answered(fs[mark:], challenge), 10.0)
        return self._answered(frames[mark:], challenge) == "ack"

    def answer(self, challenge: Challenge, key: str | None = None) -> bytes:
        """Send the proof for ``challenge`` (made with ``key``, default the board's)."""
        mac = serial_proof(key or self.key or "", self.device, challenge.nonce)
        packet = self.packet(Proof(self.device, challenge.nonce, mac))
        self.proofs.append(packet)
        self.write(packet)
        return packet

    def errors(self, start: int = 0) -> list[Error]:
        return [f for k, f in self.frames[start:] if k == "error"]

    def acked(self, ref: str, within_s: float = 30.0) -> Any:
        """fayd's ack of ``ref`` (an event's seq): the frame was taken (and stored)."""
        self.read(lambda fs: any(k == "ack" and f.ref == ref for k, f in fs), within_s)
        return next(f for k, f in self.frames if k == "ack" and f.ref == ref)

    def close(self) -> None:
        os.close(self.fd)

    def _answered(self, frames: Frames, challenge: Challenge) -> str:
        for kind, frame in frames:
            if kind == "ack" and frame.ref == challenge.nonce:
                return "ack"
            if kind == "error" and frame.code == "unauthorized":
                return "refused"
        return ""

    def _read_some(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        for item in self.decoder.feed(data):
            if isinstance(item, tuple):
                self.frames.append((item[0], decode(*item)))
