"""The MQTT link: one long-lived task that connects, reconnects with back-off, and moves
frames between the broker and two bounded queues. It never decodes: the hub does that."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiomqtt
import paho.mqtt.client as paho

from fayd.beat import Pulse, until_beat
from fayd.errors import ConfigError
from fayd.logwords import hide_secrets
from fayd.protocol import AudioChunk, Outgoing, Topics, encode
from fayd.protocol.text import shown

log = logging.getLogger(__name__)

#: Seconds between pings through the broker (the link's Pulse).
PING_S = 30.0

#: Uplink kinds that start a turn: one left retained on a broker would be answered again
#: at every connect, so a retained one is never taken (docs/protocol.md).
TURN_KINDS = frozenset({"text", AudioChunk.KIND})
#: At most this many (device, kind) remembered for logging a retained turn frame once.
STALE_TOLD_MAX = 1024

#: Called for every uplink message: (device, kind, payload).
Inbound = Callable[[str, str, bytes], Awaitable[None]]
#: Called for a message on a topic someone listens to (``MqttLink.listen``): (topic,
#: payload, retained: it was stored by the broker before this connection subscribed).
Listener = Callable[[str, bytes, bool], Awaitable[None]]


def parse_mqtt_url(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "tcp") or not parts.hostname:
        raise ConfigError(f"mqtt.url: expected mqtt://host[:port] or 'embedded', got {url!r}")
    return parts.hostname, parts.port or 1883


def no_delay(client: aiomqtt.Client) -> None:
    """TCP_NODELAY on a connected client's socket. paho leaves Nagle on, so a small write
    right after another (a PUBACK, then an ack frame) waited for the broker's delayed ACK:
    ~40 ms per QoS 1 exchange on loopback (measured), ~1 ms with this."""
    sock = client._client.socket()  # paho's socket; aiomqtt has no option for this
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class QuietClient(aiomqtt.Client):
    """aiomqtt's client with paho's housekeeping (the keepalive ping and its timeout) run
    every ``misc_s`` seconds on the pollers' beat, not every second on its own: an idle
    daemon's CPU is its wake-ups (fayd.beat), and a 30 s keepalive needs a look
    every few seconds at most. Overrides aiomqtt's private ``_misc_loop`` (aiomqtt 2.x)."""

    def __init__(self, *args: Any, misc_s: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.misc_s = misc_s

    async def _misc_loop(self) -> None:
        while self._client.loop_misc() == paho.MQTT_ERR_SUCCESS:  # noqa: ASYNC110 (a clock)
            await asyncio.sleep(until_beat(self.misc_s))


@dataclass
class LinkStatus:
    connected: bool = False
    url: str = ""
    connects: int = 0
    last_error: str = ""
    last_error_at: float = 0.0
    dropped: int = 0
    received: int = 0
    sent: int = 0
    since: float = field(default_factory=time.time)


class MqttLink:
    """Moves frames over a broker. ``send`` never blocks: a full queue drops with a warning."""

    def __init__(
        self,
        topics: Topics,
        inbound: Inbound,
        *,
        client_id: str = "fayd",
        username: str = "",
        password: str = "",
        keepalive: int = 30,
        queue_size: int = 512,
        max_backoff: float = 30.0,
        ping_s: float = PING_S,
    ) -> None:
        self.topics = topics
        self.inbound = inbound
        self.client_id = client_id
        self.username = username or None
        self.password = password or None
        self.keepalive = keepalive
        self.max_backoff = max_backoff
        self.outbox: asyncio.Queue[tuple[str, bytes, int, bool]] = asyncio.Queue(queue_size)
        self.status = LinkStatus()
        self.connected = asyncio.Event()
        #: Proof of life: a ping through the broker and back (connected), or the wait
        #: before the next try (not). A link that is connected but gets nothing back is
        #: wedged: the supervisor says "stalled". Not essential: restarting fayd does not
        #: mend a broker.
        self.pulse = Pulse(ping_s)
        #: Topic filters beyond the devices' uplinks, subscribed in this order at every
        #: connect, each with who is told of its messages.
        self.listeners: list[tuple[str, Listener]] = []
        #: Told after each connect (subscriptions made): who must publish again what a
        #: broker that lost its retained messages (killed before it saved them) forgot.
        self.on_connect: list[Callable[[], None]] = []
        self._client: aiomqtt.Client | None = None  # while connected
        #: Where a device's retained message goes when it comes from the broker's store,
        #: not live (None: to ``inbound`` like the others).
        self.replayed: Inbound | None = None
        #: Every this many seconds (0: only at connect) the broker's retained uplink
        #: messages are asked for again, for ``replayed`` to see what devices left
        #: retained meanwhile (fayd.transport.retained).
        self.replay_s = 0.0
        #: (device, kind) of the retained turn frames already said in the log.
        self._stale_told: set[tuple[str, str]] = set()

    def listen(self, topic_filter: str, listener: Listener) -> None:
        """Also subscribe to ``topic_filter`` (from the next connect on; one already made
        subscribes at ``catch_up()``); ``listener`` gets each message, and must not block."""
        self.listeners.append((topic_filter, listener))

    async def catch_up(self) -> None:
        """Listeners added while connected (the link starts before the agent is built, so
        that devices get back in while the models load): subscribed now, in order, and
        ``on_connect`` told. A connection lost meanwhile: the next connect does both."""
        client = self._client
        if client is None:
            return
        try:
            for topic_filter in dict.fromkeys(f for f, _ in self.listeners):
                await client.subscribe(topic_filter, qos=1)
        except aiomqtt.MqttError:
            return
        for told in self.on_connect:
            told()

    async def replay_retained(self) -> bool:
        """Subscribe to the devices' uplinks again: the broker then sends its retained
        uplink messages again (flagged retained, so to ``replayed``), and the live flow goes
        on. False when not connected."""
        client = self._client
        if client is None:
            return False
        try:
            await client.subscribe(self.topics.all_up, qos=1)
        except aiomqtt.MqttError:
            return False  # the connection is going: the next connect replays them anyway
        return True

    def send(self, device: str, frame: Outgoing, *, retain: bool = False) -> bool:
        """Queue one frame for a device's downlink; False if it was dropped."""
        kind = frame.KIND  # type: ignore[attr-defined]
        qos = 0 if isinstance(frame, AudioChunk) else 1
        return self._enqueue(self.topics.down(device, kind), encode(frame), qos, retain)

    def announce(self, topic: str, payload: bytes) -> bool:
        """A household message on ``topic`` (an alert), retained, at QoS 1."""
        return self._enqueue(topic, payload, 1, True)

    def publish(self, topic: str, payload: bytes, *, retain: bool) -> bool:
        """Any message at QoS 1 (Home Assistant's discovery and states, an alert's end);
        False if dropped."""
        return self._enqueue(topic, payload, 1, retain)

    def _enqueue(self, topic: str, payload: bytes, qos: int, retain: bool) -> bool:
        try:
            self.outbox.put_nowait((topic, payload, qos, retain))
            return True
        except asyncio.QueueFull:
            self.status.dropped += 1
            if self.status.dropped in (1, 10, 100) or self.status.dropped % 1000 == 0:
                log.warning("mqtt outbox full: %d frames dropped so far", self.status.dropped)
            return False

    async def run(self, url_source: Callable[[], Awaitable[str]]) -> None:
        """Connect and serve forever; ``url_source`` gives the broker URL (it may wait for
        the embedded broker). Reconnects with exponential back-off; never returns."""
        backoff = 1.0
        while True:
            self.pulse.beat()
            url = await url_source()
            host, port = parse_mqtt_url(url)
            # Status is printed and sent to the CLI: a password in the URL is not.
            self.status.url = where = hide_secrets(url)
            try:
                await self._session(host, port)
            except aiomqtt.MqttError as exc:
                self.status.last_error = hide_secrets(f"{where}: {exc}")
                self.status.last_error_at = time.time()
                was_up = self.connected.is_set()
                self.connected.clear()
                self.status.connected = False
                if was_up:
                    backoff = 1.0
                log.warning("mqtt: %s; retrying in %.0f s", self.status.last_error, backoff)
                self.pulse.beat()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff)

    async def _session(self, host: str, port: int) -> None:
        offline = json.dumps({"v": 1, "online": False}).encode()
        will = aiomqtt.Will(self.topics.daemon_status, offline, qos=1, retain=True)
        async with QuietClient(
            host,
            port,
            identifier=self.client_id,
            username=self.username,
            password=self.password,
            keepalive=self.keepalive,
            will=will,
            timeout=10,
            # A ping then goes out within 7/6 × keepalive of silence; the broker waits 1.5 ×.
            misc_s=max(1, self.keepalive // 6),
        ) as client:
            no_delay(client)
            await client.subscribe(self.topics.all_up, qos=1)
            await client.subscribe(self.topics.daemon_ping, qos=0)
            for topic_filter in dict.fromkeys(f for f, _ in self.listeners):
                await client.subscribe(topic_filter, qos=1)  # one by one: retained in order
            online = json.dumps({"v": 1, "online": True}).encode()
            await client.publish(self.topics.daemon_status, online, qos=1, retain=True)
            self.status.connected = True
            self.status.connects += 1
            self.connected.set()
            self._client = client
            for told in self.on_connect:
                told()
            log.info("mqtt: connected to %s:%d", host, port)
            # Either loop ends only by an error (a lost connection): stop the other, re-raise.
            loops = {
                asyncio.create_task(self._publish_loop(client)),
                asyncio.create_task(self._receive_loop(client)),
                asyncio.create_task(self._ping_loop(client)),
            }
            try:
                done, _ = await asyncio.wait(loops, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
                raise aiomqtt.MqttError("the broker closed the connection")
            finally:
                self._client = None
                for task in loops:
                    task.cancel()
                await asyncio.gather(*loops, return_exceptions=True)

    def _stale_turn(self, device: str, kind: str) -> None:
        """A retained text or audio frame from another broker's store (fayd's own broker
        clears them: fayd.transport.retained): something said before this connect, not
        now, so not answered again at every start. Logged once a device and kind."""
        if (device, kind) in self._stale_told:
            return
        if len(self._stale_told) < STALE_TOLD_MAX:
            self._stale_told.add((device, kind))
        log.warning(
            "mqtt: ignored the retained %s frame of device %s (the protocol retains only "
            "hello and presence; clear it on the broker)",
            kind,
            shown(device[:64]),
        )

    async def _publish_loop(self, client: aiomqtt.Client) -> None:
        while True:
            topic, payload, qos, retain = await self.outbox.get()
            await client.publish(topic, payload, qos=qos, retain=retain, timeout=10)
            self.status.sent += 1

    async def _ping_loop(self, client: aiomqtt.Client) -> None:
        """A ping on the shared beat; the receive loop beats when it comes back. The
        retained uplink messages are replayed on the same beat, every ``replay_s``."""
        replayed_at = time.monotonic()
        while True:
            await asyncio.sleep(until_beat(self.pulse.every_s))
            await client.publish(self.topics.daemon_ping, b"", qos=0, timeout=10)
            due = self.replay_s and time.monotonic() - replayed_at >= self.replay_s
            if due and self.replayed is not None:
                replayed_at = time.monotonic()
                await self.replay_retained()

    async def _receive_loop(self, client: aiomqtt.Client) -> None:
        self.pulse.beat()  # just connected
        async for message in client.messages:
            if message.topic.value == self.topics.daemon_ping:
                self.pulse.beat()
                continue
            payload = message.payload
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, bytes | bytearray):
                payload = b"" if payload is None else str(payload).encode()
            parsed = self.topics.parse(message.topic.value)
            if parsed is None or parsed[1] != "up":
                for topic_filter, listener in self.listeners:
                    if message.topic.matches(topic_filter):
                        await listener(message.topic.value, bytes(payload), message.retain)
                continue
            self.status.received += 1
            if message.retain and self.replayed is not None:
                await self.replayed(parsed[0], parsed[2], bytes(payload))
            elif message.retain and parsed[2] in TURN_KINDS:
                self._stale_turn(parsed[0], parsed[2])
            else:
                await self.inbound(parsed[0], parsed[2], bytes(payload))
