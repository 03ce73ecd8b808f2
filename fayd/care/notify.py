"""Notifications to caregivers through Apprise (e-mail, ntfy, Gotify, Matrix, MQTT, JSON
over HTTP, Telegram and ~100 more), so a household uses what it already has; a LAN target
(a local SMTP relay, a self-hosted ntfy) needs no internet. Apprise is synchronous: each
send runs in a worker thread, bounded by its own socket timeouts."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fayd.care.rules import CareError
from fayd.errors import FaydError

log = logging.getLogger(__name__)

#: Retry delays of an undelivered notification: the first, doubling up to the last. A
#: notification is never given up: ``fayd status`` shows it until it goes.
RETRY_FIRST_S = 30.0
RETRY_MAX_S = 1800.0


class DeliveryError(FaydError):
    """A notification did not reach its target (it is kept and retried)."""


def retry_after(attempts: int) -> float:
    return min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** max(0, attempts - 1))


def check_url(url: str, key: str) -> str:
    """An Apprise URL it can parse, or CareError naming ``key`` (the URL itself is not
    repeated whole: it may hold a password)."""
    import apprise

    if not isinstance(url, str) or not url.strip():
        raise CareError(f"{key}: an Apprise URL is needed (e.g. mailto://…, ntfy://…, json://…)")
    if apprise.Apprise.instantiate(url.strip()) is None:
        scheme = url.split("://", 1)[0] if "://" in url else url[:12]
        raise CareError(f"{key}: Apprise cannot use {scheme!r}://… (see Apprise's list of URLs)")
    return url.strip()


def private(url: str) -> str:
    """The URL with its secrets hidden, for logs and ``fayd status``."""
    import apprise

    plugin = apprise.Apprise.instantiate(url)
    if plugin is None:
        return url.split("://", 1)[0] + "://…"
    return plugin.url(privacy=True).split("?", 1)[0]


async def shown(urls: list[str]) -> list[str]:
    """:func:`private` of each URL, off the loop: Apprise loads its ~100 plugins on first
    use (1-2 s of CPU here), which must not stall the daemon's loop."""
    return await asyncio.to_thread(lambda: [private(u) for u in urls])


async def checked(urls: list[Any]) -> list[str]:
    """:func:`check_url` of each (``urls[i]`` named in the error), off the loop."""
    return await asyncio.to_thread(lambda: [check_url(u, f"urls[{i}]") for i, u in enumerate(urls)])


class AppriseDeliver:
    """The real :class:`fayd.care.ports.Deliver`."""

    async def send(self, url: str, title: str, body: str) -> None:
        why = await asyncio.to_thread(self._send, url, title, body)
        if why is not None:
            raise DeliveryError(why)

    @staticmethod
    def _send(url: str, title: str, body: str) -> str | None:
        """None when sent, else why not (Apprise's own last warning, its date cut off)."""
        import apprise

        target = apprise.Apprise()
        if not target.add(url):
            return f"{private(url)}: Apprise cannot use this URL"
        with apprise.LogCapture(level=logging.WARNING) as output:
            if target.notify(body=body, title=title):
                return None
        lines = output.getvalue().strip().splitlines()
        reason = lines[-1].split(" - ", 2)[-1] if lines else "it did not take the notification"
        return f"{private(url)}: {reason}"
