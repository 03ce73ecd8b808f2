"""Serial hot-plug: one :class:`SerialLink` per port that matches the watched globs.

The watcher polls the filesystem (the daemon's default: every 2 s, on the other pollers'
beat). Why polling rather than udev or inotify: it needs no extra dependency (pyudev) or
ctypes, works the same for udev's ``/dev/fayd/*`` symlinks, kernel ``ttyUSB``/``ttyACM``
nodes and the PTY symlinks the tests use, and a few globs cost nothing next to the wake-up
itself. Two seconds of latency are fine for a cable; and a quick unplug/replug between two
polls is still caught by the link's own reopen back-off.

Ports are de-duplicated by their real path: ``/dev/fayd/esp32-…`` and the ``/dev/ttyACM0`` it
points to are one port, opened under the name of the earliest pattern (the stable one).

A port can be *released* for a while (``release``): its link is stopped (the port closed and
unlocked) and the watcher leaves it alone until the time is up or it is given back. That is
how ``fayd devices add NAME --port …`` lets mpremote at a board the daemon watches: the
daemon locks the ports it opens, and two readers on one port would each get half the bytes.
A lease rather than a flag, so a provisioning command that dies cannot keep the port from
fayd for good.
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

from fayd.beat import until_beat
from fayd.protocol import Outgoing
from fayd.transport.serial import DEFAULT_BAUDRATE, Inbound, SerialLink, SerialStatus
from fayd.transport.serial_auth import Keys

log = logging.getLogger(__name__)

DEFAULT_PATTERNS = ("/dev/fayd/*", "/dev/ttyUSB*", "/dev/ttyACM*")
#: The longest a port may be released for (a lease, renewed by asking again).
MAX_RELEASE_S = 3600.0


def scan_ports(patterns: Sequence[str]) -> list[str]:
    """Paths matching ``patterns``, one per real device, in pattern order."""
    seen: set[str] = set()
    ports: list[str] = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            real = os.path.realpath(path)
            if real in seen or not os.path.exists(real):  # dangling symlink: not a port
                continue
            seen.add(real)
            ports.append(path)
    return ports


class SerialWatcher:
    """Starts a link for each port that appears and stops it when the port vanishes.

    Routes downlink frames like a single link: ``send(device, frame)`` goes to the port
    whose device said hello with that id and proved its key (``keys``: device id → its key);
    ``owns(device)`` says whether one does.
    """

    def __init__(
        self,
        inbound: Inbound,
        keys: Keys,
        *,
        patterns: Sequence[str] = DEFAULT_PATTERNS,
        interval: float = 1.0,
        baudrate: int = DEFAULT_BAUDRATE,
        queue_size: int = 256,
        max_backoff: float = 5.0,
    ) -> None:
        self.inbound = inbound
        self.keys = keys
        self.patterns = tuple(patterns)
        self.interval = interval
        self.baudrate = baudrate
        self.queue_size = queue_size
        self.max_backoff = max_backoff
        #: device id → the link it said hello on (shared with every link).
        self.owners: dict[str, SerialLink] = {}
        #: port path → (link, its task)
        self.links: dict[str, tuple[SerialLink, asyncio.Task[None]]] = {}
        self._stopping: set[asyncio.Task[None]] = set()  # cancelled, still reporting offline
        #: real path → (the name it was released as, monotonic time its lease ends)
        self.released: dict[str, tuple[str, float]] = {}

    def owns(self, device: str) -> bool:
        return device in self.owners

    def send(self, device: str, frame: Outgoing) -> bool:
        """Queue a frame for a device on one of the ports; False if none has it, or dropped."""
        link = self.owners.get(device)
        return link.send(device, frame) if link else False

    def status(self) -> list[dict[str, Any]]:
        out = [link.status.as_dict() for link, _ in self.links.values()]
        now = time.monotonic()
        for name, until in self.released.values():
            if until > now:  # shown as a closed port, with why
                why = f"released for {until - now:.0f} s more: a board is being provisioned"
                out.append(SerialStatus(name, last_error=why).as_dict())
        return out

    async def recheck(self) -> list[str]:
        """Keys changed: the devices dropped because theirs is gone or new."""
        links = [link for link, _ in self.links.values()]
        dropped = await asyncio.gather(*(link.recheck() for link in links))
        return [link.port for link, gone in zip(links, dropped, strict=True) if gone]

    async def release(self, port: str, seconds: float) -> dict[str, Any]:
        """Close ``port`` (any name of it) and leave it alone for ``seconds``; 0 gives it
        back at once. Returns when the port is closed, so another program can open it."""
        if seconds <= 0:
            return {"port": port, "released": False, "given_back": self._give_back(port)}
        seconds = min(seconds, MAX_RELEASE_S)
        stopping = self._lease(port, seconds)
        if stopping is None:
            return {"port": port, "released": False, "watched": False}  # not fayd's to give
        # Each link closes its port as its task ends (and reports its device offline).
        await asyncio.gather(*stopping, return_exceptions=True)
        log.info("serial %s: released for %.0f s", port, seconds)
        return {"port": port, "released": True, "watched": True, "seconds": seconds}

    def _lease(self, port: str, seconds: float) -> list[asyncio.Task[None]] | None:
        """Mark ``port`` released and cancel its links (returned); None if not watched."""
        real = os.path.realpath(port)
        if real not in {os.path.realpath(p) for p in scan_ports(self.patterns)}:
            return None
        self.released[real] = (port, time.monotonic() + seconds)  # first: sync now skips it
        stopping = [self.links.pop(p)[1] for p in list(self.links) if os.path.realpath(p) == real]
        for task in stopping:
            task.cancel()
        return stopping

    def _give_back(self, port: str) -> bool:
        if self.released.pop(os.path.realpath(port), None) is None:
            return False
        log.info("serial %s: given back", port)
        self.sync()  # opened again now, not at the next poll
        return True

    async def run(self) -> None:
        """Poll forever; on cancel, stop every link (their devices are reported offline)."""
        try:
            while True:
                self.sync()
                await asyncio.sleep(until_beat(self.interval))  # woken with the other pollers
        finally:
            tasks = [task for _, task in self.links.values()] + list(self._stopping)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.links.clear()

    def sync(self) -> None:
        """Start links for new ports and stop those whose port is gone (one poll)."""
        present = self._not_released(scan_ports(self.patterns))
        for port in [p for p in self.links if p not in present]:
            link, task = self.links.pop(port)
            log.info("serial %s: port gone, link stopped", port)
            task.cancel()  # its run() reports the device offline as it ends
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
        for port in present:
            if port not in self.links:
                link = SerialLink(
                    port,
                    self.inbound,
                    self.keys,
                    baudrate=self.baudrate,
                    queue_size=self.queue_size,
                    max_backoff=self.max_backoff,
                    owners=self.owners,
                )
                task = asyncio.create_task(link.run(), name=f"serial:{port}")
                self.links[port] = (link, task)
                log.info("serial %s: port found, link started", port)

    def _not_released(self, ports: list[str]) -> list[str]:
        """``ports`` less those released; a lease that ran out gives its port back."""
        now = time.monotonic()
        for real, (name, until) in list(self.released.items()):
            if until <= now:
                del self.released[real]
                log.info("serial %s: release over, watched again", name)
        return [p for p in ports if os.path.realpath(p) not in self.released]
