"""sd_notify(3) for ``Type=notify``: tell systemd when fayd is ready, alive and stopping.

The protocol is one unix datagram of ``KEY=value`` lines sent to ``$NOTIFY_SOCKET`` (a path, or
an abstract socket written with a leading ``@``). ``systemd.daemon.notify`` from systemd-python
is used when it is installed; otherwise the datagram is sent here, which is all libsystemd does.

Outside systemd (no ``NOTIFY_SOCKET``) every call is a no-op that returns False, so the daemon
calls these unconditionally. A failed send never raises: it logs one warning and returns False,
because a daemon that serves but cannot report is better than one that crashes.

The watchdog (``WatchdogSec=``) is armed only once start-up completes, i.e. after ``READY=1``;
before that ``TimeoutStartSec=`` applies, which ``extend_timeout()`` can push back while models
load.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

try:  # systemd-python is the optional [systemd] extra (it needs libsystemd headers to build).
    from systemd import daemon as _sd_daemon
except ImportError:
    _sd_daemon = None

#: Seconds a send may block if systemd's queue is full; a stuck send must not stall the daemon.
SEND_TIMEOUT_S = 1.0


def _one_line(text: str) -> str:
    """A value must stay on one line: a newline would start another ``KEY=`` field."""
    return " ".join(text.splitlines())


class Notifier:
    """Sends sd_notify messages; every method returns True when a datagram was sent.

    ``use_library``: None picks systemd-python when importable, False forces the plain socket,
    True requires systemd-python. ``environ`` is read on every call (default ``os.environ``).
    """

    def __init__(
        self,
        *,
        use_library: bool | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if use_library and _sd_daemon is None:
            raise RuntimeError("systemd-python is not installed (pip install 'fayd[systemd]')")
        self._use_library = _sd_daemon is not None if use_library is None else use_library
        self._environ = os.environ if environ is None else environ
        self._warned = False

    @property
    def enabled(self) -> bool:
        """True when running under a service manager that listens (``NOTIFY_SOCKET`` set)."""
        return bool(self._environ.get("NOTIFY_SOCKET"))

    def ready(self, status: str | None = None) -> bool:
        """Start-up is complete: fayd can serve. Arms the watchdog."""
        fields = ["READY=1"]
        if status is not None:
            fields.append(f"STATUS={_one_line(status)}")
        return self.notify(*fields)

    def status(self, text: str) -> bool:
        """A one-line human status, shown by ``systemctl status fayd``."""
        return self.notify(f"STATUS={_one_line(text)}")

    def watchdog(self) -> bool:
        """Keep-alive ping; send it every ``watchdog_interval()`` seconds."""
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        """Shutdown has begun."""
        return self.notify("STOPPING=1")

    def reloading(self) -> bool:
        """A reload has begun; send ``ready()`` when it is done.

        ``MONOTONIC_USEC`` is what ``Type=notify-reload`` (systemd 253+) requires; older
        managers ignore it.
        """
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def extend_timeout(self, seconds: float) -> bool:
        """Ask for ``seconds`` more before the current start/stop timeout fires."""
        return self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}")

    def watchdog_interval(self) -> float | None:
        """Seconds between pings (half of ``WATCHDOG_USEC``), or None without a watchdog.

        ``WATCHDOG_PID``, when set, names the process the watchdog is meant for; any other
        process (a child that inherited the environment) gets None.
        """
        try:
            usec = int(self._environ.get("WATCHDOG_USEC", ""))
        except ValueError:
            return None
        pid = self._environ.get("WATCHDOG_PID")
        if usec <= 0 or (pid and pid.strip() != str(os.getpid())):
            return None
        return usec / 2 / 1_000_000

    def notify(self, *fields: str) -> bool:
        """Send ``fields`` (``KEY=value`` strings) as one message; False if not sent."""
        address = self._environ.get("NOTIFY_SOCKET")
        if not address:
            return False
        message = "\n".join(fields)
        send: Callable[[str, str], bool] = (
            self._send_library if self._use_library else self._send_socket
        )
        try:
            return send(message, address)
        except (OSError, ValueError) as exc:
            self._warn_once(f"sd_notify to {address!r} failed: {exc}")
            return False

    def _send_library(self, message: str, address: str) -> bool:
        # sd_notify reads $NOTIFY_SOCKET from the real process environment.
        if os.environ.get("NOTIFY_SOCKET") != address:
            return self._send_socket(message, address)
        return bool(_sd_daemon.notify(message))

    def _send_socket(self, message: str, address: str) -> bool:
        if address.startswith("@"):
            target = "\0" + address[1:]  # abstract namespace
        elif address.startswith("/"):
            target = address
        else:  # e.g. vsock: (VMs), which fayd has no use for
            self._warn_once(f"unsupported NOTIFY_SOCKET address {address!r}")
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.settimeout(SEND_TIMEOUT_S)
            sock.sendto(message.encode(), target)
        return True

    def _warn_once(self, text: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("%s (further sd_notify failures are not logged)", text)
