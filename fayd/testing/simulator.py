"""A simulated device on MQTT: says hello, speaks a WAV (or types text) into fayd, collects
what comes back, and says it is offline when it ends. Used by ``fayd sim device``, the tests
and the benchmarks."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
import numpy as np

from fayd.protocol import (
    AudioChunk,
    AudioFormat,
    Hello,
    Human,
    TextIn,
    Topics,
    decode,
    encode,
)
from fayd.speech.audio import float_to_pcm16
from fayd.transport.mqtt import no_delay, parse_mqtt_url

#: 32 ms of 16 kHz audio per frame, like an ESP32 I2S DMA buffer.
FRAME_SAMPLES = 512
#: Its presence when it leaves, retained: also its last will (docs/protocol.md, presence).
OFFLINE = b'{"v":1,"online":false}'


@dataclass
class Reply:
    """Everything a device received for one reply."""

    frames: list[tuple[str, Any]] = field(default_factory=list)
    pcm: bytearray = field(default_factory=bytearray)
    rate: int = 0
    first_audio_at: float | None = None
    ended_at: float | None = None

    @property
    def text(self) -> str:
        parts = [f.text for k, f in self.frames if k == "human" and f.key == "text" and f.text]
        return " ".join(parts)

    @property
    def audio_humans(self) -> list[Human]:
        return [f for k, f in self.frames if k == "human" and f.key == "audio"]


class SimDevice:
    """``password``: the device's MQTT password (fayd.auth.mqtt_password of its key); fayd's
    broker admits no device without one."""

    def __init__(
        self, url: str, device: str = "sim-1", prefix: str = "fayd/v1", password: str | None = None
    ) -> None:
        self.host, self.port = parse_mqtt_url(url)
        self.device = device
        self.password = password
        self.topics = Topics(prefix)
        self.client: aiomqtt.Client | None = None
        self.stream = 0
        self.received: asyncio.Queue[tuple[str, Any, float]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        #: Online since its hello; leaving the ``async with`` says it is offline.
        self.said_hello = False

    async def __aenter__(self) -> SimDevice:
        # It logs in as its device id: fayd's broker lets it use only that device's topics.
        will = aiomqtt.Will(self.topics.up(self.device, "presence"), OFFLINE, 1, True)
        self.client = aiomqtt.Client(
            self.host,
            self.port,
            identifier=self.device,
            username=self.device if self.password else None,
            password=self.password,
            will=will,
            timeout=10,
        )
        await self.client.__aenter__()
        no_delay(self.client)
        await self.client.subscribe(self.topics.all_down(self.device), qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self.client is None:
            return
        try:
            if self.said_hello:  # a clean disconnect sends no last will: say it ourselves
                await self.publish("presence", OFFLINE, retain=True)
        except aiomqtt.MqttError:
            pass  # the connection is gone: the broker publishes the last will instead
        finally:
            await self.client.__aexit__(None, None, None)

    async def _read(self) -> None:
        assert self.client is not None
        async for message in self.client.messages:
            parsed = self.topics.parse(message.topic.value)
            if parsed:
                payload = bytes(message.payload)  # type: ignore[arg-type]
                kind = parsed[2]
                await self.received.put((kind, decode(kind, payload), time.monotonic()))

    async def publish(self, kind: str, payload: bytes, retain: bool = False) -> None:
        assert self.client is not None
        qos = 0 if kind == "audio" else 1
        await self.client.publish(self.topics.up(self.device, kind), payload, qos, retain)

    async def hello(self, roles: tuple[str, ...] = ("mic", "speaker"), **kw: Any) -> None:
        frame = Hello(self.device, roles, fw="sim", audio_in=AudioFormat(16000), **kw)
        await self.publish("hello", encode(frame), retain=True)
        await self.publish("presence", b'{"v":1,"online":true}', retain=True)
        self.said_hello = True

    async def say_text(self, text: str, user: str | None = None) -> None:
        await self.publish("text", encode(TextIn(text, user=user)))

    async def speak(self, samples: np.ndarray, realtime: bool = False) -> float:
        """Send 16 kHz float32 audio as a stream; returns when the last frame left
        (time.monotonic()), which is the end of speech when the audio ends in silence."""
        self.stream = (self.stream + 1) % 65536
        pcm = float_to_pcm16(samples)
        step = FRAME_SAMPLES * 2
        offsets = range(0, len(pcm), step)
        started = time.monotonic()
        for seq, offset in enumerate(offsets):
            last = offset + step >= len(pcm)
            chunk = AudioChunk(
                self.stream, seq, 16000, pcm[offset : offset + step], start=seq == 0, end=last
            )
            await self.publish("audio", chunk.encode())
            if realtime:
                due = started + (seq + 1) * FRAME_SAMPLES / 16000
                await asyncio.sleep(max(0.0, due - time.monotonic()))
        return time.monotonic()

    async def collect_reply(self, within_s: float = 120.0) -> Reply:
        """Everything up to the reply's closing frames (audio IsEnd, or text IsEnd)."""
        reply = Reply()
        audio_done = text_done = False
        deadline = time.monotonic() + within_s
        while not (text_done and (audio_done or not reply.audio_humans)):
            left = deadline - time.monotonic()
            async with asyncio.timeout(max(left, 0.01)):
                kind, frame, at = await self.received.get()
            reply.frames.append((kind, frame))
            if kind == "audio":
                if frame.pcm and reply.first_audio_at is None:
                    reply.first_audio_at = at
                reply.pcm += frame.pcm
                reply.rate = frame.rate
                audio_done = audio_done or frame.end
            elif kind == "human" and frame.is_end:
                text_done = text_done or frame.key == "text"
            elif kind == "error":
                raise RuntimeError(f"fayd sent an error: {frame.code}: {frame.message}")
        reply.ended_at = time.monotonic()
        return reply


def frames_jsonl(reply: Reply) -> str:
    """The received frames as JSON lines (audio frames summarised, not dumped)."""
    lines = []
    for kind, frame in reply.frames:
        if kind == "audio":
            data = {
                "stream": frame.stream,
                "seq": frame.seq,
                "rate": frame.rate,
                "bytes": len(frame.pcm),
                "start": frame.start,
                "end": frame.end,
            }
        else:
            data = frame.to_dict()
        lines.append(json.dumps({"kind": kind, "frame": data}, ensure_ascii=False))
    return "\n".join(lines) + "\n"
