"""Home Assistant MQTT discovery payloads, as HA documents them: plain data, no I/O.

https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery — each entity is one
retained JSON object on ``<discovery prefix>/<component>/<node_id>/<object_id>/config``;
an empty retained message there removes it. fayd's node id is ``fayd_<8 hex>``, made once
per install (fayd.homeassistant.account), so every ``unique_id`` stays the same across
restarts and two fayd boxes on one broker never share one.

The states live under fayd's own prefix, ``<prefix>/ha/…``, retained, as JSON read by each
entity's ``value_template``, with the same topic as its ``json_attributes_topic`` (so HA
shows the time and the details with the value). Every entity is unavailable while fayd is
down (fayd's status topic, set by its MQTT last will); a device's entities other than its
"Connected" sensor are unavailable while the device is offline.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from fayd.homeassistant.readings import Kind

#: HA's node_id and object_id: "[a-zA-Z0-9_-]+" (its discovery topic pattern).
SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MANUFACTURER = "fayd"
#: Availability from fayd's status topic ({"v":1,"online":true|false}).
ONLINE_TEMPLATE = "{{ 'online' if value_json.online else 'offline' }}"
ON_TEMPLATE = "{{ 'ON' if value_json.online else 'OFF' }}"
#: Longest entity name sent (an alert's text is cut to fit).
MAX_NAME = 80


def key(text: str) -> str:
    """An id as HA's topics allow: itself when it fits, else its safe characters and a
    hash of the whole, so two ids ("a.b", "a_b") never share a key."""
    if SAFE.match(text):
        return text
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", text)[:40]
    return f"{safe}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class Entity:
    """One discovery message: where it goes and what it says."""

    component: str
    object_id: str
    config: dict[str, Any]


@dataclass(frozen=True)
class Naming:
    """Topics and ids of one fayd install."""

    node: str
    prefix: str = "fayd/v1"
    discovery: str = "homeassistant"
    version: str = ""

    def config_topic(self, entity: Entity) -> str:
        return f"{self.discovery}/{entity.component}/{self.node}/{entity.object_id}/config"

    @property
    def configs(self) -> str:
        """Every config topic of this install (fayd reads its retained ones at connect)."""
        return f"{self.discovery}/+/{self.node}/+/config"

    @property
    def birth(self) -> str:
        """HA says "online" here when it starts: fayd then publishes everything again."""
        return f"{self.discovery}/status"

    @property
    def daemon_status(self) -> str:
        return f"{self.prefix}/daemon/status"

    @property
    def ack_topic(self) -> str:
        """The alert buttons' command topic: the payload is the alert's id."""
        return f"{self.prefix}/ha/alerts/ack"

    def state(self, *parts: str) -> str:
        return "/".join((self.prefix, "ha", *parts))

    def device_state(self, device: str, what: str) -> str:
        return self.state("dev", key(device), what)

    def reading_state(self, device: str, reading: str) -> str:
        return self.device_state(device, f"reading/{key(reading)}")

    def availability(self, device: str) -> str:
        return self.device_state(device, "availability")

    def device_id(self, device: str) -> str:
        """The HA device identifier of a fayd device."""
        return f"{self.node}_{key(device)}"

    # --- what HA's account may do (the broker's ACL; docs/homeassistant.md) ---------------
    @property
    def ha_reads(self) -> tuple[str, ...]:
        # The household's alerts too: Home Assistant is the household's own dashboard (a
        # device account no longer reads them: docs/security.md, *Who is who*).
        alerts = f"{self.prefix}/alerts/#"
        return (f"{self.discovery}/#", self.state("#"), self.daemon_status, alerts)

    @property
    def ha_writes(self) -> tuple[str, ...]:
        return (self.birth, self.ack_topic)


class Entities:
    """The discovery configs of one install's entities."""

    def __init__(self, naming: Naming) -> None:
        self.n = naming

    # --- the devices HA shows ----------------------------------------------------------
    def hub(self) -> dict[str, Any]:
        """fayd itself: the household's entities (people, alerts) belong to it."""
        return {
            "identifiers": [self.n.node],
            "name": "fayd",
            "manufacturer": MANUFACTURER,
            "model": "fayd companion daemon",
            "sw_version": self.n.version,
        }

    def device(self, device: str, roles: tuple[str, ...] = (), fw: str = "") -> dict[str, Any]:
        block: dict[str, Any] = {
            "identifiers": [self.n.device_id(device)],
            "name": device,
            "manufacturer": MANUFACTURER,
            "model": f"fayd device ({', '.join(roles)})" if roles else "fayd device",
            "via_device": self.n.node,
        }
        if fw:
            block["sw_version"] = fw
        return block

    def _base(self, object_id: str, name: str, device: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "unique_id": f"{self.n.node}_{object_id}",
            "device": device,
            "origin": {"name": "fayd", "sw_version": self.n.version},
            "qos": 1,
        }

    def _fayd_up(self) -> dict[str, Any]:
        return {"topic": self.n.daemon_status, "value_template": ONLINE_TEMPLATE}

    def _available(self, device: str | None = None) -> dict[str, Any]:
        """Available while fayd is up (and ``device`` online)."""
        topics = [self._fayd_up()]
        if device is not None:
            topics.append({"topic": self.n.availability(device)})
        return {"availability": topics, "availability_mode": "all"}

    def _json_state(self, topic: str, template: str) -> dict[str, Any]:
        return {"state_topic": topic, "value_template": template, "json_attributes_topic": topic}

    # --- entities ----------------------------------------------------------------------
    def fayd_running(self) -> Entity:
        obj = "fayd_running"
        config = self._base(obj, "Running", self.hub())
        config.update(state_topic=self.n.daemon_status, value_template=ON_TEMPLATE)
        config.update(device_class="running", entity_category="diagnostic")
        return Entity("binary_sensor", obj, config)

    def connected(self, device: str, block: dict[str, Any]) -> Entity:
        """On while the device is connected; available whenever fayd is, so HA shows a
        device that went away as "Disconnected", not as unknown."""
        obj = f"{key(device)}_connected"
        config = self._base(obj, "Connected", block)
        topic = self.n.device_state(device, "presence")
        config.update(self._json_state(topic, ON_TEMPLATE), **self._available())
        config.update(device_class="connectivity", entity_category="diagnostic")
        return Entity("binary_sensor", obj, config)

    def last_event(self, device: str, block: dict[str, Any]) -> Entity:
        """The sensor of the device's last event ("door", "panic"); its time, words and
        data are attributes."""
        obj = f"{key(device)}_last_event"
        config = self._base(obj, "Last event", block)
        topic = self.n.device_state(device, "last_event")
        config.update(self._json_state(topic, "{{ value_json.sensor }}"), **self._available(device))
        config["icon"] = "mdi:history"
        return Entity("sensor", obj, config)

    def reading(self, device: str, block: dict[str, Any], obj_name: str, kind: Kind) -> Entity:
        obj = f"{key(device)}_{key(obj_name)}"
        config = self._base(obj, kind.name, block)
        topic = self.n.reading_state(device, obj_name)
        if kind.component == "binary_sensor":
            template = "{{ 'ON' if value_json.value else 'OFF' }}"
        else:
            template = "{{ value_json.value }}"
            config["state_class"] = "measurement"
            if kind.unit:
                config["unit_of_measurement"] = kind.unit
        config.update(self._json_state(topic, template), **self._available(device))
        if kind.device_class:
            config["device_class"] = kind.device_class
        if kind.device_class == "battery":
            config["entity_category"] = "diagnostic"
        return Entity(kind.component, obj, config)

    def activity(self, user: str) -> Entity:
        """A person's last activity: the time of the last event of one of their devices."""
        obj = f"person_{key(user)}_activity"
        config = self._base(obj, f"{user} last activity", self.hub())
        topic = self.n.state("person", key(user), "activity")
        config.update(self._json_state(topic, "{{ value_json.at }}"), **self._available())
        config["device_class"] = "timestamp"
        return Entity("sensor", obj, config)

    def open_alerts(self) -> Entity:
        obj = "open_alerts"
        config = self._base(obj, "Open alerts", self.hub())
        topic = self.n.state("alerts")
        config.update(self._json_state(topic, "{{ value_json.open }}"), **self._available())
        config.update(state_class="measurement", icon="mdi:alert")
        return Entity("sensor", obj, config)

    def acknowledge(self, alert_id: str, kind: str, text: str) -> Entity:
        """A button that acknowledges one open alert (it goes when the alert does)."""
        obj = f"alert_{key(alert_id)}_ack"
        name = f"Acknowledge {kind}: {text}"
        if len(name) > MAX_NAME:
            name = name[: MAX_NAME - 1] + "…"
        config = self._base(obj, name, self.hub())
        config.update(command_topic=self.n.ack_topic, payload_press=alert_id, retain=False)
        config.update(json_attributes_topic=self.n.state("alert", key(alert_id)))
        config.update(self._available(), icon="mdi:bell-check")
        return Entity("button", obj, config)
