"""Notifications to caregivers through Apprise (e-mail, ntfy, Gotify, Matrix, MQTT, JSON
over HTTP, Telegram and ~100 more), so a household uses what it already has; a LAN target
(a local SMTP relay, a self-hosted ntfy) needs no internet. Apprise is synchronous: each
send runs in a worker thread, bounded by its own socket timeouts."""

from __future__ import annotations

import asyncio
import logging

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


class AppriseDeliver:
    """The real :class:`fayd.care.ports.Deliver`."""

    async def send(self, url: str, title: str, body: str) -> None:
        ok = await asyncio.to_thread(self._send, url, title, body)
        if not ok:
            raise DeliveryError(f"{private(url)} did not take the notification")

    @staticmethod
    def _send(url: str, title: str, body: str) -> bool:
        import apprise

        target = apprise.Apprise()
        if not target.add(url):
            return False
        return bool(target.notify(body=body, title=title))
