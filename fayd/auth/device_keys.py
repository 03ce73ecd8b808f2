"""A device's secret and what is derived from it. Plain functions, no I/O.

Each device added with ``fayd devices add`` gets one random secret, kept in fayd's database
and in the device's ``config.json`` (``"key"``); the firmware computes the same values:

- its MQTT password is HMAC-SHA256(secret, "fayd-mqtt-password") in hex, so a password seen
  on an unencrypted LAN reveals nothing that could sign firmware;
- an OTA update's manifest is signed with HMAC-SHA256(secret, the message below); the
  device refuses an update whose signature does not match, whatever sent it.

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
#: Device ids that would collide with fayd's own broker identities.
RESERVED_IDS = frozenset({DAEMON_USER, PROBE_USER, HOME_ASSISTANT_USER})
MQTT_LABEL = b"fayd-mqtt-password"
OTA_LABEL = "fayd-ota-v1"


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
