"""The embedded broker's ACL, on a real mosquitto: a client publishes only on the topics of
the device its client id names; fayd's own user reads and writes everything."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt
import pytest

from fayd.protocol import Topics
from fayd.transport.broker import EmbeddedBroker

from .conftest import needs_mosquitto

TOPICS = Topics("fayd/v1")
pytestmark = needs_mosquitto


@contextlib.asynccontextmanager
async def embedded(folder: Path) -> AsyncIterator[EmbeddedBroker]:
    broker = EmbeddedBroker(folder, "127.0.0.1", 0)
    task = asyncio.create_task(broker.run())
    try:
        await asyncio.wait_for(broker.ready.wait(), 10)
        yield broker
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def client(broker: EmbeddedBroker, identifier: str, **kw) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", broker.port, identifier=identifier, timeout=10, **kw)


async def received(sub: aiomqtt.Client, until_topic: str, within_s: float = 5) -> list[str]:
    """Topics that arrive until ``until_topic`` does."""
    seen: list[str] = []
    async with asyncio.timeout(within_s):
        async for message in sub.messages:
            seen.append(message.topic.value)
            if message.topic.value == until_topic:
                return seen
    return seen


async def test_a_device_publishes_only_on_its_own_topics(tmp_path: Path) -> None:
    async with embedded(tmp_path) as broker:
        assert broker.credentials is not None
        user, password = broker.credentials
        daemon = client(broker, "fayd-test", username=user, password=password)
        async with daemon, client(broker, "dev-a") as dev_a:
            await daemon.subscribe(TOPICS.all_up, qos=1)
            # dev-a speaks for dev-b (refused silently by the broker), then for itself.
            await dev_a.publish(TOPICS.up("dev-b", "event"), b'{"seq":1,"sensor":"x"}', qos=1)
            await dev_a.publish(TOPICS.up("dev-a", "event"), b'{"seq":1,"sensor":"x"}', qos=1)
            seen = await received(daemon, TOPICS.up("dev-a", "event"))
            assert seen == [TOPICS.up("dev-a", "event")]


async def test_a_device_reads_only_its_own_downlink(tmp_path: Path) -> None:
    async with embedded(tmp_path) as broker:
        assert broker.credentials is not None
        user, password = broker.credentials
        daemon = client(broker, "fayd-test", username=user, password=password)
        async with daemon, client(broker, "dev-a") as dev_a:
            await dev_a.subscribe("fayd/v1/#", qos=1)  # tries to hear everything
            await daemon.publish(TOPICS.down("dev-b", "human"), b"{}", qos=1)
            await daemon.publish(TOPICS.up("dev-b", "audio"), b"FA", qos=1)
            await daemon.publish(TOPICS.down("dev-a", "command"), b"{}", qos=1)
            seen = await received(dev_a, TOPICS.down("dev-a", "command"))
            assert seen == [TOPICS.down("dev-a", "command")]


async def test_fayds_user_needs_its_password(tmp_path: Path) -> None:
    async with embedded(tmp_path) as broker:
        with pytest.raises(aiomqtt.MqttError):
            async with client(broker, "intruder", username="fayd", password="guess"):
                pass
        assert oct((tmp_path / "passwd").stat().st_mode & 0o777) == "0o600"
        assert "guess" not in (tmp_path / "passwd").read_text()
