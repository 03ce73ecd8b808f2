"""What the Home Assistant bridge needs from the rest of fayd, as small Protocols: a way to
publish on the broker, and someone who acknowledges alerts (the care engine, later; today
``fayd.homeassistant.alerts.AnnouncedAlerts``)."""

from __future__ import annotations

from typing import Protocol


class Publisher(Protocol):
    """Publishes on fayd's broker without blocking (``fayd.transport.mqtt.MqttLink``)."""

    def publish(self, topic: str, payload: bytes, *, retain: bool) -> bool: ...


class AlertAcknowledger(Protocol):
    """Acknowledges an open alert on someone's behalf."""

    async def acknowledge(self, alert_id: str, by: str) -> bool:
        """True when the alert was open and is now acknowledged; False when there is no
        such open alert (unknown, or acknowledged or resolved already)."""
        ...
