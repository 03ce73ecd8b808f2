"""The MQTT topic scheme (docs/protocol.md): pure string functions, no I/O.

<prefix>/dev/<device>/up/<kind>     device → fayd
<prefix>/dev/<device>/down/<kind>   fayd → device
<prefix>/daemon/status              fayd's own presence (retained, last will)
<prefix>/alerts/<id>                an alert (retained while it is open)
"""

from __future__ import annotations

from dataclasses import dataclass

from fayd.protocol.frames import DEVICE_ID_RE

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

    def alert(self, alert_id: str) -> str:
        return f"{self.prefix}/alerts/{alert_id}"

    @property
    def all_alerts(self) -> str:
        return f"{self.prefix}/alerts/#"

    def parse(self, topic: str) -> tuple[str, str, str] | None:
        """(device, direction, kind) of a device topic, or None if it is not one."""
        head = f"{self.prefix}/dev/"
        if not topic.startswith(head):
            return None
        parts = topic[len(head) :].split("/")
        if len(parts) != 3 or parts[1] not in (UP, DOWN) or not DEVICE_ID_RE.match(parts[0]):
            return None
        return parts[0], parts[1], parts[2]
