"""The serial link: one USB/UART port, one device, the same frames as MQTT.

Bytes are framed by :mod:`fayd.protocol.serial` (COBS + CRC-32). The port is opened with
pyserial, switched to non-blocking, and driven by the event loop with ``loop.add_reader`` /
``add_writer`` on its file descriptor. Why not a reader thread: frames then land on the loop
with no locks or thread hand-off, a lost port shows up as an error in the same task that
handles it, and cancelling the link is just cancelling a task. (pyserial-asyncio would do the
same, but is another dependency for 30 lines.)

A serial link learns its device from the device's ``hello`` and takes it only once the
board has proved it holds that device's key (:mod:`fayd.transport.serial_auth`): fayd answers
the hello with a ``challenge``, the board with a ``proof``; then the hello goes to the hub,
and the frames after it. Before that every other frame is dropped with an ``error`` frame
(``unexpected``: send hello first; ``unauthorized``: answer the challenge first), a burst
then one a second. A device never added (no key) or a wrong proof is refused
(``unauthorized``, logged once). A hello naming another device than the one already on the
link, or a device already on another serial link, is refused (``bad-id``). When the port
goes away (a pulled cable), the link tells the hub that the device is offline (a
``presence`` frame, as MQTT's last will would), forgets the device and reopens the port
with back-off until it comes back.
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
from fayd.protocol import Ack, Error, Hello, Outgoing, Proof, decode, encode
from fayd.protocol.budget import ErrorBudget
from fayd.protocol.serial import SerialDecoder, SerialGarbage, encode_packet
from fayd.transport.serial_auth import UNAUTHORIZED, Gate, Keys, Once, Refused, no_key

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
    #: The handshake: "" (none yet), "challenged D", "D proved its key", "refused D: why".
    auth: str = ""
    #: Error frames not sent because of the rate limit.
    errors_suppressed: int = 0
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
    (device id → link), so one device id cannot be on two ports at once. ``keys`` gives a
    device's key (None: never added); a device's frames are taken only once its board has
    proved it holds that key.
    """

    def __init__(
        self,
        port: str,
        inbound: Inbound,
        keys: Keys,
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
        self.keys = keys
        self.baudrate = baudrate
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        # flock the port: a port another program holds locked is left alone (see open()).
        self.exclusive = exclusive
        self.owners = owners if owners is not None else {}
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue(queue_size)
        self.status = SerialStatus(port)
        self.connected = asyncio.Event()  # the port is open
        self.identified = asyncio.Event()  # a device said hello and proved its key
        #: The device on this port: set once its board proved its key, never before.
        self.device: str | None = None
        self.gate = Gate()
        self._secret = ""  # the key the device proved with (a changed one drops it)
        self._limit = ErrorBudget()  # error frames before the proof: a burst, then 1/s
        self._once = Once()
        self._decoder = SerialDecoder()
        self._serial: serial.Serial | None = None
        self._last_garbage_reply = 0.0

    # --- the interface MqttLink has ---------------------------------------------------------

    def send(self, device: str, frame: Outgoing) -> bool:
        """Queue one frame for the device on this port; False if dropped (full outbox, or
        ``device`` is not, or no longer, the one on this port)."""
        if device != self.device:
            # The frame's kind, not the frame: a text frame's repr holds its words.
            kind = getattr(frame, "KIND", type(frame).__name__)
            log.debug("serial %s: no device %r here, %s frame dropped", self.port, device, kind)
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
        self._once.clear()
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
        if kind == Hello.KIND:
            await self._on_hello(payload)
        elif kind == Proof.KIND:
            await self._on_proof(payload)
        elif self.device is None:
            self._before_proof(kind, payload)
        else:
            await self.inbound(self.device, kind, payload)

    def _before_proof(self, kind: str, payload: bytes) -> None:
        """A frame from a board that has not proved its key: dropped, never taken."""
        claim = self.gate.claim
        if kind == Error.KIND:  # never answer an error with an error; log it once
            who = claim.device if claim else ""
            if self._once.first(who, "error frame"):
                try:  # a board without a key says so this way
                    error = decode(Error.KIND, payload)
                    said = f"{error.code}: {error.message}"
                except ProtocolError:
                    said = repr(payload[:200])
                log.warning(
                    "serial %s: %s before a proof says %s", self.port, who or "a board", said
                )
        elif claim is not None:
            what = f"{kind} frame before the proof of {claim.device!r}"
            self._refuse(UNAUTHORIZED, f"{what}: answer the challenge first", claim.device)
        else:
            self._refuse("unexpected", f"{kind} frame before hello: send hello first")

    async def _on_hello(self, payload: bytes) -> None:
        """A board says who it is: challenge it with that device's key."""
        try:
            hello = decode(Hello.KIND, payload)
        except ProtocolError as exc:
            self._refuse(exc.code, f"bad hello: {exc}")
            return
        device = hello.device
        if self.device is not None:
            if device != self.device:
                self._refuse("bad-id", f"hello names {device!r} on the port of {self.device!r}")
                return
            await self._forget()  # the board started again: it proves itself again
        owner = self.owners.get(device)
        if owner is not None and owner is not self:
            self._refuse("bad-id", f"device {device!r} is already on {owner.port}")
            return
        secret = await self._key_of(device)
        if secret is None:
            self.gate.reset()
            self._refused(no_key(device))
            return
        challenge = self.gate.challenge(device, payload, secret)
        self.status.auth = f"challenged {device}"
        log.debug("serial %s: device %s said hello; challenged", self.port, device)
        self._push(encode_packet(challenge.KIND, encode(challenge)))

    async def _on_proof(self, payload: bytes) -> None:
        """The board's answer: the device (and its held hello) is taken only if it holds."""
        try:
            proof = decode(Proof.KIND, payload)
        except ProtocolError as exc:
            self.gate.reset()  # any answer uses the challenge up
            self._refuse(exc.code, f"bad proof: {exc}")
            return
        try:
            claim = self.gate.check(proof)
        except Refused as exc:
            self._refused(exc)
            return
        owner = self.owners.get(claim.device)
        if owner is not None and owner is not self:  # another port proved it meanwhile
            self._refuse("bad-id", f"device {claim.device!r} is already on {owner.port}")
            return
        self.device = claim.device
        self._secret = claim.secret
        self.status.device = claim.device
        self.status.auth = f"{claim.device} proved its key"
        self.owners[claim.device] = self
        self.identified.set()
        log.info("serial %s: device %s said hello and proved its key", self.port, claim.device)
        self._push(encode_packet(Ack.KIND, encode(Ack(claim.nonce))))  # the board may speak
        await self.inbound(claim.device, Hello.KIND, claim.hello)

    async def _key_of(self, device: str) -> str | None:
        try:
            return await self.keys(device)
        except Exception:  # a store that fails: nobody is taken, the link goes on
            log.exception("serial %s: could not read the key of %s", self.port, device)
            return None

    def _refused(self, exc: Refused) -> None:
        """The handshake failed: an error frame naming why; logged once per device and why."""
        self.status.auth = f"refused {exc.device}: {exc.why}"
        if self._once.first(exc.device, exc.why):
            log.warning("serial %s: refused: %s (said once)", self.port, exc)
        self._refuse(UNAUTHORIZED, str(exc), exc.device, logged=False)

    async def recheck(self) -> bool:
        """Keys changed (``fayd devices add --new-key``, ``remove``): a device whose key is
        gone or new is dropped (reported offline) and must prove itself again. True if so."""
        claim = self.gate.claim
        if claim is not None and await self._key_of(claim.device) != claim.secret:
            if self.gate.claim is claim:  # a challenge made with the old key: void
                self.gate.reset()
        device = self.device
        if device is None:
            return False
        secret = await self._key_of(device)
        if secret is not None and secret == self._secret:
            return False
        await self._forget()
        why = "no key" if secret is None else "new key"
        message = f"the key of {device!r} was removed or replaced: say hello and prove it again"
        self._refused(Refused(device, why, message))
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

    def _refuse(self, code: str, message: str, device: str = "", *, logged: bool = True) -> None:
        """Drop a frame with an error frame: a burst, then one a second (counted beyond)."""
        self.status.refused += 1
        if not self._limit.take():
            self.status.errors_suppressed += 1
            return
        if logged and self._once.first(device, message[:80]):
            log.warning("serial %s: refused: %s", self.port, message)
        field = "device" if code == UNAUTHORIZED else None
        self._push(encode_packet(Error.KIND, encode(Error(code, message, field=field))))

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
        self._secret = ""
        self.gate.reset()
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
