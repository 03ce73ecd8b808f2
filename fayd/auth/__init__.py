"""Who may open fayd's doors: the HTTP token and request checks shared by every HTTP route
(control API, MCP over HTTP, and later the web page, avatar WebSocket and OpenAI endpoint),
and each device's secret, from which its MQTT password and its OTA signatures come.

The design and the attacks each part refuses are in docs/security.md."""

from fayd.auth.device_keys import (
    DAEMON_USER,
    HOME_ASSISTANT_USER,
    PROBE_USER,
    RESERVED_IDS,
    mqtt_password,
    new_device_secret,
    ota_message,
    ota_signature,
    serial_proof,
    verify_ota_signature,
    verify_serial_proof,
)
from fayd.auth.http_guard import HttpGuard, allowed_hosts
from fayd.auth.tokens import TOKEN_FILE, TokenUnreadable, ensure_token, read_token

__all__ = [
    "DAEMON_USER",
    "HOME_ASSISTANT_USER",
    "PROBE_USER",
    "RESERVED_IDS",
    "TOKEN_FILE",
    "HttpGuard",
    "TokenUnreadable",
    "allowed_hosts",
    "ensure_token",
    "mqtt_password",
    "new_device_secret",
    "ota_message",
    "ota_signature",
    "read_token",
    "serial_proof",
    "verify_ota_signature",
    "verify_serial_proof",
]
