"""fayd in Home Assistant: publishes the discovery configs and states of fayd's devices,
readings, people's last activity and open alerts (fayd.homeassistant.discovery), takes
the alert buttons' presses to the ``AlertAcknowledger``, and removes a forgotten device's
entities (an empty retained config, as HA documents).

Everything it publishes is retained, so HA (re)starting sees the current state; when HA
says "online" on its birth topic everything is published again all the same, as HA
recommends. At connect, fayd reads back its own retained configs: those of a device
forgotten while fayd was down, and buttons of alerts no longer open, are removed then.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from typing import Any

from fayd.homeassistant.alerts import OPEN, read_alert
from fayd.homeassistant.discovery import Entities, Entity, Naming, key
from fayd.homeassistant.ports import AlertAcknowledger, Publisher
from fayd.homeassistant.readings import readings_of
from fayd.protocol import Alert
from fayd.protocol.text import BadText, check_name

log = logging.getLogger(__name__)

#: Who acknowledged, as the alert's detail says.
BY = "homeassistant"
#: Reading entities per device at most: a faulty sensor inventing fields makes no more.
MAX_READINGS = 32
#: Events that say nothing of what a person did.
NOT_ACTIVITY = frozenset({"battery", "dropped"})
#: Acknowledgements waiting for the acknowledger at most (a flood is dropped, logged).
ACK_QUEUE = 64


def iso(at: float) -> str:
    """A time as HA's timestamp sensors want it: ISO 8601 with its zone."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def dumps(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


class HomeAssistantBridge:
    def __init__(
        self,
        naming: Naming,
        publisher: Publisher,
        acknowledger: AlertAcknowledger,
        known: set[str] | None = None,
    ) -> None:
        self.naming = naming
        self.entities = Entities(naming)
        self.publisher = publisher
        self.acknowledger = acknowledger
        #: Devices fayd knows (a key, settings or a hello); only they get entities.
        self.known: set[str] = set(known or ())
        #: What is published and retained now, by topic (sent again at HA's birth).
        self.published: dict[str, bytes] = {}
        #: Each device's topics (configs and states), by its key: removed when forgotten.
        self.owned: dict[str, set[str]] = {}
        self.blocks: dict[str, dict[str, Any]] = {}
        #: The time of the newest value on each state topic: a replayed old event (a device
        #: emptying its buffer after an outage) does not move a value back in time.
        self.latest: dict[str, float] = {}
        self.alerts: dict[str, Alert] = {}
        self.acks: asyncio.Queue[str] = asyncio.Queue(ACK_QUEUE)
        self.connects = 0
        #: Devices that reached MAX_READINGS (said once in the log).
        self.capped: set[str] = set()
        #: Presses of alert buttons taken in, acknowledged and refused (fayd status).
        self.asked = 0
        self.acknowledged = 0
        self.refused = 0

    # --- publishing --------------------------------------------------------------------
    def _put(self, topic: str, payload: bytes, owner: str | None = None) -> None:
        if owner is not None:
            self.owned.setdefault(owner, set()).add(topic)
        if self.published.get(topic) == payload:
            return
        self.published[topic] = payload
        self.publisher.publish(topic, payload, retain=True)

    def _clear(self, topic: str) -> None:
        self.published.pop(topic, None)
        self.latest.pop(topic, None)
        self.publisher.publish(topic, b"", retain=True)

    def _config(self, entity: Entity, owner: str | None = None) -> None:
        self._put(self.naming.config_topic(entity), dumps(entity.config), owner)

    def _state(self, topic: str, data: dict[str, Any], at: float, owner: str | None) -> bool:
        """Publish ``data`` on ``topic`` unless a newer value is there already."""
        if at < self.latest.get(topic, float("-inf")):
            return False
        self.latest[topic] = at
        self._put(topic, dumps(data), owner)
        return True

    # --- what fayd tells it ------------------------------------------------------------
    def device(self, device: str, roles: tuple[str, ...], fw: str, online: bool) -> None:
        """A device said hello (or was known at start)."""
        self.known.add(device)
        self.blocks[device] = self.entities.device(device, roles, fw)
        self._config(self.entities.connected(device, self.blocks[device]), key(device))
        if "sensor" in roles:
            self._config(self.entities.last_event(device, self.blocks[device]), key(device))
        self.presence(device, online)

    def presence(self, device: str, online: bool) -> None:
        if device not in self.known:  # forgotten: its last will must not bring it back
            return
        if device not in self.blocks:
            self.device(device, (), "", online)
            return
        owner = key(device)
        self._put(self.naming.availability(device), b"online" if online else b"offline", owner)
        self._put(self.naming.device_state(device, "presence"), dumps({"online": online}), owner)

    def event(
        self, device: str, user: str | None, sensor: str, data: dict[str, Any], at: float, text: str
    ) -> None:
        """A sensor event fayd stored (new, not a replay), at its time ``at``."""
        if device not in self.known:
            return
        if device not in self.blocks:
            self.device(device, ("sensor",), "", True)
        owner, block = key(device), self.blocks[device]
        self._config(self.entities.last_event(device, block), owner)
        last = {"sensor": sensor, "text": text, "at": iso(at), "data": data}
        self._state(self.naming.device_state(device, "last_event"), last, at, owner)
        for reading in readings_of(sensor, data):
            entity = self.entities.reading(device, block, reading.object, reading.kind)
            if self.naming.config_topic(entity) not in self.published and self._full(owner):
                continue
            self._config(entity, owner)
            topic = self.naming.reading_state(device, reading.object)
            self._state(topic, {"value": reading.value, "at": iso(at)}, at, owner)
        if user and sensor not in NOT_ACTIVITY:
            self._config(self.entities.activity(user))
            what = {"at": iso(at), "sensor": sensor, "device": device, "text": text}
            self._state(self.naming.state("person", key(user), "activity"), what, at, None)

    def _full(self, owner: str) -> bool:
        configs = [t for t in self.owned.get(owner, ()) if t.endswith("/config")]
        if len(configs) < MAX_READINGS + 2:  # + connected and last event
            return False
        if owner not in self.capped:  # once: a faulty sensor would say it at every event
            self.capped.add(owner)
            log.warning("home assistant: device %s has %d entities: no more", owner, len(configs))
        return True

    def forget_missing(self, known: set[str]) -> None:
        """fayd's devices are now ``known``: the entities of any other are removed."""
        self.known = set(known)
        keep = {key(d) for d in known}
        for owner in [o for o in self.owned if o not in keep]:
            topics = self.owned.pop(owner)
            for topic in sorted(topics, key=lambda t: not t.endswith("/config")):
                self._clear(topic)  # configs first: HA drops the entity, then its states
            self.blocks = {d: b for d, b in self.blocks.items() if key(d) != owner}
            log.info("home assistant: removed the entities of forgotten device %s", owner)

    # --- what comes from the broker (fayd.transport.mqtt.Listener) ----------------------
    async def message(self, topic: str, payload: bytes, retained: bool) -> None:
        naming = self.naming
        if topic == naming.ack_topic:
            self._asked(payload)
        elif topic == naming.birth:
            if payload.strip() == b"online":
                self._publish_all()
        elif topic.startswith(f"{naming.discovery}/") and topic.endswith("/config"):
            if retained and topic not in self.published and payload:
                self._adopt(topic, payload)
        else:
            found = read_alert(topic, payload, naming.prefix)
            if found is not None:
                self._alert(*found)

    def _asked(self, payload: bytes) -> None:
        try:
            alert_id = check_name("alert id", payload.decode("utf-8").strip())
        except (UnicodeDecodeError, BadText) as exc:
            self.refused += 1
            log.warning("home assistant: acknowledgement refused: %s", exc)
            return
        try:
            self.acks.put_nowait(alert_id)
            self.asked += 1
        except asyncio.QueueFull:
            self.refused += 1
            log.warning("home assistant: too many acknowledgements waiting; %s dropped", alert_id)

    def connected(self) -> None:
        """The link (re)connected. After the first time the broker may have restarted
        without what it retained (mosquitto saves it only now and then): all again."""
        self.connects += 1
        if self.connects > 1:
            self._publish_all()

    def _publish_all(self) -> None:
        """HA (re)started: everything again, configs before states."""
        for topic, payload in sorted(self.published.items(), key=lambda i: "/config" not in i[0]):
            self.publisher.publish(topic, payload, retain=True)

    def _adopt(self, topic: str, payload: bytes) -> None:
        """A config retained from an earlier run: kept for its device, or removed when its
        device was forgotten (or its alert is no longer open) while fayd was down."""
        try:
            config = json.loads(payload)
            ident = config["device"]["identifiers"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            return
        node = self.naming.node
        availability = config.get("availability")
        named = [config.get("state_topic"), config.get("json_attributes_topic")]
        if isinstance(availability, list):
            named += [a.get("topic") for a in availability if isinstance(a, dict)]
        mine = self.naming.state("")
        ours = [topic, *(t for t in named if isinstance(t, str) and t.startswith(mine))]
        if ident == node:
            alert_id = config.get("payload_press")
            if config.get("command_topic") and alert_id not in self.alerts:
                for gone in ours:
                    self._clear(gone)
            return
        owner = ident[len(node) + 1 :] if ident.startswith(f"{node}_") else None
        if owner is None:
            return
        if owner in {key(d) for d in self.known}:
            self.owned.setdefault(owner, set()).update(ours)
        else:
            for gone in ours:
                self._clear(gone)

    def _alert(self, alert_id: str, alert: Alert | None) -> None:
        naming = self.naming
        if alert is not None and alert.state == OPEN:
            self.alerts[alert_id] = alert
            self._config(self.entities.acknowledge(alert_id, alert.kind, alert.text))
            self._put(naming.state("alert", key(alert_id)), dumps(self._shown(alert)))
        elif self.alerts.pop(alert_id, None) is not None:
            button = self.entities.acknowledge(alert_id, "", "")
            self._clear(naming.config_topic(button))
            self._clear(naming.state("alert", key(alert_id)))
        self._summary()

    def _shown(self, alert: Alert) -> dict[str, Any]:
        shown = {k: v for k, v in alert.to_dict().items() if k != "v" and v is not None}
        return {**shown, "at": iso(alert.at)}

    def _summary(self) -> None:
        alerts = sorted(self.alerts.values(), key=lambda a: a.at)
        summary = {"open": len(alerts), "alerts": [self._shown(a) for a in alerts]}
        self._put(self.naming.state("alerts"), dumps(summary))

    # --- the supervised task -----------------------------------------------------------
    async def run(self) -> None:
        """Publishes fayd's own entities, then acknowledges what HA's buttons ask, forever."""
        self._config(self.entities.fayd_running())
        self._config(self.entities.open_alerts())
        self._summary()
        while True:
            alert_id = await self.acks.get()
            if await self.acknowledger.acknowledge(alert_id, BY):
                self.acknowledged += 1
            else:
                log.warning("home assistant asked to acknowledge %s: no such open alert", alert_id)

    def status(self) -> dict[str, Any]:
        """For ``fayd status``."""
        return {
            "node": self.naming.node,
            "discovery_prefix": self.naming.discovery,
            "retained": len(self.published),
            "open_alerts": len(self.alerts),
            "asked": self.asked,
            "acknowledged": self.acknowledged,
            "refused": self.refused,
        }
