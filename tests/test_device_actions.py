"""The agent's second port (``fayd.agent.ports.Devices``, served by
``fayd.devices.actions.DeviceActions``) against the real firmware on MicroPython's unix port
over a real broker: what a skill asks — move the robot, show text, set the volume and
brightness, stop playback — reaches the device as frames it obeys; and the registry answers
whose a device is and what it can do."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fayd.agent import Devices
from fayd.devices.actions import DeviceActions
from fayd.devices.registry import DeviceRegistry
from fayd.protocol import Action, Command, Human, Topics, decode
from fayd.store import Store
from fayd.testing.firmware import FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.transport.mqtt import MqttLink

from .test_firmware_mqtt import mqtt_config

pytestmark = pytest.mark.skipif(
    micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists(),
    reason="MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh",
)


async def test_a_skill_moves_the_robot_shows_text_and_sets_the_volume(
    broker, firmware, tmp_path: Path
) -> None:
    fw: FirmwareProcess = firmware(
        mqtt_config(broker.url, "robo-9", ["robot", "screen", "speaker"], user="ann")
    )
    store = Store(tmp_path / "fayd.db")
    registry: DeviceRegistry | None = None

    async def inbound(device: str, kind: str, payload: bytes) -> None:
        if kind == "hello" and registry is not None:  # what the hub would hand over
            await registry.hello(registry.state(device), decode(kind, payload))

    link = MqttLink(Topics(), inbound)
    registry = DeviceRegistry(store, link)

    async def url() -> str:
        return broker.url

    running = asyncio.create_task(link.run(url))
    try:
        devices: Devices = DeviceActions(registry, link)
        async with asyncio.timeout(30):
            while not devices.find("robot"):
                await asyncio.sleep(0.05)
        assert devices.find("robot", user="ann") == ["robo-9"]
        assert devices.find("robot", user="bob") == [] and devices.find("sensor") == []
        assert devices.user_of("robo-9") == "ann" and devices.has_role("robo-9", "screen")
        assert devices.audio_out_rate("robo-9") == 16000

        wave = Action("gesture.wave", "wave", "happy", 0.8, 70)
        assert devices.act("robo-9", wave)
        # A reply's text and a stop leave by the link, as a conversation sends them.
        assert link.send("robo-9", Human(key="text", text="Lunch is at noon", is_first=True))
        assert link.send("robo-9", Human(key="text", text="", is_end=True))
        assert devices.set_volume("robo-9", 35)
        assert devices.set_brightness("robo-9", 40)
        assert link.send("robo-9", Command("stop", {"reason": "asked"}))
        with pytest.raises(ValueError):
            devices.set_volume("robo-9", 300)

        def obeyed(rows: list[dict]) -> bool:
            robot = [r for r in rows if r["hw"] == "robot" and r.get("behavior") == "wave"]
            shown = [r for r in rows if r["hw"] == "screen" and "lines" in r]
            commands = {r["name"] for r in rows if r["hw"] == "command"}
            return bool(robot and shown and {"volume", "brightness", "stop"} <= commands)

        # On a thread: the link's loop must run meanwhile to send the frames.
        await asyncio.to_thread(fw.wait_for, obeyed, 30.0, "the wave, text, volume and stop")
        shown = [r["lines"] for r in fw.records("screen") if "lines" in r][-1]
        assert " ".join(shown).startswith("Lunch is at")
        assert [r["brightness"] for r in fw.records("screen") if "brightness" in r] == [40]
        assert not [r for r in fw.records("log") if r["msg"].startswith("bad ")]
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        store.close()
