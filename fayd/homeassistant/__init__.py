"""Home Assistant MQTT discovery (docs/homeassistant.md): fayd's devices, readings, people's
last activity and open alerts as Home Assistant entities, and alerts acknowledged from it."""

from fayd.homeassistant.account import Identity, ensure_identity, read_identity
from fayd.homeassistant.alerts import AnnouncedAlerts
from fayd.homeassistant.bridge import HomeAssistantBridge
from fayd.homeassistant.discovery import Entities, Naming
from fayd.homeassistant.ports import AlertAcknowledger, Publisher

__all__ = [
    "AlertAcknowledger",
    "AnnouncedAlerts",
    "Entities",
    "HomeAssistantBridge",
    "Identity",
    "Naming",
    "Publisher",
    "ensure_identity",
    "read_identity",
]
