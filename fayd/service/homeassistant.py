"""Wires Home Assistant discovery (fayd.homeassistant) into the daemon when
``homeassistant.enabled``: its broker account, what the registry and the event writer tell
it, the topics it listens to on the MQTT link, and the alerts it acknowledges."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from fayd import __version__
from fayd.care.engine import NotOnLadder
from fayd.config import Config
from fayd.devices.registry import DeviceState
from fayd.devices.sensors import describe, event_time
from fayd.homeassistant import AnnouncedAlerts, HomeAssistantBridge, Naming, ensure_identity
from fayd.protocol import Alert, SensorEvent
from fayd.service.wiring import Parts
from fayd.transport.broker_files import ClientAccount
from fayd.transport.mqtt import MqttLink

log = logging.getLogger(__name__)


def naming(cfg: Config, state_dir: Path) -> tuple[Naming, ClientAccount]:
    """This install's topics, and Home Assistant's account on the embedded broker."""
    identity = ensure_identity(state_dir)
    names = Naming(identity.node, cfg.mqtt.prefix, cfg.homeassistant.discovery_prefix, __version__)
    account = ClientAccount(identity.user, identity.password, names.ha_reads, names.ha_writes)
    return names, account


def _guarded(what: str, call: Callable[..., None]) -> Callable[..., None]:
    """A fault in the bridge is logged; the device frame that told it goes on."""

    def run(*args: Any) -> None:
        try:
            call(*args)
        except Exception:
            log.exception("home assistant: %s failed", what)

    return run


def connect(
    cfg: Config,
    names: Naming,
    link: MqttLink,
    parts: Parts,
    announce: Callable[[Alert], None],
    known: set[str],
) -> HomeAssistantBridge:
    """The bridge, told of devices and events and listening on the link (call before the
    link runs: the alerts are subscribed first, so that at connect the retained alerts come
    before the retained configs that may name them)."""

    async def by_care(alert_id: str, by: str) -> bool:
        person = cfg.homeassistant.person
        try:
            if person:  # a caregiver's login: only on the alert's ladder
                await parts.care.acknowledge_as(alert_id, person, "homeassistant")
            else:
                await parts.care.acknowledge(alert_id, by)
        except LookupError:  # not one of the care engine's: announced by AnnouncedAlerts
            return False
        except NotOnLadder as exc:  # kept open: the care engine still climbs its ladder
            log.warning("Home Assistant's ack of %s refused: %s", alert_id, exc)
        return True

    alerts = AnnouncedAlerts(cfg.mqtt.prefix, announce, keeper=by_care)
    bridge = HomeAssistantBridge(names, link, alerts, known)
    registry = parts.registry

    def seen(state: DeviceState) -> None:
        hello = state.hello
        if hello is None:
            bridge.presence(state.id, state.online)
        else:
            bridge.device(state.id, hello.roles, hello.fw, state.online)

    def fresh(device: str, event: SensorEvent) -> None:
        at = event_time(event.ts, time.time())
        text = describe(event.sensor, event.data, device, datetime.fromtimestamp(at))
        user = registry.user_of(device) or cfg.agent.default_user
        bridge.event(device, user, event.sensor, event.data, at, text)

    registry.on_seen.append(_guarded("a device's hello or presence", seen))
    parts.events.on_fresh = _guarded("a sensor event", fresh)
    for state in registry.states.values():  # known before this start
        if state.id in known:
            seen(state)
    link.listen(f"{cfg.mqtt.prefix}/alerts/#", alerts.observe)
    link.listen(f"{cfg.mqtt.prefix}/alerts/#", bridge.message)
    link.listen(names.configs, bridge.message)
    link.listen(names.birth, bridge.message)
    link.listen(names.ack_topic, bridge.message)
    link.on_connect.append(bridge.connected)
    return bridge
