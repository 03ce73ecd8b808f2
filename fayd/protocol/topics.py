"""The MQTT topic scheme (docs/protocol.md): pure string functions, no I/O.

<prefix>/dev/<device>/up/<kind>     device → fayd
<prefix>/dev/<device>/down/<kind>   fayd → device
<prefix>/daemon/status              fayd's own presence (retained, last will)
<prefix>/alerts/<id>                an alert (retained while it is open)
"""

from __future__ import annotations

from dataclasses import dataclass

UP = "up"
DOWN = "down"


@dataclass(frozen=True)
class Topics:
    prefix: str = "fayd/v1"

    def up(self, device: str, kind: str) -> str:
        return f"{self.prefix}/dev/{device}/{UP}/{kind}"

    def down(self, device: str, kind: str) -> str:
        return f"{self.prefix}/dev/{device}/{DOWN}/{kind}"

    @property
    def all_up(self) -> str:
        return f"{self.prefix}/dev/+/{UP}/+"

    def all_down(self, device: str) -> str:
        return f"{self.prefix}/dev/{device}/{DOWN}/+"

    @property
    def daemon_status(self) -> str:
        return f"{self.prefix}/daemon/status"

    @property
    def daemon_ping(self) -> str:
        """fayd's own heartbeat through the broker (fayd.transport.mqtt): only fayd's
        all-topics account may publish or read it."""
        return f"{self.prefix}/daemon/ping"

    def alert(self, alert_id: str) -> str:
        return f"{self.prefix}/alerts/{alert_id}"

    @property
    def all_alerts(self) -> str:
        return f"{self.prefix}/alerts/#"

    def parse(self, topic: str) -> tuple[str, str, str] | None:
        """(device, direction, kind) of a device topic, or None if it is not one. The device
        id is the topic's, unchecked: the hub checks it (check_device_id), so that a bad one
        (a space, 300 characters) is logged and answered with an error frame on its own
        ``down`` topic instead of dropped in silence."""
        head = f"{self.prefix}/dev/"
        if not topic.startswith(head):
            return None
        parts = topic[len(head) :].split("/")
        if len(parts) != 3 or parts[1] not in (UP, DOWN):
            return None
        return parts[0], parts[1], parts[2]
