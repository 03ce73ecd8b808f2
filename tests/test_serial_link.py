"""The serial link over real socat PTY pairs: hello and the proof of the device's key first,
frames both ways, garbage on the line, a device that claims another's id, unplug and replug,
and hot-plug by the watcher."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import serial

from fayd.auth import new_device_secret, serial_proof
from fayd.protocol import Command, Hello, Proof, SensorEvent, TextIn, decode, encode
from fayd.protocol.serial import SerialDecoder, SerialGarbage, encode_packet
from fayd.transport.hotplug import SerialWatcher, scan_ports
from fayd.transport.serial import SerialLink

from .conftest import PtyPair

#: The keys `fayd devices add` would have made for the test boards.
KEYS = {name: new_device_secret() for name in ("d1", "kitchen", "bedroom", "s1", "arm", "screen-1")}


async def keys(device: str) -> str | None:
    return KEYS.get(device)


async def until(check: Callable[[], object], within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not true after {within_s} s: {check}")
        await asyncio.sleep(0.01)


class Device:
    """The device end of a PTY pair, through pyserial as firmware tests on a host would."""

    def __init__(self, path: Path) -> None:
        self.port = serial.Serial(str(path), 921600, timeout=0.02)
        self.decoder = SerialDecoder()
        self.frames: list[tuple[str, bytes]] = []

    def send(self, frame: object) -> None:
        self.port.write(encode_packet(frame.KIND, encode(frame)))  # type: ignore[attr-defined]

    def say_hello(self, device: str = "d1") -> None:
        self.send(Hello(device=device, roles=("robot",)))

    async def hello(self, device: str = "d1", before: bytes = b"") -> None:
        """Say hello and prove the device's key, as the firmware does: the link takes the
        device once it acks the proof."""
        start = len(self.frames)
        self.port.write(before + encode_packet("hello", encode(Hello(device, ("robot",)))))
        while "challenge" not in [k for k, _ in self.frames[start:]]:
            await self.receive()
        [nonce] = [decode(k, p).nonce for k, p in self.frames[start:] if k == "challenge"]
        self.send(Proof(device, nonce, serial_proof(KEYS[device], device, nonce)))
        while nonce not in [json.loads(p)["ref"] for k, p in self.frames if k == "ack"]:
            await self.receive()

    async def receive(self, count: int = 1, within_s: float = 5.0) -> list[tuple[str, bytes]]:
        """Wait for ``count`` more frames; return every frame received so far."""
        want = len(self.frames) + count
        deadline = time.monotonic() + within_s
        while len(self.frames) < want:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.frames)} of {want} frames after {within_s} s")
            data = await asyncio.to_thread(self.port.read, 65536)
            for item in self.decoder.feed(data):
                assert not isinstance(item, SerialGarbage), item
                self.frames.append(item)
        return self.frames

    def close(self) -> None:
        self.port.close()


class Inbox:
    """What a hub would get from the link: (device, kind, payload) in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, bytes]] = []

    async def __call__(self, device: str, kind: str, payload: bytes) -> None:
        self.items.append((device, kind, payload))

    def kinds(self) -> list[tuple[str, str]]:
        return [(d, k) for d, k, _ in self.items]


@contextlib.asynccontextmanager
async def running(link_or_watcher: SerialLink | SerialWatcher) -> AsyncIterator[None]:
    task = asyncio.create_task(link_or_watcher.run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@contextlib.contextmanager
def device_on(path: Path) -> Iterator[Device]:
    dev = Device(path)
    try:
        yield dev
    finally:
        dev.close()


def errors_of(frames: list[tuple[str, bytes]]) -> list[str]:
    return [json.loads(p)["code"] for k, p in frames if k == "error"]


async def test_hello_first_then_frames_both_ways(pty_pair: PtyPair) -> None:
    inbox = Inbox()
    link = SerialLink(str(pty_pair.a), inbox, keys, min_backoff=0.05)
    async with running(link):
        await asyncio.wait_for(link.connected.wait(), 5)
        with device_on(pty_pair.b) as dev:
            dev.send(TextIn("before hello"))
            frames = await dev.receive()
            assert errors_of(frames) == ["unexpected"]
            assert "hello" in json.loads(frames[0][1])["message"]
            assert inbox.items == []

            await dev.hello("d1")
            dev.send(TextIn("hi there"))
            dev.send(SensorEvent(seq=7, sensor="door", data={"open": True}))
            await until(lambda: len(inbox.items) == 3)
            assert inbox.kinds() == [("d1", "hello"), ("d1", "text"), ("d1", "event")]
            assert decode("text", inbox.items[1][2]) == TextIn("hi there")
            assert link.device == "d1" and link.status.device == "d1"

            assert link.send("d1", Command("stop", id="c-1"))
            assert not link.send("someone-else", Command("stop"))
            frames = await dev.receive()
            assert frames[-1][0] == "command"
            assert decode("command", frames[-1][1]) == Command("stop", id="c-1")


async def test_a_device_cannot_speak_for_another_id(tmp_path: Path, pty_pair: PtyPair) -> None:
    inbox = Inbox()
    owners: dict[str, SerialLink] = {}
    second = PtyPair(tmp_path, "ttyFAYD1", "device1").start()
    try:
        link1 = SerialLink(str(pty_pair.a), inbox, keys, owners=owners)
        link2 = SerialLink(str(second.a), inbox, keys, owners=owners)
        async with running(link1), running(link2):
            await asyncio.wait_for(link1.connected.wait(), 5)
            await asyncio.wait_for(link2.connected.wait(), 5)
            with device_on(pty_pair.b) as dev1, device_on(second.b) as dev2:
                dev1.port.write(encode_packet("hello", b'{"device": "kitchen"'))  # cut short
                assert errors_of(await dev1.receive()) == ["malformed"]
                await dev1.hello("kitchen")
                await until(lambda: owners.get("kitchen") is link1)
                dev1.say_hello("bedroom")  # the same port, now another id: refused
                dev2.say_hello("kitchen")  # another port, an id already taken: refused
                assert errors_of(await dev1.receive()) == ["malformed", "bad-id"]
                assert errors_of(await dev2.receive()) == ["bad-id"]
                dev1.send(TextIn("still me"))
                await until(lambda: len(inbox.items) == 2)
                assert inbox.kinds() == [("kitchen", "hello"), ("kitchen", "text")]
                assert link2.device is None
    finally:
        second.stop()


async def test_garbage_on_the_line_loses_no_valid_frame(pty_pair: PtyPair) -> None:
    """100k random and mutated packets, with valid events between them, through a PTY."""
    inbox = Inbox()
    link = SerialLink(str(pty_pair.a), inbox, keys, queue_size=4096)
    rng = random.Random(9)
    async with running(link):
        await asyncio.wait_for(link.connected.wait(), 5)
        with device_on(pty_pair.b) as dev:
            boot = b"rst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
            await dev.hello("s1", before=boot)
            stream = bytearray()
            sent = 0
            for i in range(100_000):
                if i % 2:
                    packet = bytearray(encode_packet("event", b'{"seq":1,"sensor":"x"}'))
                    packet[rng.randrange(2, len(packet) - 1)] ^= 1 << rng.randrange(8)
                    stream += packet
                else:
                    stream += rng.randbytes(rng.randrange(1, 60))
                if i % 3 == 0:
                    stream += encode_packet("event", encode(SensorEvent(seq=sent, sensor="t")))
                    sent += 1
            await asyncio.to_thread(dev.port.write, bytes(stream))
            await until(lambda: len(inbox.items) == 1 + sent, within_s=30)
            seqs = [decode(k, p).seq for _, k, p in inbox.items if k == "event"]
            assert seqs == list(range(sent))
            assert sum(link.status.garbage.values()) >= 50_000
            # The device is told about dropped packets, but at most once a second.
            await asyncio.sleep(0.1)
            assert 1 <= link.status.refused <= 40


async def test_unplug_then_replug_resumes(pty_pair: PtyPair) -> None:
    inbox = Inbox()
    link = SerialLink(str(pty_pair.a), inbox, keys, min_backoff=0.05, max_backoff=0.2)
    async with running(link):
        await asyncio.wait_for(link.connected.wait(), 5)
        with device_on(pty_pair.b) as dev:
            await dev.hello("arm")
            await asyncio.wait_for(link.identified.wait(), 5)

        pty_pair.stop()  # the cable is pulled
        await until(lambda: ("arm", "presence") in inbox.kinds())
        assert json.loads(inbox.items[-1][2]) == {"v": 1, "online": False}
        assert not link.connected.is_set() and link.device is None
        assert not link.send("arm", Command("stop"))
        await asyncio.sleep(0.3)  # a few failed reopens
        assert "cannot open" in link.status.last_error

        pty_pair.start()  # and plugged in again
        await until(lambda: link.status.opens == 2)
        with device_on(pty_pair.b) as dev:
            await dev.hello("arm")  # a device says hello after every (re)connect
            dev.send(TextIn("back again"))
            await until(lambda: inbox.kinds()[-1] == ("arm", "text"))
            assert link.send("arm", Command("stop"))
            assert (await dev.receive())[-1][0] == "command"


async def test_outbox_is_bounded(pty_pair: PtyPair) -> None:
    link = SerialLink(str(pty_pair.a), Inbox(), keys, queue_size=8)
    async with running(link):
        # pyserial flushes the input when it opens a port: a device speaks once it is open.
        await asyncio.wait_for(link.connected.wait(), 5)
        with device_on(pty_pair.b) as dev:
            await dev.hello("d1")
            await asyncio.wait_for(link.identified.wait(), 5)
            # No await in between: the writer cannot drain, so all but 8 are dropped.
            results = [link.send("d1", Command("stop")) for _ in range(100)]
            assert results.count(True) == 8
            assert link.status.dropped == 92
            assert [k for k, _ in (await dev.receive(8))[-8:]] == ["command"] * 8


def test_scan_dedupes_symlinks_and_skips_dangling_ones(tmp_path: Path) -> None:
    (tmp_path / "ttyACM0").write_text("")
    (tmp_path / "fayd").mkdir()
    (tmp_path / "fayd" / "esp32-F4").symlink_to(tmp_path / "ttyACM0")
    (tmp_path / "fayd" / "gone").symlink_to(tmp_path / "nowhere")
    patterns = [str(tmp_path / "fayd" / "*"), str(tmp_path / "ttyACM*")]
    assert scan_ports(patterns) == [str(tmp_path / "fayd" / "esp32-F4")]


async def test_watcher_follows_ports_as_they_come_and_go(tmp_path: Path) -> None:
    inbox = Inbox()
    watcher = SerialWatcher(inbox, keys, patterns=[str(tmp_path / "ttyFAYD*")], interval=0.05)
    pair = PtyPair(tmp_path)
    try:
        async with running(watcher):
            await asyncio.sleep(0.1)
            assert watcher.links == {}
            pair.start()  # plugged in
            await until(lambda: str(pair.a) in watcher.links)
            link = watcher.links[str(pair.a)][0]
            await asyncio.wait_for(link.connected.wait(), 5)
            with device_on(pair.b) as dev:
                await dev.hello("screen-1")
                await until(lambda: watcher.owns("screen-1"))
                assert watcher.send("screen-1", Command("stop"))
                assert not watcher.send("nobody", Command("stop"))
                assert (await dev.receive())[-1][0] == "command"
                assert watcher.status()[0]["device"] == "screen-1"

            pair.stop()  # unplugged: the link stops and the device goes offline
            await until(lambda: not watcher.links and not watcher.owns("screen-1"))
            await until(lambda: inbox.kinds()[-1] == ("screen-1", "presence"))

            pair.start()  # replugged: a new link, and the device resumes
            await until(lambda: str(pair.a) in watcher.links)
            link = watcher.links[str(pair.a)][0]
            await asyncio.wait_for(link.connected.wait(), 5)
            with device_on(pair.b) as dev:
                await dev.hello("screen-1")
                dev.send(TextIn("hello again"))
                await until(lambda: inbox.kinds()[-1] == ("screen-1", "text"))
                assert watcher.send("screen-1", Command("stop"))
    finally:
        pair.stop()
