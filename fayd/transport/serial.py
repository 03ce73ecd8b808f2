"""The serial link: one USB/UART port, one device, the same frames as MQTT.

Bytes are framed by :mod:`fayd.protocol.serial` (COBS + CRC-32). The port is opened with
pyserial, switched to non-blocking, and driven by the event loop with ``loop.add_reader`` /
``add_writer`` on its file descriptor. Why not a reader thread: frames then land on the loop
with no locks or thread hand-off, a lost port shows up as an error in the same task that
handles it, and cancelling the link is just cancelling a task. (pyserial-asyncio would do the
same, but is another dependency for 30 lines.)

A serial link learns its device from the device's ``hello``; until then every other frame
is refused with an ``error`` frame (``unexpected``), which tells the device to say hello. A
hello naming another device than the one already on the link, or a device already on
another serial link, is refused (``bad-id``). When the port goes away (a pulled cable), the
link tells the hub that the device is offline (a ``presence`` frame, as MQTT's last will
would), forgets the device and reopens the port with back-off until it comes back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import serial

from fayd.errors import LinkError, ProtocolError
from fayd.protocol import Error, decode, encode
from fayd.protocol.serial import SerialDecoder, SerialGarbage, encode_packet

log = logging.getLogger(__name__)

#: Called for every uplink frame: (device, kind, payload) — as MqttLink does.
Inbound = Callable[[str, str, bytes], Awaitable[None]]

DEFAULT_BAUDRATE = 921600
OFFLINE = json.dumps({"v": 1, "online": False}, separators=(",", ":")).encode()
#: At most one error frame about line garbage per this many seconds (noise must not flood).
GARBAGE_REPLY_INTERVAL_S = 1.0
READ_SIZE = 65536


@dataclass
class SerialStatus:
    port: str
    open: bool = False
    device: str | None = None
    opens: int = 0
    received: int = 0
    sent: int = 0
    dropped: int = 0
    refused: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    garbage: Counter[str] = field(default_factory=Counter)
    last_error: str = ""
    last_error_at: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["garbage"] = dict(self.garbage)
        return out


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def _fd_ready(fd: int, *, write: bool) -> None:
    """Wait until ``fd`` is readable (or writable): one add_reader/add_writer per wait."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()
    if write:
        loop.add_writer(fd, _wake, fut)
    else:
        loop.add_reader(fd, _wake, fut)
    try:
        await fut
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


class SerialLink:
    """Moves frames over one serial port. ``send`` never blocks: a full outbox drops.

    ``owners`` is shared by the links of one :class:`~fayd.transport.hotplug.SerialWatcher`
    (device id → link), so one device id cannot be on two ports at once.
    """

    def __init__(
        self,
        port: str,
        inbound: Inbound,
        *,
        baudrate: int = DEFAULT_BAUDRATE,
        queue_size: int = 256,
        min_backoff: float = 0.1,
        max_backoff: float = 5.0,
        exclusive: bool = True,
        owners: dict[str, SerialLink] | None = None,
    ) -> None:
        self.port = port
        self.inbound = inbound
        self.baudrate = baudrate
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        # flock the port: a port another program holds locked is left alone (see open()).
        self.exclusive = exclusive
        self.owners = owners if owners is not None else {}
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue(queue_size)
        self.status = SerialStatus(port)
        self.connected = asyncio.Event()  # the port is open
        self.identified = asyncio.Event()  # a device said hello
        self.device: str | None = None
        self._decoder = SerialDecoder()
        self._serial: serial.Serial | None = None
        self._last_garbage_reply = 0.0

    # --- the interface MqttLink has ---------------------------------------------------------

    def send(self, device: str, frame: object) -> bool:
        """Queue one frame for the device on this port; False if dropped (full outbox, or
        ``device`` is not, or no longer, the one on this port)."""
        if device != self.device:
            log.debug("serial %s: no device %r here, %s frame dropped", self.port, device, frame)
            return False
        kind = frame.KIND  # type: ignore[attr-defined]
        return self._push(encode_packet(kind, encode(frame)))

    async def run(self) -> None:
        """Open the port and serve it; reopen with back-off whenever it fails or vanishes.
        Never returns; cancel the task to stop (the device is then reported offline)."""
        backoff = self.min_backoff
        failing = False
        try:
            while True:
                try:
                    self._open()
                except LinkError as exc:
                    self._error(str(exc), quiet=failing)
                    failing = True
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, self.max_backoff)
                    continue
                failing = False
                backoff = self.min_backoff
                try:
                    await self._session()
                except LinkError as exc:
                    self._error(str(exc))
                except Exception as exc:  # a bug must not end the link for good: reopen
                    log.exception("serial %s: link failed", self.port)
                    self._error(f"serial {self.port}: {exc!r}")
                    await asyncio.sleep(self.max_backoff)
                finally:
                    self._close()
                    await self._forget()
        finally:
            self._close()
            await self._forget()

    # --- the port ---------------------------------------------------------------------------

    def _open(self) -> None:
        ser = serial.Serial(
            baudrate=self.baudrate,
            timeout=0,
            write_timeout=0,
            exclusive=self.exclusive,
        )
        ser.port = self.port
        try:
            ser.open()
            # O_NONBLOCK (pyserial 3.5 sets it already): os.read/os.write never block the loop.
            os.set_blocking(ser.fileno(), False)
        except (serial.SerialException, OSError, ValueError) as exc:
            ser.close()
            raise LinkError(f"serial {self.port}: cannot open: {exc}") from exc
        self._serial = ser
        self._decoder = SerialDecoder()
        self.status.open = True
        self.status.opens += 1
        self.connected.set()
        log.info("serial %s: open at %d baud", self.port, self.baudrate)

    def _close(self) -> None:
        if self._serial is not None:
            self._serial.close()
            self._serial = None
            self.status.open = False
            self.connected.clear()

    async def _session(self) -> None:
        """Read and write until the port fails; raises LinkError then."""
        assert self._serial is not None
        fd = self._serial.fileno()
        loops = {
            asyncio.create_task(self._read_loop(fd)),
            asyncio.create_task(self._write_loop(fd)),
        }
        try:
            done, _ = await asyncio.wait(loops, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)

    async def _read_loop(self, fd: int) -> None:
        empty = 0
        while True:
            await _fd_ready(fd, write=False)
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise LinkError(f"serial {self.port}: read failed: {exc}") from exc
            if not data:
                # Readable yet empty: a hang-up (unplugged, or the PTY's other end closed).
                # A hang-up stays readable, so a second empty read in a row confirms it.
                empty += 1
                if empty >= 2:
                    raise LinkError(f"serial {self.port}: the port went away")
                continue
            empty = 0
            self.status.bytes_in += len(data)
            for item in self._decoder.feed(data):
                if isinstance(item, SerialGarbage):
                    self._on_garbage(item)
                else:
                    await self._on_packet(*item)

    async def _write_loop(self, fd: int) -> None:
        while True:
            packet = await self.outbox.get()
            view = memoryview(packet)
            while view:
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    await _fd_ready(fd, write=True)
                    continue
                except OSError as exc:
                    raise LinkError(f"serial {self.port}: write failed: {exc}") from exc
                view = view[written:]
                self.status.bytes_out += written
            self.status.sent += 1

    # --- frames -----------------------------------------------------------------------------

    async def _on_packet(self, kind: str, payload: bytes) -> None:
        self.status.received += 1
        if kind == "hello":
            if not self._accept_hello(payload):
                return
        elif self.device is None:
            if kind != Error.KIND:  # never answer an error with an error
                self._refuse("unexpected", f"{kind} frame before hello: send hello first")
            else:
                log.warning("serial %s: error frame before hello: %r", self.port, payload[:200])
            return
        assert self.device is not None
        await self.inbound(self.device, kind, payload)

    def _accept_hello(self, payload: bytes) -> bool:
        """Learn (or confirm) the device of this port from its hello."""
        try:
            hello = decode("hello", payload)
        except ProtocolError as exc:
            self._refuse(exc.code, f"bad hello: {exc}")
            return False
        if self.device is not None and hello.device != self.device:
            self._refuse("bad-id", f"hello names {hello.device!r} on the port of {self.device!r}")
            return False
        owner = self.owners.get(hello.device)
        if owner is not None and owner is not self:
            self._refuse("bad-id", f"device {hello.device!r} is already on {owner.port}")
            return False
        if self.device is None:
            log.info("serial %s: device %s said hello", self.port, hello.device)
        self.device = hello.device
        self.status.device = hello.device
        self.owners[hello.device] = self
        self.identified.set()
        return True

    def _on_garbage(self, garbage: SerialGarbage) -> None:
        self.status.garbage[garbage.reason] += 1
        total = sum(self.status.garbage.values())
        if total in (1, 10, 100) or total % 1000 == 0:
            log.warning("serial %s: dropped %s; %d dropped so far", self.port, garbage, total)
        # Before a hello the port may not even be a fayd device (or it is printing its boot
        # log): stay silent. After it, tell the device, at most once a second.
        now = time.monotonic()
        if self.device is not None and now - self._last_garbage_reply >= GARBAGE_REPLY_INTERVAL_S:
            self._last_garbage_reply = now
            self._refuse(garbage.code, f"serial packet dropped: {garbage}")

    def _refuse(self, code: str, message: str) -> None:
        self.status.refused += 1
        log.warning("serial %s: refused: %s", self.port, message)
        self._push(encode_packet(Error.KIND, encode(Error(code, message))))

    def _push(self, packet: bytes) -> bool:
        try:
            self.outbox.put_nowait(packet)
            return True
        except asyncio.QueueFull:
            self.status.dropped += 1
            dropped = self.status.dropped
            if dropped in (1, 10, 100) or dropped % 1000 == 0:
                log.warning("serial %s: outbox full: %d frames dropped so far", self.port, dropped)
            return False

    async def _forget(self) -> None:
        """The port is gone: drop what was queued for its device and report it offline."""
        while not self.outbox.empty():
            self.outbox.get_nowait()
        device, self.device = self.device, None
        self.status.device = None
        self.identified.clear()
        if device is None:
            return
        if self.owners.get(device) is self:
            del self.owners[device]
        log.info("serial %s: device %s is gone", self.port, device)
        try:
            await self.inbound(device, "presence", OFFLINE)
        except Exception:  # the hub's problem must not stop the link from reopening
            log.exception("serial %s: reporting %s offline failed", self.port, device)

    def _error(self, message: str, *, quiet: bool = False) -> None:
        self.status.last_error = message
        self.status.last_error_at = time.time()
        if quiet:
            log.debug("%s; retrying", message)
        else:
            log.warning("%s; retrying with back-off", message)
