"""Care through the real daemon: a simulated panic button on the embedded broker, rules and
caregivers set with the CLI, notifications to a real SMTP server and an Apprise JSON target
on loopback, the alert on MQTT (retained until acknowledged), a kill -9 in the middle of the
ladder, and acknowledgements by the CLI and by a carer's device over MQTT."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import aiomqtt
import pytest

from fayd.homeassistant import read_identity
from fayd.protocol import Ack, SensorEvent, encode
from fayd.testing.care import Mails, Posts, wait_for
from fayd.testing.harness import DaemonProcess
from fayd.transport.mqtt import parse_mqtt_url
from tests.conftest import needs_mosquitto

pytestmark = needs_mosquitto
PREFIX = "fayd/v1"


@pytest.fixture
def mails() -> Iterator[Mails]:
    m = Mails()
    yield m
    m.close()


def cli(daemon: DaemonProcess, *args: str) -> str:
    done = daemon.cli("care", *args, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def press(daemon: DaemonProcess, device: str, seq: int) -> None:
    async with daemon.sim(device) as sim:
        await sim.hello(roles=("sensor",), user="mum")
        await sim.publish("event", encode(SensorEvent(seq, "panic", time.time())))
        await asyncio.sleep(0.5)


async def retained(daemon: DaemonProcess, within_s: float = 3.0) -> dict[str, Any]:
    """What the household's Home Assistant finds on the alert topics when it connects (no
    device account reads them: tests/test_household_e2e.py)."""
    found: dict[str, Any] = {}
    identity = read_identity(daemon.state)
    host, port = parse_mqtt_url(daemon.runtime["mqtt"])
    client = aiomqtt.Client(host, port, username=identity.user, password=identity.password)
    async with client:
        await client.subscribe(f"{PREFIX}/alerts/#", qos=1)
        try:
            async with asyncio.timeout(within_s):
                async for message in client.messages:
                    if message.retain and message.payload:
                        found[str(message.topic)] = json.loads(bytes(message.payload))  # type: ignore[arg-type]
        except TimeoutError:
            pass
    return found


def alerts(daemon: DaemonProcess) -> list[dict[str, Any]]:
    sent = daemon.api("POST", "/api/care/alerts.list", json={"all": True}, timeout=30)
    assert sent.status_code == 200, sent.text
    return sent.json()["alerts"]


def test_a_panic_press_climbs_the_ladder_across_a_kill_9_and_stops_when_acknowledged(
    make_daemon: Any, posts: Posts, mails: Mails
) -> None:
    daemon = make_daemon({"FAYD_HOMEASSISTANT_ENABLED": "true"})
    cli(daemon, "caregivers", "add", "anna", posts.url("anna"), mails.url("anna@home.lan"))
    cli(daemon, "caregivers", "add", "ben", posts.url("ben"))
    asyncio.run(press(daemon, "panic-1", 1))  # the button says hello: mum's
    # Each caregiver has 20 s to acknowledge: long enough for the kill and the restart to
    # fall inside anna's time, so ben is told by the restarted daemon.
    cli(daemon, "rules", "add", "panic", "--user", "mum", "--kind", "event", "--sensor",
        "panic", "--ladder", "anna:0.33,ben:0.33")  # fmt: skip
    asyncio.run(press(daemon, "panic-1", 2))
    wait_for(lambda: len(posts.to("anna")) == 1 and len(mails.received) == 1, 20)
    [alert] = alerts(daemon)
    assert alert["state"] == "open" and alert["severity"] == "critical"
    assert "fayd care alerts ack " + alert["id"] in posts.to("anna")[0]["message"]
    screen = asyncio.run(retained(daemon))
    assert screen[f"{PREFIX}/alerts/{alert['id']}"]["state"] == "open"

    daemon.proc.kill()  # kill -9 in the middle of the ladder
    daemon.proc.wait(10)
    daemon.start()
    wait_for(lambda: len(posts.to("ben")) == 1, 60)
    time.sleep(2)  # anything sent twice would have come by now
    assert len(posts.to("anna")) == 1 and len(mails.received) == 1 and len(posts.to("ben")) == 1

    out = cli(daemon, "alerts", "ack", alert["id"], "--by", "ben")
    assert f"{alert['id']} is acknowledged (acknowledged by ben)" in out
    wait_for(lambda: len(posts.to("anna")) == 2 and len(posts.to("ben")) == 2, 20)
    assert "acknowledged by ben" in posts.to("anna")[1]["message"]
    assert asyncio.run(retained(daemon)) == {}  # no longer retained
    listing = cli(daemon, "alerts", "list")
    assert "no open alerts" not in listing and "ACKNOWLEDGED" in listing
    status = daemon.cli("status", timeout=60).stdout
    assert "care: 0 open alert(s)" in status
    assert "Traceback" not in daemon.log_text()


def test_a_carers_device_acknowledges_over_mqtt(make_daemon: Any, posts: Posts) -> None:
    """Only a device of a caregiver on the alert's ladder acknowledges it: another
    household member's device is refused (an error frame) and the ladder goes on."""
    daemon = make_daemon()
    cli(daemon, "caregivers", "add", "anna", posts.url("anna"))
    asyncio.run(press(daemon, "panic-1", 1))
    cli(daemon, "rules", "add", "panic", "--user", "mum", "--kind", "event", "--sensor",
        "panic", "--ladder", "anna")  # fmt: skip
    for device, user in (("carer-1", "anna"), ("bob-1", "bob")):
        daemon.add_device(device)
        done = daemon.cli("devices", "set", device, f"user={user}", "--wait", "0", timeout=60)
        assert done.returncode == 0, done.stderr
    asyncio.run(press(daemon, "panic-1", 2))
    wait_for(lambda: len(posts.to("anna")) == 1, 20)
    [alert] = alerts(daemon)

    async def ack(device: str) -> list[tuple[str, dict[str, Any]]]:
        """``device`` acknowledges the alert; what it is sent on its own topics after."""
        seen: list[tuple[str, dict[str, Any]]] = []
        async with daemon.mqtt_client(device) as client:
            await client.subscribe(f"{PREFIX}/dev/{device}/down/+", qos=1)
            hello = {"v": 1, "device": device, "roles": ["screen"]}
            await client.publish(f"{PREFIX}/dev/{device}/up/hello", json.dumps(hello), 1)
            await client.publish(f"{PREFIX}/dev/{device}/up/ack", encode(Ack(alert["id"])), 1)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    async for message in client.messages:
                        kind = str(message.topic).rsplit("/", 1)[1]
                        seen.append((kind, json.loads(bytes(message.payload))))  # type: ignore[arg-type]
                        if kind == "alert" and seen[-1][1]["state"] != "open":
                            break
        return seen

    refused = asyncio.run(ack("bob-1"))
    assert next(f for k, f in refused if k == "error")["code"] == "not-allowed"
    assert not [f for k, f in refused if k == "alert"]  # mum's alert is not bob's to see
    assert alerts(daemon)[0]["state"] == "open"
    seen = asyncio.run(ack("carer-1"))
    states = [f["state"] for k, f in seen if k == "alert"]
    assert states == ["open", "acknowledged"]  # told of it at hello, then of its end
    shown = [f for k, f in seen if k == "alert"][-1]
    assert shown["detail"]["closed_by"] == "acknowledged by anna"
    assert shown["text"] == "Mum pressed the alarm button"  # the minimum on the wire
    [alert] = alerts(daemon)
    assert alert["state"] == "acknowledged"


def test_an_unreachable_caregiver_is_reported_by_status(make_daemon: Any) -> None:
    daemon = make_daemon()
    cli(daemon, "caregivers", "add", "anna", "json://127.0.0.1:9/nobody-listens")
    asyncio.run(press(daemon, "panic-1", 1))
    cli(daemon, "rules", "add", "panic", "--user", "mum", "--kind", "event", "--sensor",
        "panic", "--ladder", "anna")  # fmt: skip
    asyncio.run(press(daemon, "panic-1", 2))

    def reported() -> bool:
        return "care: NOT DELIVERED to anna" in daemon.cli("status", timeout=60).stdout

    wait_for(reported, 30)
    [alert] = alerts(daemon)
    assert alert["sent"][0]["attempts"] >= 1 and alert["sent"][0]["sent_at"] is None


def test_a_spoken_call_for_help_reaches_the_caregiver_with_the_same_alert(
    make_daemon: Any, posts: Posts
) -> None:
    daemon = make_daemon()
    cli(daemon, "caregivers", "add", "anna", posts.url("anna"))
    asyncio.run(press(daemon, "panic-1", 1))  # a device of mum's: she is a known user
    cli(daemon, "rules", "add", "help", "--user", "mum", "--kind", "event", "--sensor",
        "emergency", "--ladder", "anna")  # fmt: skip
    said = daemon.cli("say", "--user", "mum", "Help! I've fallen over and I can't get up")
    assert said.returncode == 0 and "letting your family know" in said.stdout, said.stderr
    wait_for(lambda: len(posts.to("anna")) == 1, 20)
    [alert] = alerts(daemon)
    assert alert["id"].startswith("a-") and alert["kind"] == "emergency"
    assert "fallen over" in posts.to("anna")[0]["message"]

    def remembered() -> bool:
        with sqlite3.connect(daemon.state / "fayd.db") as conn:
            return bool(
                conn.execute(
                    "SELECT 1 FROM memory_tags WHERE tag = ?", [f"care_alert:{alert['id']}"]
                ).fetchall()
            )

    wait_for(remembered, 30)
