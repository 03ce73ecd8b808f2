"""The MQTT link against a real mosquitto: frames both ways, reconnection after the
broker goes away, retrying while it is unreachable, and a bounded outbox."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import aiomqtt
import pytest

from fayd.errors import ConfigError
from fayd.protocol import Command, Topics, decode
from fayd.transport.mqtt import MqttLink, parse_mqtt_url

from .conftest import Broker, free_port, needs_mosquitto

TOPICS = Topics("test/v1")


async def url_of(url: str):
    return url


@contextlib.asynccontextmanager
async def running_link(url: str, **kw):
    received: asyncio.Queue = asyncio.Queue()

    async def inbound(device: str, kind: str, payload: bytes) -> None:
        await received.put((device, kind, payload))

    link = MqttLink(TOPICS, inbound, max_backoff=0.5, **kw)
    task = asyncio.create_task(link.run(lambda: url_of(url)))
    try:
        yield link, received
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_parse_url() -> None:
    assert parse_mqtt_url("mqtt://10.0.0.2:1884") == ("10.0.0.2", 1884)
    assert parse_mqtt_url("mqtt://box") == ("box", 1883)
    with pytest.raises(ConfigError, match=r"mqtt\.url"):
        parse_mqtt_url("http://box")


@needs_mosquitto
async def test_frames_both_ways_and_daemon_presence(broker: Broker) -> None:
    host, port = parse_mqtt_url(broker.url)
    async with running_link(broker.url) as (link, received):
        await asyncio.wait_for(link.connected.wait(), 10)
        async with aiomqtt.Client(host, port, identifier="dev") as dev:
            await dev.subscribe(TOPICS.all_down("d1"))
            await dev.subscribe(TOPICS.daemon_status)
            await dev.publish(TOPICS.up("d1", "text"), b'{"text":"hi"}', qos=1)
            assert await asyncio.wait_for(received.get(), 5) == ("d1", "text", b'{"text":"hi"}')
            link.send("d1", Command("stop"))
            seen = {}
            async with asyncio.timeout(5):
                async for message in dev.messages:
                    seen[message.topic.value] = message.payload
                    if TOPICS.down("d1", "command") in seen and TOPICS.daemon_status in seen:
                        break
            assert decode("command", seen[TOPICS.down("d1", "command")]) == Command("stop")
            assert seen[TOPICS.daemon_status] == b'{"v": 1, "online": true}'


@needs_mosquitto
async def test_reconnects_after_the_broker_restarts(broker: Broker) -> None:
    async with running_link(broker.url) as (link, received):
        await asyncio.wait_for(link.connected.wait(), 10)
        broker.stop()
        await asyncio.sleep(0.5)
        assert not link.status.connected
        broker.start()
        host, port = parse_mqtt_url(broker.url)
        async with asyncio.timeout(20):
            while link.status.connects < 2:
                await asyncio.sleep(0.05)
        async with aiomqtt.Client(host, port, identifier="dev2") as dev:
            await dev.publish(TOPICS.up("d2", "heartbeat"), b"{}", qos=1)
            assert (await asyncio.wait_for(received.get(), 5))[0] == "d2"
        assert link.status.last_error


async def test_keeps_retrying_while_unreachable() -> None:
    url = f"mqtt://127.0.0.1:{free_port()}"  # nothing listens there
    async with running_link(url) as (link, _):
        await asyncio.sleep(1.5)
        assert not link.status.connected
        assert url in link.status.last_error


async def test_full_outbox_drops_and_counts() -> None:
    link = MqttLink(TOPICS, lambda *a: None, queue_size=3)  # never connected: nothing drains
    results = [link.send("d1", Command("stop")) for _ in range(5)]
    assert results == [True, True, True, False, False]
    assert link.status.dropped == 2


@needs_mosquitto
async def test_the_link_beats_only_while_its_pings_come_back(broker: Broker) -> None:
    """Connected but wedged (the broker frozen: the socket open, nothing answered) is
    "stalled" (fayd.beat.Pulse); the beats resume when the broker does."""
    assert broker.proc is not None
    async with running_link(broker.url, ping_s=0.2) as (link, _):
        async with asyncio.timeout(10):
            await link.connected.wait()
        loop = asyncio.get_running_loop()
        await asyncio.sleep(1.0)
        assert loop.time() - link.pulse.last < 2 * link.pulse.every_s
        broker.proc.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(1.5)
            assert loop.time() - link.pulse.last > 2 * link.pulse.every_s
        finally:
            broker.proc.send_signal(signal.SIGCONT)
        async with asyncio.timeout(10):
            while loop.time() - link.pulse.last > 2 * link.pulse.every_s:
                await asyncio.sleep(0.05)
