"""Whether a device took its settings (``fayd devices set``; docs/protocol.md, "Device
identity, registry and settings"). fayd sends the device-side settings as a ``settings``
command with an id, after each hello and on every change; the device answers ``ack`` with
that ref, listing the keys it ``applied`` and those it has nothing for (``ignored``), or
``error``. The registry sends; the hub hands the answers here; the API's
``POST /api/devices/{device}/settings`` waits for one and tells the CLI what happened."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from fayd.protocol import Ack, Error, Hello

log = logging.getLogger(__name__)

#: Settings fayd applies itself to the audio a device sends (its VAD, wake word and barge-in
#: detector run in fayd): a device without its own wake word ignores them, and that is fine.
FAYD_APPLIES = frozenset({"wake", "wake_threshold", "barge_in"})


def _answer_future() -> asyncio.Future[dict[str, Any]]:
    return asyncio.get_running_loop().create_future()


@dataclass
class Sent:
    """The last settings command sent to a device, and its answer when it comes."""

    ref: str
    args: dict[str, Any]
    answer: asyncio.Future[dict[str, Any]] = field(default_factory=_answer_future)


class SettingsAcks:
    def __init__(self) -> None:
        self.sent: dict[str, Sent] = {}
        self._ids = itertools.count(1)

    def sending(self, device: str, args: dict[str, Any]) -> str:
        """A new ref for a settings command to ``device``; an older one's answer no longer
        counts (the newer command carries every setting)."""
        old = self.sent.get(device)
        if old is not None and not old.answer.done():
            old.answer.cancel()
        sent = Sent(f"set-{next(self._ids)}", dict(args))
        self.sent[device] = sent
        return sent.ref

    def not_sent(self, device: str) -> None:
        """The link had no way to the device: there will be no answer."""
        sent = self.sent.pop(device, None)
        if sent is not None and not sent.answer.done():
            sent.answer.cancel()

    def device_answered(self, device: str, frame: Ack | Error | Hello, payload: bytes) -> None:
        """An ``ack`` or ``error`` from a device: the answer to its settings, if it is one."""
        sent = self.sent.get(device)
        if isinstance(frame, Hello) or frame.ref is None:
            return
        if sent is None or sent.answer.done() or frame.ref != sent.ref:
            return
        if isinstance(frame, Error):
            sent.answer.set_result({"ok": False, "error": f"{frame.code}: {frame.message}"})
            log.warning("device %s refused its settings: %s", device, frame.message)
            return
        body = json.loads(payload)  # decoded once already: valid JSON
        applied, ignored = body.get("applied"), body.get("ignored")
        sent.answer.set_result(
            {
                "ok": frame.ok,
                "applied": [k for k in applied if isinstance(k, str)]
                if isinstance(applied, list)
                else list(sent.args),  # an ack without the lists: a device that took all
                "ignored": [k for k in ignored if isinstance(k, str)]
                if isinstance(ignored, list)
                else [],
                "error": None if frame.ok else (frame.detail or "not applied"),
            }
        )
        log.info("device %s: settings %s acknowledged", device, sent.args)

    async def wait(self, device: str, wait_s: float) -> tuple[Sent | None, dict[str, Any] | None]:
        """The last settings sent to ``device`` and its answer; (sent, None) when none came
        within ``wait_s``; (None, None) when nothing could be sent."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while (sent := self.sent.get(device)) is not None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return sent, None
            await asyncio.wait({sent.answer}, timeout=remaining)
            if not sent.answer.done():
                return sent, None
            if not sent.answer.cancelled():
                return sent, sent.answer.result()
            # replaced by a newer command (settings changed meanwhile): wait for that one
        return None, None


def report(args: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Where each setting took effect: on the device, in fayd (wake word, barge-in: on the
    audio the device sends), or nowhere (the device has nothing for it: no speaker)."""
    on_device = [k for k in args if k in answer["applied"]]
    by_fayd = [k for k in args if k not in on_device and k in FAYD_APPLIES]
    missing = [k for k in args if k not in on_device and k not in by_fayd]
    return {
        "state": "applied" if answer["ok"] else "refused",
        "on_device": on_device,
        "by_fayd": by_fayd,
        "unsupported": missing,
        "error": answer.get("error"),
    }
