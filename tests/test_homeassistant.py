"""Home Assistant MQTT discovery (docs/homeassistant.md), against the real daemon, its
embedded mosquitto and simulated devices. "Home Assistant" here is an MQTT client logged
in with the account fayd makes for it, reading what HA's MQTT integration reads; every
discovery config it sees is checked against tests/data/ha_discovery.schema.json, written
from HA's documentation of each component's fields."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
import jsonschema
import pytest

from fayd.config import load_config
from fayd.errors import ConfigError
from fayd.homeassistant import (
    AnnouncedAlerts,
    Entities,
    HomeAssistantBridge,
    Naming,
    read_identity,
)
from fayd.homeassistant.discovery import key
from fayd.homeassistant.readings import KNOWN, readings_of
from fayd.protocol import SensorEvent, encode
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice
from fayd.transport.mqtt import parse_mqtt_url

from .conftest import ANY_DEVICE, needs_mosquitto

SCHEMA = json.loads((Path(__file__).parent / "data" / "ha_discovery.schema.json").read_text())
TOPIC = re.compile(SCHEMA["topic_pattern"])
PREFIX = "fayd/v1"
ENABLED = {"FAYD_HOMEASSISTANT_ENABLED": "true"}


def check_config(topic: str, config: dict[str, Any]) -> None:
    """One discovery message as HA documents it: its topic and its component's fields."""
    assert TOPIC.match(topic), topic
    component = topic.split("/")[1]
    validator = jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{component}", "$defs": SCHEMA["$defs"]}
    )
    errors = sorted(validator.iter_errors(config), key=str)
    assert not errors, f"{topic}: " + "; ".join(e.message for e in errors)


class HomeAssistant:
    """What HA's MQTT integration would see: the retained topics, newest payload each."""

    def __init__(self, daemon: DaemonProcess) -> None:
        identity = read_identity(daemon.state)
        host, port = parse_mqtt_url(daemon.runtime["mqtt"])
        self.node = identity.node
        self.client = aiomqtt.Client(
            host, port, identifier="ha", username=identity.user, password=identity.password
        )
        self.seen: dict[str, bytes] = {}
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    async def __aenter__(self) -> HomeAssistant:
        await self.client.__aenter__()
        for topic in ("homeassistant/#", f"{PREFIX}/ha/#", f"{PREFIX}/daemon/status"):
            await self.client.subscribe(topic, qos=1)
        await self.client.subscribe(f"{PREFIX}/alerts/#", qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._reader is not None
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)
        await self.client.__aexit__(None, None, None)

    async def _read(self) -> None:
        async for message in self.client.messages:
            self.seen[message.topic.value] = bytes(message.payload)  # type: ignore[arg-type]
            self._changed.set()

    def json(self, topic: str) -> Any:
        payload = self.seen.get(topic)
        return json.loads(payload) if payload else None

    def configs(self) -> dict[str, dict[str, Any]]:
        return {
            t: json.loads(p)
            for t, p in self.seen.items()
            if t.startswith("homeassistant/") and t.endswith("/config") and p
        }

    def config(self, component: str, object_id: str) -> dict[str, Any] | None:
        return self.json(f"homeassistant/{component}/{self.node}/{object_id}/config")

    async def until(self, check: Callable[[], Any], what: str, within_s: float = 30) -> Any:
        try:
            async with asyncio.timeout(within_s):
                while not (found := check()):
                    self._changed.clear()
                    await self._changed.wait()
                return found
        except TimeoutError:
            raise AssertionError(f"Home Assistant never saw {what}: {sorted(self.seen)}") from None

    async def press(self, button: dict[str, Any]) -> None:
        await self.client.publish(button["command_topic"], button["payload_press"], qos=1)


def event(seq: int, sensor: str, data: dict[str, Any], ts: float | None = None) -> bytes:
    return encode(SensorEvent(seq, sensor, ts or time.time(), data, epoch="e1"))


# --- plain data: the payloads themselves ----------------------------------------------------


def test_every_entity_fayd_makes_is_valid_for_home_assistant() -> None:
    names = Naming("fayd_0a1b2c3d", PREFIX, "homeassistant", "0.1.0")
    make = Entities(names)
    entities = [make.fayd_running(), make.open_alerts()]
    for device in ("kitchen-1", "bp.cuff_2", "a" * 64):
        block = make.device(device, ("mic", "sensor"), "0.2.0")
        entities += [make.connected(device, block), make.last_event(device, block)]
        for sensor, fields in KNOWN.items():
            for field, kind in fields.items():
                entities.append(make.reading(device, block, f"{sensor}_{field}", kind))
    for user in ("rose", "Grand-mère Zoë", "李"):
        entities.append(make.activity(user))
    entities.append(make.acknowledge("a-1764579600-3f9a", "emergency", "Help " * 40))
    topics = [names.config_topic(e) for e in entities]
    for entity, topic in zip(entities, topics, strict=True):
        check_config(topic, entity.config)
    unique = [e.config["unique_id"] for e in entities]
    assert len(set(unique)) == len(unique) and len(set(topics)) == len(topics)


def test_the_schema_refuses_what_home_assistant_refuses() -> None:
    """The schema is not a rubber stamp: each of these is an error HA documents."""
    names = Naming("fayd_0a1b2c3d", PREFIX)
    make = Entities(names)
    good = make.activity("rose")
    topic = names.config_topic(good)
    check_config(topic, good.config)
    wrong = [
        {**good.config, "state_class": "measurement"},  # a timestamp is not a measurement
        {**good.config, "unit_of_measurement": "s"},
        {**good.config, "device_class": "blood_pressure"},  # no such class
        {**good.config, "entity_category": "config"},  # a sensor cannot be config
        {k: v for k, v in good.config.items() if k != "state_topic"},
        {k: v for k, v in good.config.items() if k != "unique_id"},  # device needs it
        {**good.config, "avty_mode": "all"},  # an undocumented key
        {**good.config, "device": {"name": "no identifiers"}},
    ]
    for config in wrong:
        with pytest.raises(AssertionError):
            check_config(topic, config)
    with pytest.raises(AssertionError):
        check_config("homeassistant/sensor/fayd.x/activity/config", good.config)


def test_readings_of_events() -> None:
    assert [(r.object, r.value) for r in readings_of("temperature", {"c": 21.5})] == [
        ("temperature", 21.5)
    ]
    bp = readings_of("bp", {"sys": 152, "dia": 96, "pulse": 70, "note": "x"})
    assert [(r.object, r.kind.unit, r.value) for r in bp] == [
        ("bp_sys", "mmHg", 152),
        ("bp_dia", "mmHg", 96),
        ("bp_pulse", "bpm", 70),
    ]
    assert readings_of("battery", {"percent": 87})[0].kind.device_class == "battery"
    assert [r.value for r in readings_of("door", {"open": True})] == [True]
    assert readings_of("motion", {}) == []
    assert readings_of("dropped", {"value": 3}) == []
    assert readings_of("lux", {"value": 300})[0].object == "lux_value"
    # Not numbers: nothing (a bool is not a temperature, NaN and huge values are faults).
    for data in (
        {"value": True},
        {"value": float("nan")},
        {"value": 1e300},
        {"value": 10**400},
        {"value": "9"},
    ):
        assert readings_of("temperature", data) == []


def test_ids_that_home_assistant_would_refuse_get_a_safe_key() -> None:
    assert key("kitchen-1") == "kitchen-1"
    assert key("a.b") != key("a_b") and re.fullmatch(r"[A-Za-z0-9_-]+", key("a.b"))
    assert re.fullmatch(r"[A-Za-z0-9_-]+", key("Grand-mère Zoë"))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FAYD_HOMEASSISTANT_ENABLED": "maybe"}, "FAYD_HOMEASSISTANT_ENABLED: expected bool"),
        ({"FAYD_HOMEASSISTANT_DISCOVERY_PREFIX": "home/+"}, "not a topic prefix"),
        ({"FAYD_HOMEASSISTANT_DISCOVERY_PREFIX": "fayd/v1/ha"}, "overlaps mqtt.prefix"),
    ],
)
def test_bad_settings_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(environ=env)
    assert message in str(caught.value) and "FAYD_HOMEASSISTANT_" in str(caught.value)


class Published:
    """What the bridge published, in order (its Publisher port, as the link would)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []
        self.now: dict[str, bytes] = {}

    def publish(self, topic: str, payload: bytes, *, retain: bool) -> bool:
        assert retain
        self.sent.append((topic, payload))
        self.now[topic] = payload
        return True

    def json(self, topic: str) -> Any:
        return json.loads(self.now[topic])


async def test_old_values_do_not_replace_newer_ones_and_a_flood_is_capped() -> None:
    out = Published()
    names = Naming("fayd_0a1b2c3d", PREFIX)
    announced: list = []
    bridge = HomeAssistantBridge(names, out, AnnouncedAlerts(PREFIX, announced.append), {"b-1"})
    bridge.device("b-1", ("sensor",), "1.0", True)
    bridge.event("b-1", "rose", "temperature", {"value": 20.0}, 2000.0, "t")
    bridge.event("b-1", "rose", "temperature", {"value": 18.0}, 1000.0, "replayed")
    assert out.json(f"{PREFIX}/ha/dev/b-1/reading/temperature")["value"] == 20.0
    assert out.json(f"{PREFIX}/ha/person/rose/activity")["text"] == "t"
    for i in range(100):  # a faulty sensor inventing a new sensor name each time
        bridge.event("b-1", None, f"s{i}", {"value": i}, 3000.0 + i, "x")
    configs = [t for t in out.now if t.endswith("/config") and "b-1_" in t]
    assert len(configs) == 2 + 32  # connected, last event and 32 readings
    bridge.event("stranger", None, "temperature", {"value": 1}, 1.0, "x")  # not known
    assert not any("stranger" in t for t in out.now)
    # Presses: text only; an unknown alert is not acknowledged.
    for bad in (b"\xff\xfe", b"x" * 65, b"a\nb", b""):
        await bridge.message(names.ack_topic, bad, False)
    assert (bridge.refused, bridge.acks.qsize()) == (4, 0)
    assert not await bridge.acknowledger.acknowledge("no-such", "homeassistant")


# --- the real daemon --------------------------------------------------------------------------


@needs_mosquitto
async def test_off_by_default_nothing_is_published(make_daemon) -> None:
    daemon = make_daemon()
    assert not (daemon.state / "homeassistant.json").exists()
    status = daemon.api("GET", "/api/status").json()
    assert status["homeassistant"] is None
    done = daemon.cli("homeassistant")
    assert done.returncode == 1 and "enabled = true" in done.stderr and not done.stdout


@needs_mosquitto
def test_the_cli_asks_the_daemon_not_its_own_settings(make_daemon, tmp_path: Path) -> None:
    """The daemon was started with a config file that turns discovery on; the CLI, run
    without that file (no FAYD_CONFIG), still says what the running daemon does."""
    config = tmp_path / "fayd.toml"
    config.write_text('[homeassistant]\nenabled = true\ndiscovery_prefix = "ha-test"\n')
    daemon = make_daemon({"FAYD_CONFIG": str(config)})
    assert daemon.api("GET", "/api/status").json()["homeassistant"] is not None
    env = {k: v for k, v in daemon.env.items() if k not in ("FAYD_CONFIG",)}
    env = {k: v for k, v in env.items() if not k.startswith("FAYD_HOMEASSISTANT")}
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "homeassistant", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    login = json.loads(done.stdout)
    assert login["discovery_prefix"] == "ha-test"
    assert login["port"] == parse_mqtt_url(daemon.runtime["mqtt"])[1]
    assert login["username"] == "homeassistant" and login["password"]


@needs_mosquitto
async def test_a_device_its_readings_and_its_person_appear_and_go(make_daemon) -> None:
    daemon = make_daemon(ENABLED)
    async with HomeAssistant(daemon) as ha, daemon.sim("kitchen-1") as kitchen:
        node = ha.node
        assert await ha.until(lambda: ha.config("binary_sensor", "fayd_running"), "fayd itself")
        await kitchen.hello(roles=("mic", "speaker", "sensor"), user="rose")
        connected = await ha.until(
            lambda: ha.config("binary_sensor", "kitchen-1_connected"), "the device"
        )
        last_event = await ha.until(
            lambda: ha.config("sensor", "kitchen-1_last_event"), "its last event"
        )
        assert connected["device"]["identifiers"] == [f"{node}_kitchen-1"]
        assert connected["device"]["sw_version"] == "sim"
        assert connected["unique_id"] == f"{node}_kitchen-1_connected"
        presence = connected["state_topic"]
        available = last_event["availability"][1]["topic"]
        await ha.until(lambda: ha.seen.get(available) == b"online", "it online")
        await ha.until(lambda: ha.json(presence) == {"online": True}, "it connected")

        await kitchen.publish("event", event(1, "temperature", {"value": 21.5}))
        await kitchen.publish("event", event(2, "battery", {"percent": 87}))
        temperature = await ha.until(
            lambda: ha.config("sensor", "kitchen-1_temperature"), "the temperature"
        )
        battery = await ha.until(lambda: ha.config("sensor", "kitchen-1_battery"), "the battery")
        assert (temperature["device_class"], temperature["unit_of_measurement"]) == (
            "temperature",
            "°C",
        )
        assert battery["device_class"] == "battery"
        await ha.until(lambda: (ha.json(battery["state_topic"]) or {}).get("value") == 87, "87 %")
        await kitchen.publish("event", event(3, "temperature", {"value": 22.0}))
        await ha.until(
            lambda: (ha.json(temperature["state_topic"]) or {}).get("value") == 22.0, "22 °C"
        )
        last = await ha.until(lambda: ha.json(last_event["state_topic"]), "the last event")
        assert last["sensor"] == "temperature" and last["data"] == {"value": 22.0}
        activity = await ha.until(lambda: ha.config("sensor", "person_rose_activity"), "rose")
        assert activity["device_class"] == "timestamp"
        seen = await ha.until(lambda: ha.json(activity["state_topic"]), "rose's activity")
        assert seen["device"] == "kitchen-1" and seen["at"].endswith("+00:00")

        for topic, config in ha.configs().items():
            check_config(topic, config)
        # HA restarted (its birth message): fayd publishes everything again.
        count = len(ha.configs())
        ha.seen.clear()
        await ha.client.publish("homeassistant/status", "online", qos=1)
        await ha.until(lambda: len(ha.configs()) == count, "every config again")
        login = json.loads(daemon.cli("homeassistant", "--json").stdout)
        assert (login["username"], login["node_id"]) == ("homeassistant", node)
        assert login["port"] == parse_mqtt_url(daemon.runtime["mqtt"])[1]
        sample = {t: c for t, c in ha.configs().items() if "kitchen-1" in t}
        print(json.dumps(sample, indent=1, ensure_ascii=False))
    # The device left (its offline presence): its entities are unavailable, it is disconnected.
    async with HomeAssistant(daemon) as ha:
        await ha.until(lambda: ha.seen.get(available) == b"offline", "it offline")
        await ha.until(lambda: ha.json(presence) == {"online": False}, "it disconnected")
        # Forgotten: every config of the device is removed (an empty retained message).
        done = daemon.cli("devices", "remove", "kitchen-1")
        assert done.returncode == 0, done.stderr
        mine = [t for t in ha.configs() if "/kitchen-1_" in t]
        assert len(mine) == 4
        await ha.until(lambda: all(ha.seen.get(t) == b"" for t in mine), "them removed")
        assert ha.config("sensor", "person_rose_activity")  # the person stays


def stored(daemon: DaemonProcess) -> int:
    return daemon.api("GET", "/api/status").json()["frames"]["events_stored"]


def status(daemon: DaemonProcess) -> dict[str, Any]:
    return daemon.api("GET", "/api/status").json()["homeassistant"]


async def until_status(daemon: DaemonProcess, check: Callable[[dict], bool], what: str) -> dict:
    async with asyncio.timeout(30):
        while not check(found := await asyncio.to_thread(status, daemon)):
            await asyncio.sleep(0.1)
    assert found is not None, what
    return found


@needs_mosquitto
async def test_an_alert_is_acknowledged_from_home_assistant_and_only_from_it(make_daemon) -> None:
    daemon = make_daemon(ENABLED)
    host, port = parse_mqtt_url(daemon.runtime["mqtt"])
    async with (
        HomeAssistant(daemon) as ha,
        daemon.sim("hall-1") as hall,
        daemon.mqtt_client("intruder", timeout=10) as intruder,  # a device's account
    ):
        await hall.hello(roles=("mic", "speaker"), user="rose")
        await hall.say_text("Help! I've fallen over and I can't get up")
        button = await ha.until(
            lambda: next((c for t, c in ha.configs().items() if "/button/" in t), None),
            "the alert's button",
            within_s=120,
        )
        alert_id = button["payload_press"]
        alert_topic = f"{PREFIX}/alerts/{alert_id}"
        for topic, config in ha.configs().items():
            check_config(topic, config)
        summary = await ha.until(
            lambda: (
                (ha.json(f"{PREFIX}/ha/alerts") or {}).get("open") == 1
                and ha.json(f"{PREFIX}/ha/alerts")
            ),
            "the open alert",
        )
        assert summary["alerts"][0]["kind"] == "emergency"
        print(json.dumps(button, indent=1, ensure_ascii=False))

        # Attack the door: another account on the broker presses the button's topic, and a
        # client without an account, or with HA's name and a guessed password, is refused.
        await intruder.publish(button["command_topic"], alert_id, qos=1)
        for user, password in ((None, None), ("homeassistant", "guess")):
            with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
                async with aiomqtt.Client(host, port, username=user, password=password):
                    pass
        # Nor can HA's account speak as a device (the ACL lets every user write under its own
        # name, as devices do): what it sends there is dropped, before the hall's event.
        await ha.client.publish(f"{PREFIX}/dev/homeassistant/up/event", event(1, "panic", {}))
        await hall.publish("event", event(1, "motion", {}))
        await until_status(daemon, lambda s: s["retained"] and stored(daemon) >= 1, "an event")
        assert stored(daemon) == 1
        devices = daemon.api("GET", "/api/status").json()["devices"]
        assert [d["id"] for d in devices] == ["hall-1"]
        # HA's own press of an unknown alert comes after the intruder's: once fayd has it,
        # the intruder's (sent first) would have been taken in before it, had the broker
        # let it through.
        await ha.client.publish(button["command_topic"], "no-such-alert", qos=1)
        seen = await until_status(daemon, lambda s: s["asked"] >= 1, "HA's press")
        assert (seen["asked"], seen["acknowledged"]) == (1, 0)
        assert ha.json(alert_topic)["state"] == "open"

        await ha.press(button)  # Home Assistant's button: the alert is acknowledged
        acked = await ha.until(
            lambda: (
                (ha.json(alert_topic) or {}).get("state") == "acknowledged" and ha.json(alert_topic)
            ),
            "the alert acknowledged",
        )
        # A call for help is a care alert even before any caregiver (issue 21): the care
        # engine keeps it and says who took it.
        assert acked["detail"]["closed_by"] == "acknowledged by homeassistant"
        config_topic = next(t for t in ha.configs() if "/button/" in t)
        await ha.until(lambda: ha.seen.get(config_topic) == b"", "the button removed")
        await ha.until(
            lambda: (ha.json(f"{PREFIX}/ha/alerts") or {}).get("open") == 0, "no open alert"
        )
        assert (await asyncio.to_thread(status, daemon))["acknowledged"] == 1
        await ha.press(button)  # a second press: nothing is open any more
        seen = await until_status(daemon, lambda s: s["asked"] == 3, "the second press")
        assert seen["acknowledged"] == 1


@needs_mosquitto
async def test_home_assistant_as_a_caregiver_acknowledges_only_on_her_ladders(make_daemon) -> None:
    """``homeassistant.person``: HA's login is Anna's (docs/security.md, *Who is who*)."""
    daemon = make_daemon({**ENABLED, "FAYD_HOMEASSISTANT_PERSON": "anna"})

    def care(*args: str) -> None:
        done = daemon.cli("care", *args, timeout=60)
        assert done.returncode == 0, done.stderr

    care("caregivers", "add", "anna", "json://127.0.0.1:9/anna")
    care("caregivers", "add", "ben", "json://127.0.0.1:9/ben")

    def alerts() -> dict[str, str]:
        found = daemon.api("POST", "/api/care/alerts.list", json={"all": True}).json()
        return {a["user"]: a["state"] for a in found["alerts"]}

    async with HomeAssistant(daemon) as ha, daemon.sim("rose-1") as rose:
        async with daemon.sim("sam-1") as sam:
            for sim, user in ((rose, "rose"), (sam, "sam")):
                await sim.hello(roles=("mic", "speaker"), user=user)
        for user, ladder in (("rose", "anna"), ("sam", "ben")):
            care("rules", "add", f"{user}-calls", "--user", user, "--kind", "event",
                 "--sensor", "emergency", "--ladder", ladder)  # fmt: skip
        async with daemon.sim("sam-1") as sam:
            await sam.hello(roles=("mic", "speaker"), user="sam")
            await sam.say_text("Help! I've fallen over and I can't get up")
            await sam.collect_reply()
        await rose.say_text("Help! I've fallen over and I can't get up")
        await rose.collect_reply()

        def buttons() -> list[dict[str, Any]]:
            return [c for t, c in ha.configs().items() if "/button/" in t]

        await ha.until(lambda: len(buttons()) == 2, "two alerts' buttons", within_s=60)
        for button in buttons():
            await ha.press(button)
        await until_status(daemon, lambda s: s["asked"] >= 2, "both presses")
        deadline = time.monotonic() + 10
        while alerts().get("rose") != "acknowledged" and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        # Anna is on Rose's ladder, not on Sam's: his alert is still climbing Ben's.
        assert alerts() == {"rose": "acknowledged", "sam": "open"}
    assert "home assistant's ack" in daemon.log_text().lower()


@needs_mosquitto
async def test_entities_outlive_a_restart_and_one_forgotten_meanwhile_goes(make_daemon) -> None:
    daemon = make_daemon(ENABLED)
    async with HomeAssistant(daemon) as ha:
        for device in ("attic-1", "porch-1"):
            async with daemon.sim(device) as sim:
                await sim.hello(roles=("sensor",))
                await sim.publish("event", event(1, "humidity", {"value": 55}))
                await ha.until(lambda d=device: ha.config("sensor", f"{d}_humidity"), device)
        before = {t: c for t, c in ha.configs().items() if "/attic-1_" in t}
        porch = [t for t in ha.configs() if "/porch-1_" in t]
        assert len(before) == len(porch) == 3  # connected, last event, humidity
    assert daemon.stop() == 0
    done = daemon.cli("devices", "remove", "porch-1")  # while fayd is down
    assert done.returncode == 0 and "not running" in done.stdout, done.stdout + done.stderr
    daemon.start()
    async with HomeAssistant(daemon) as ha:
        await ha.until(
            lambda: all(ha.configs().get(t) == c for t, c in before.items()), "attic-1 as it was"
        )
        await ha.until(lambda: not any(t in ha.configs() for t in porch), "porch-1 gone")
        await ha.until(
            lambda: (ha.json(f"{PREFIX}/ha/dev/attic-1/reading/humidity") or {}).get("value") == 55,
            "its humidity",
        )


@needs_mosquitto
async def test_a_broker_killed_before_it_saved_its_retained_messages_gets_them_again(
    make_daemon,
) -> None:
    daemon = make_daemon(ENABLED)
    async with HomeAssistant(daemon) as ha, daemon.sim("den-1") as den:
        await den.hello(roles=("sensor",))
        await ha.until(lambda: ha.config("binary_sensor", "den-1_connected"), "den-1")
    broker = json.loads((daemon.state / "broker.pid").read_text())["pid"]
    os.kill(broker, signal.SIGKILL)  # mosquitto saves retained messages only now and then
    async with asyncio.timeout(90):
        while True:  # the supervisor starts it again, on the same port
            try:
                ha = await HomeAssistant(daemon).__aenter__()
                break
            except aiomqtt.MqttError:
                await asyncio.sleep(0.5)
    try:
        await ha.until(lambda: ha.config("binary_sensor", "den-1_connected"), "den-1 again", 60)
        await ha.until(lambda: ha.config("binary_sensor", "fayd_running"), "fayd again")
    finally:
        await ha.__aexit__(None, None, None)


@needs_mosquitto
async def test_with_the_households_own_broker(make_daemon, broker) -> None:
    """mqtt.url: fayd makes no account (the household's broker has HA's); discovery works
    the same, and `fayd homeassistant` says to use HA's own login."""
    daemon = make_daemon({**ENABLED, "FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    node = read_identity(daemon.state).node
    seen: dict[str, bytes] = {}
    async with (
        aiomqtt.Client("127.0.0.1", broker.port, identifier="ha") as ha,
        SimDevice(broker.url, "shed-1") as shed,
    ):
        await ha.subscribe("homeassistant/#", qos=1)
        await ha.subscribe(f"{PREFIX}/ha/#", qos=1)
        await shed.hello(roles=("sensor",))
        await shed.publish("event", event(1, "temperature", {"value": 4.5}))
        want = f"homeassistant/sensor/{node}/shed-1_temperature/config"
        async with asyncio.timeout(30):
            async for message in ha.messages:
                seen[message.topic.value] = bytes(message.payload)  # type: ignore[arg-type]
                if want in seen and seen.get(f"{PREFIX}/ha/dev/shed-1/reading/temperature"):
                    break
    check_config(want, json.loads(seen[want]))
    assert json.loads(seen[f"{PREFIX}/ha/dev/shed-1/reading/temperature"])["value"] == 4.5
    login = json.loads(daemon.cli("homeassistant", "--json").stdout)
    assert (login["port"], login["username"], login["password"]) == (broker.port, None, None)
