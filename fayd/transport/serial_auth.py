"""Who is on a serial port: a board proves it holds its device's key before fayd takes any
of its frames (docs/security.md, "Serial: a challenge before any frame").

After a board's ``hello`` fayd looks up the key ``fayd devices add`` made for that id and
sends a ``challenge`` with a fresh random nonce; the board answers ``proof`` with
HMAC-SHA256(key, "fayd-serial-v1\\n<device>\\n<nonce>\\n"). Each nonce is good for one
answer, right or wrong, and a new hello gets a new one, so a proof seen on the wire is
worth nothing later. Plain state, no I/O: :class:`fayd.transport.serial.SerialLink` drives it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fayd.auth.device_keys import verify_serial_proof
from fayd.protocol import Challenge, Proof

#: device id → its key (``fayd devices add``), or None for a device never added.
Keys = Callable[[str], Awaitable[str | None]]
#: Random bytes per challenge: 128 bits never repeat in practice.
NONCE_BYTES = 16
#: The error code of every refusal of the handshake (the message says why).
UNAUTHORIZED = "unauthorized"


@dataclass(frozen=True)
class Claim:
    """A hello waiting for its proof: the hello itself is taken only once the proof holds."""

    device: str
    hello: bytes
    nonce: str
    secret: str


class Refused(Exception):
    """A proof that does not hold; ``why`` is a short reason for logs and status."""

    def __init__(self, device: str, why: str, message: str) -> None:
        super().__init__(message)
        self.device = device
        self.why = why


def no_key(device: str) -> Refused:
    return Refused(
        device,
        "no key",
        f"device {device!r} has no key: fayd takes no frames from it until it is added "
        f"with fayd devices add {device}",
    )


class Gate:
    """The handshake of one port: at most one challenge outstanding."""

    def __init__(self) -> None:
        self.claim: Claim | None = None

    def challenge(self, device: str, hello: bytes, secret: str) -> Challenge:
        """A new challenge for this hello; any earlier one is void."""
        nonce = secrets.token_hex(NONCE_BYTES)
        self.claim = Claim(device, hello, nonce, secret)
        return Challenge(nonce)

    def check(self, proof: Proof) -> Claim:
        """The claim this proof answers, or Refused. The challenge is used up either way."""
        claim, self.claim = self.claim, None
        if claim is None:
            raise Refused(proof.device, "no challenge", "a proof with no challenge: say hello")
        if proof.device != claim.device or proof.nonce != claim.nonce:
            raise Refused(
                claim.device,
                "stale proof",
                f"a proof for another challenge than the one sent to {claim.device!r}: each "
                "challenge is answered once; say hello for a new one",
            )
        if not verify_serial_proof(claim.secret, claim.device, claim.nonce, proof.mac):
            raise Refused(
                claim.device,
                "wrong key",
                f"wrong proof for {claim.device!r}: the key in its config.json is not the one "
                f"fayd holds (fayd devices add {claim.device} --new-key gives both a new one)",
            )
        return claim

    def reset(self) -> None:
        self.claim = None


class Once:
    """Log lines said once per (device, reason) until the port is reopened: a refused
    board that says hello every few seconds must not fill the log. Bounded, so a board
    that makes up a new id each time cannot grow it."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.said: set[tuple[str, str]] = set()

    def first(self, device: str, why: str) -> bool:
        if (device, why) in self.said:
            return False
        if len(self.said) >= self.size:
            self.said.clear()
        self.said.add((device, why))
        return True

    def clear(self) -> None:
        self.said.clear()
