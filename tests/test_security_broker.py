"""The embedded broker's accounts and ACL, on a real mosquitto: nobody gets in without an
account (on loopback too), a device uses only its own topics whatever client id it asks
for, nobody can take fayd's identity, a removed device is disconnected at once, and the
TLS listener is verified by its household CA."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt
import pytest

from fayd.auth import mqtt_password, new_device_secret
from fayd.protocol import Topics
from fayd.transport.broker import EmbeddedBroker, broker_folder, free_port
from fayd.transport.broker_files import broker_account
from fayd.transport.broker_tls import ensure_tls

from .conftest import needs_mosquitto

TOPICS = Topics("fayd/v1")
pytestmark = needs_mosquitto


class Keys:
    """The devices' secrets, as the daemon's store would give them."""

    def __init__(self, *devices: str) -> None:
        self.secrets = {d: new_device_secret() for d in devices}

    async def __call__(self) -> dict[str, str]:
        return dict(self.secrets)

    def password(self, device: str) -> str:
        return mqtt_password(self.secrets[device])


@contextlib.asynccontextmanager
async def embedded(folder: Path, keys: Keys, **options) -> AsyncIterator[EmbeddedBroker]:
    broker = EmbeddedBroker(folder, "127.0.0.1", 0, keys, **options)
    task = asyncio.create_task(broker.run())
    try:
        await asyncio.wait_for(broker.ready.wait(), 10)
        yield broker
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def client(broker: EmbeddedBroker, identifier: str, **kw) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", broker.port, identifier=identifier, timeout=10, **kw)


def as_daemon(broker: EmbeddedBroker, identifier: str = "fayd-test") -> aiomqtt.Client:
    user, password = broker.credentials
    return client(broker, identifier, username=user, password=password)


def as_device(
    broker: EmbeddedBroker, keys: Keys, device: str, identifier: str = ""
) -> aiomqtt.Client:
    return client(broker, identifier or device, username=device, password=keys.password(device))


async def refused(connecting: aiomqtt.Client) -> str:
    with pytest.raises(aiomqtt.MqttError) as caught:
        async with connecting:
            pass
    return str(caught.value)


async def received(sub: aiomqtt.Client, until_topic: str, within_s: float = 5) -> list[str]:
    """Topics that arrive until ``until_topic`` does."""
    seen: list[str] = []
    async with asyncio.timeout(within_s):
        async for message in sub.messages:
            seen.append(message.topic.value)
            if message.topic.value == until_topic:
                return seen
    return seen


async def test_no_account_no_entry(tmp_path: Path) -> None:
    keys = Keys("dev-a")
    async with embedded(tmp_path, keys) as broker:
        assert "Not authorized" in await refused(client(broker, "anyone"))  # anonymous
        wrong = client(broker, "dev-a", username="dev-a", password=mqtt_password("0" * 64))
        assert "Not authorized" in await refused(wrong)
        # The device's key itself is not its password (only what is derived from it).
        leaked = client(broker, "dev-a", username="dev-a", password=keys.secrets["dev-a"])
        assert "Not authorized" in await refused(leaked)
        assert "Not authorized" in await refused(
            client(broker, "x", username="fayd", password="guess")
        )
        async with as_device(broker, keys, "dev-a"):
            pass  # the right login works
    for name in ("passwd", "acl"):
        assert oct((tmp_path / name).stat().st_mode & 0o777) == "0o600"
    text = (tmp_path / "passwd").read_text()
    assert keys.secrets["dev-a"] not in text and keys.password("dev-a") not in text
    assert "allow_anonymous false" in (tmp_path / "mosquitto.conf").read_text()


def listening(pid: int) -> set[str]:
    """The TCP addresses a process listens on (ss from iproute2)."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return {line.split()[3] for line in out.splitlines() if f"pid={pid}," in line}


@pytest.mark.skipif(shutil.which("ss") is None, reason="ss (iproute2) not installed")
async def test_it_listens_only_where_it_is_told(tmp_path: Path) -> None:
    tls_port = free_port()
    tls = ensure_tls(tmp_path / "tls", tls_port, ["localhost"])
    for options in ({}, {"tls": tls}):
        async with embedded(tmp_path, Keys(), **options) as broker:
            assert broker._proc is not None
            want = {f"127.0.0.1:{broker.port}"} | ({f"127.0.0.1:{tls_port}"} if options else set())
            assert listening(broker._proc.pid) == want  # no default listener on 1883


async def test_a_device_publishes_only_on_its_own_topics(tmp_path: Path) -> None:
    keys = Keys("dev-a", "dev-b")
    async with embedded(tmp_path, keys) as broker:
        # dev-a logs in with its own account but asks for dev-b's client id: the broker
        # names it dev-a anyway, and it still cannot speak for dev-b.
        async with as_daemon(broker) as daemon, as_device(broker, keys, "dev-a", "dev-b") as a:
            await daemon.subscribe(TOPICS.all_up, qos=1)
            await a.publish(TOPICS.up("dev-b", "event"), b'{"seq":1,"sensor":"x"}', qos=1)
            await a.publish(TOPICS.up("dev-a", "event"), b'{"seq":1,"sensor":"x"}', qos=1)
            seen = await received(daemon, TOPICS.up("dev-a", "event"))
            assert seen == [TOPICS.up("dev-a", "event")]


async def test_a_device_reads_only_its_own_downlink(tmp_path: Path) -> None:
    keys = Keys("dev-a")
    async with embedded(tmp_path, keys) as broker:
        async with as_daemon(broker) as daemon, as_device(broker, keys, "dev-a") as dev_a:
            await dev_a.subscribe("fayd/v1/#", qos=1)  # tries to hear everything
            await daemon.publish(TOPICS.down("dev-b", "human"), b"{}", qos=1)
            await daemon.publish(TOPICS.up("dev-b", "audio"), b"FA", qos=1)
            await daemon.publish(TOPICS.down("dev-a", "command"), b"{}", qos=1)
            seen = await received(dev_a, TOPICS.down("dev-a", "command"))
            assert seen == [TOPICS.down("dev-a", "command")]


async def test_nobody_takes_another_clients_id(tmp_path: Path) -> None:
    keys = Keys("dev-a", "dev-b")
    async with embedded(tmp_path, keys) as broker:
        async with as_daemon(broker, "fayd-1234") as daemon, as_device(broker, keys, "dev-a") as a:
            await daemon.subscribe(TOPICS.all_up, qos=1)
            # dev-b asks for fayd's client id, then for dev-a's: with the same id, either
            # would have kicked the other off (MQTT's session take-over).
            for stolen in ("fayd-1234", "fayd", "dev-a"):
                async with as_device(broker, keys, "dev-b", stolen) as b:
                    await b.publish(TOPICS.up("dev-b", "heartbeat"), b"{}", qos=1)
            await a.publish(TOPICS.up("dev-a", "heartbeat"), b"{}", qos=1)  # a still connected
            seen = await received(daemon, TOPICS.up("dev-a", "heartbeat"))
            assert seen == [TOPICS.up("dev-b", "heartbeat")] * 3 + [TOPICS.up("dev-a", "heartbeat")]


async def test_a_removed_device_is_disconnected_at_once(tmp_path: Path) -> None:
    keys = Keys("dev-a", "dev-b")
    async with embedded(tmp_path, keys) as broker:
        async with as_device(broker, keys, "dev-b") as b:
            password = keys.password("dev-b")
            del keys.secrets["dev-b"]
            assert await broker.reload() == 1  # returns once mosquitto has the new file
            with pytest.raises(aiomqtt.MqttError):
                for _ in range(50):  # the broker closed the connection: publishing fails
                    await b.publish(TOPICS.up("dev-b", "heartbeat"), b"{}", qos=1, timeout=2)
                    await asyncio.sleep(0.05)
        again = client(broker, "dev-b", username="dev-b", password=password)
        assert "Not authorized" in await refused(again)
        keys.secrets["dev-c"] = new_device_secret()  # added while running: admitted at once
        assert await broker.reload() == 2
        async with as_device(broker, keys, "dev-c"), as_device(broker, keys, "dev-a"):
            pass


async def test_tls_listener_is_verified_by_the_household_ca(tmp_path: Path) -> None:
    keys = Keys("dev-a")
    tls_port = free_port()
    tls = ensure_tls(tmp_path / "tls", tls_port, ["localhost", "127.0.0.1"])
    async with embedded(tmp_path, keys, tls=tls) as broker:
        trusted = ssl.create_default_context(cafile=str(tls.ca))
        async with aiomqtt.Client(
            "127.0.0.1",
            tls_port,
            identifier="dev-a",
            username="dev-a",
            password=keys.password("dev-a"),
            tls_context=trusted,
            timeout=10,
        ):
            pass
        stranger = ssl.create_default_context()  # the system's CAs do not know fayd's
        with pytest.raises(aiomqtt.MqttError):
            async with aiomqtt.Client("127.0.0.1", tls_port, tls_context=stranger, timeout=5):
                pass
        with pytest.raises(aiomqtt.MqttError):  # plain MQTT on the TLS port
            async with aiomqtt.Client("127.0.0.1", tls_port, timeout=5):
                pass
        assert broker.connect_host == "127.0.0.1"  # fayd itself: plain, on loopback
    # Made once: the CA stays (devices trust it), the server certificate too.
    ca, cert = tls.ca.read_bytes(), tls.cert.read_bytes()
    again = ensure_tls(tmp_path / "tls", tls_port, ["localhost", "127.0.0.1"])
    assert (
        again.ca.read_bytes() == ca
        and oct((tmp_path / "tls" / "ca.key").stat().st_mode & 0o777) == "0o600"
    )
    assert again.cert.read_bytes() == cert
    renamed = ensure_tls(tmp_path / "tls", tls_port, ["fayd-box.local"])
    assert renamed.ca.read_bytes() == ca and renamed.cert.read_bytes() != cert


ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0 or broker_account().is_mine,
    reason="only fayd run as root hands mosquitto to another account (and needs a 'fayd' or"
    " 'mosquitto' system user)",
)


@ROOT_ONLY
async def test_fayd_as_root_runs_mosquitto_as_an_unprivileged_account(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    account = broker_account()
    # pytest's folders are root's alone (0700), like /root/.local/state: mosquitto's files
    # then go to a folder of its own that it can reach.
    folder = broker_folder(tmp_path / "state", account)
    assert folder.parent == Path(tempfile.gettempdir())
    keys = Keys("dev-a")
    tls = ensure_tls(tmp_path / "state" / "mosquitto" / "tls", free_port(), ["127.0.0.1"])
    try:
        with caplog.at_level(logging.INFO, logger="fayd.transport.broker"):
            async with embedded(folder, keys, account=account, tls=tls) as broker:
                assert broker._proc is not None
                assert os.stat(f"/proc/{broker._proc.pid}").st_uid == account.uid
                await broker.reload()  # a password file it can still read after a change
                async with as_device(broker, keys, "dev-a"):
                    pass
        assert "should not be run as root" not in caplog.text
        for name in ("passwd", "acl", "mosquitto.conf", "tls-broker/server.key"):
            assert (folder / name).stat().st_uid == account.uid, name
        # The household CA's key stays root's, in the state folder.
        assert not (folder / "tls-broker" / "ca.key").exists()
        assert (tmp_path / "state" / "mosquitto" / "tls" / "ca.key").stat().st_uid == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)
