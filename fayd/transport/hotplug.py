"""Serial hot-plug: one :class:`SerialLink` per port that matches the watched globs.

The watcher polls the filesystem (the daemon's default: every 2 s, on the other pollers'
beat). Why polling rather than udev or inotify: it needs no extra dependency (pyudev) or
ctypes, works the same for udev's ``/dev/fayd/*`` symlinks, kernel ``ttyUSB``/``ttyACM``
nodes and the PTY symlinks the tests use, and a few globs cost nothing next to the wake-up
itself. Two seconds of latency are fine for a cable; and a quick unplug/replug between two
polls is still caught by the link's own reopen back-off.

Ports are de-duplicated by their real path: ``/dev/fayd/esp32-…`` and the ``/dev/ttyACM0`` it
points to are one port, opened under the name of the earliest pattern (the stable one).
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
from collections.abc import Sequence
from typing import Any

from fayd.beat import until_beat
from fayd.transport.serial import DEFAULT_BAUDRATE, Inbound, SerialLink

log = logging.getLogger(__name__)

DEFAULT_PATTERNS = ("/dev/fayd/*", "/dev/ttyUSB*", "/dev/ttyACM*")


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
    whose device said hello with that id; ``owns(device)`` says whether one does.
    """

    def __init__(
        self,
        inbound: Inbound,
        *,
        patterns: Sequence[str] = DEFAULT_PATTERNS,
        interval: float = 1.0,
        baudrate: int = DEFAULT_BAUDRATE,
        queue_size: int = 256,
        max_backoff: float = 5.0,
    ) -> None:
        self.inbound = inbound
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

    def owns(self, device: str) -> bool:
        return device in self.owners

    def send(self, device: str, frame: object) -> bool:
        """Queue a frame for a device on one of the ports; False if none has it, or dropped."""
        link = self.owners.get(device)
        return link.send(device, frame) if link else False

    def status(self) -> list[dict[str, Any]]:
        return [link.status.as_dict() for link, _ in self.links.values()]

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
        present = scan_ports(self.patterns)
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
                    baudrate=self.baudrate,
                    queue_size=self.queue_size,
                    max_backoff=self.max_backoff,
                    owners=self.owners,
                )
                task = asyncio.create_task(link.run(), name=f"serial:{port}")
                self.links[port] = (link, task)
                log.info("serial %s: port found, link started", port)
