"""A device's secret and what is derived from it. Plain functions, no I/O.

Each device added with ``fayd devices add`` gets one random secret, kept in fayd's database
and in the device's ``config.json`` (``"key"``); the firmware computes the same values:

- its MQTT password is HMAC-SHA256(secret, "fayd-mqtt-password") in hex, so a password seen
  on an unencrypted LAN reveals nothing that could sign firmware;
- an OTA update's manifest is signed with HMAC-SHA256(secret, the message below); the
  device refuses an update whose signature does not match, whatever sent it;
- over serial, a board proves it holds the secret by answering fayd's fresh nonce with
  HMAC-SHA256(secret, "fayd-serial-v1\n<device>\n<nonce>\n") before fayd takes its frames.

HMAC-SHA256 is what MicroPython can compute (hashlib.sha256 on every port), which rules out
public-key signatures on the device."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

#: The broker user fayd itself logs in as; no device may take this name.
DAEMON_USER = "fayd"
#: The broker user fayd logs in as to see that a reload of the accounts has taken effect.
PROBE_USER = "fayd-probe"
#: The broker user Home Assistant logs in as (docs/homeassistant.md).
HOME_ASSISTANT_USER = "homeassistant"
#: The administrator's own conversation (fayd.agent.ports.CLI): a device under that id would
#: speak with the administrator's authority.
CLI_CONVERSATION = "cli"
#: Device ids that would collide with fayd's own broker identities or conversations.
RESERVED_IDS = frozenset({DAEMON_USER, PROBE_USER, HOME_ASSISTANT_USER, CLI_CONVERSATION})
MQTT_LABEL = b"fayd-mqtt-password"
OTA_LABEL = "fayd-ota-v1"
SERIAL_LABEL = "fayd-serial-v1"


def new_device_secret() -> str:
    """256 random bits as 64 hex digits (printable, easy to paste into config.json)."""
    return secrets.token_hex(32)


def _mac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode("ascii"), message, hashlib.sha256).hexdigest()


def mqtt_password(secret: str) -> str:
    return _mac(secret, MQTT_LABEL)


def ota_message(device: str, version: str, files: Iterable[tuple[str, int, str]]) -> bytes:
    """What an OTA signature covers: the device, the version and every file's path, size and
    SHA-256, one per line in path order. The files' bytes are covered through their hashes,
    which the device checks before it switches to the update."""
    lines = [OTA_LABEL, device, version]
    lines += [f"{path} {size} {sha}" for path, size, sha in sorted(files)]
    return "\n".join(lines).encode()


def ota_signature(
    secret: str, device: str, version: str, files: Iterable[tuple[str, int, str]]
) -> str:
    return _mac(secret, ota_message(device, version, files))


def verify_ota_signature(
    secret: str, device: str, version: str, files: Iterable[tuple[str, int, str]], signature: str
) -> bool:
    expected = ota_signature(secret, device, version, files)
    return hmac.compare_digest(expected, signature if isinstance(signature, str) else "")


def serial_proof_message(device: str, nonce: str) -> bytes:
    """What a board's answer to fayd's serial challenge covers. Its own label: a proof can
    never pass for an MQTT password or an OTA signature, nor they for a proof. Only boards
    make proofs (fayd never answers a challenge), so one reflected back at fayd gets
    nothing."""
    return f"{SERIAL_LABEL}\n{device}\n{nonce}\n".encode()


def serial_proof(secret: str, device: str, nonce: str) -> str:
    return _mac(secret, serial_proof_message(device, nonce))


def verify_serial_proof(secret: str, device: str, nonce: str, proof: str) -> bool:
    expected = serial_proof(secret, device, nonce)
    # compare_digest refuses non-ASCII str: such a proof is simply wrong.
    if not isinstance(proof, str) or not proof.isascii():
        return False
    return hmac.compare_digest(expected, proof)
