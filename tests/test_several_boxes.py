"""Several fayd boxes on one household broker (docs/several-boxes.md): a device belongs to
the box it was added on (``fayd devices add``); the other boxes ignore it: no answer, no
record. And the doc's mosquitto bridge snippet, run by a real mosquitto."""

from __future__ import annotations

import asyncio
import getpass
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from fayd.testing.harness import DaemonProcess, free_port
from fayd.testing.simulator import SimDevice

from .conftest import MOSQUITTO, Broker, needs_mosquitto, wait_port

DOC = Path(__file__).parent.parent / "docs" / "several-boxes.md"


def _until(check: Any, what: str, within_s: float = 60) -> Any:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise TimeoutError(what)


def _devices(daemon: DaemonProcess) -> list[str]:
    return [d["id"] for d in daemon.api("GET", "/api/status").json()["devices"]]


async def _lamp_speaks(url: str) -> list[str]:
    """lamp-1 says hello and sends a broken event: the kinds of frames it is sent back."""
    async with SimDevice(url, "lamp-1") as lamp:
        await lamp.hello(roles=("sensor",))
        await lamp.publish("event", b"{not json")
        async with asyncio.timeout(60):
            while True:
                kind, _, _ = await lamp.received.get()
                if kind == "error":
                    return [kind]


@needs_mosquitto
def test_a_device_is_answered_by_the_box_it_was_added_on_only(broker: Broker, tmp_path) -> None:
    env = {"FAYD_MQTT_URL": broker.url, "FAYD_SERIAL_ENABLED": "false"}
    a = DaemonProcess(tmp_path / "a", env).start(wait_ready=False)
    b = DaemonProcess(tmp_path / "b", env).start(wait_ready=False)
    try:
        a.wait_runtime(), b.wait_runtime()
        a.add_device("lamp-1")
        assert asyncio.run(_lamp_speaks(broker.url)) == ["error"]  # A's answer
        _until(lambda: "lamp-1" in _devices(a), "box A records lamp-1")
        # B heard it (its once-per-device line) and did nothing with it.
        _until(lambda: "lamp-1 was not added on this box" in b.log_text(), "B's log line")
        status = b.api("GET", "/api/status").json()
        assert "lamp-1" not in [d["id"] for d in status["devices"]]
        assert status["frames"]["errors_sent"] == 0
        assert a.api("GET", "/api/status").json()["frames"]["errors_sent"] == 1
        # B's database itself: `fayd devices list` reads it.
        assert "lamp-1" not in b.cli("devices", "list").stdout
        assert "lamp-1" in a.cli("devices", "list").stdout
    finally:
        assert a.stop() == 0, a.log_text()
        assert b.stop() == 0, b.log_text()


def _snippet() -> str:
    """The doc's bridge snippet (the ```conf block after 'mosquitto.conf')."""
    found = re.search(r"```conf\n(.*?)```", DOC.read_text(), re.S)
    assert found, "docs/several-boxes.md has no ```conf block"
    return found.group(1)


async def _crosses(local: int, household: int) -> tuple[bytes, bytes]:
    """A device frame on the box's broker reaches the household's; HA's birth comes back."""
    async with (
        aiomqtt.Client("127.0.0.1", household, identifier="ha") as ha,
        aiomqtt.Client("127.0.0.1", local, identifier="dev") as dev,
    ):
        await ha.subscribe("kitchen/fayd/v1/#", qos=1)
        await dev.subscribe("homeassistant/status", qos=1)
        async with asyncio.timeout(30):
            while True:  # the bridge connects in its own time: say it until it is heard
                await dev.publish("kitchen/fayd/v1/dev/lamp-1/up/hello", b"hi", qos=1)
                await ha.publish("homeassistant/status", b"online", qos=1, retain=True)
                try:
                    async with asyncio.timeout(1):
                        up = await anext(aiter(ha.messages))
                        down = await anext(aiter(dev.messages))
                        return bytes(up.payload), bytes(down.payload)  # type: ignore[arg-type]
                except TimeoutError:
                    continue


@needs_mosquitto
def test_the_docs_bridge_snippet_runs_in_mosquitto(broker: Broker, tmp_path) -> None:
    assert MOSQUITTO
    local = free_port()
    conf = tmp_path / "box.conf"
    snippet = _snippet().replace("192.168.1.10:1883", f"127.0.0.1:{broker.port}")
    head = f"listener {local} 127.0.0.1\nallow_anonymous true\nuser {getpass.getuser()}\n"
    conf.write_text(head + snippet)
    box = subprocess.Popen(
        [MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_port(local)
        assert asyncio.run(_crosses(local, broker.port)) == (b"hi", b"online")
    finally:
        box.terminate()
        _, err = box.communicate(timeout=10)
    assert b"Error" not in err, err.decode()


def test_the_snippet_names_the_household_broker() -> None:
    if not DOC.exists():
        pytest.fail("docs/several-boxes.md is missing")
    assert "address 192.168.1.10:1883" in _snippet()
