"""Firmware updates over the device link (``fayd devices ota``; docs/protocol.md, "Firmware
updates"). A new app version goes to the device as ``command`` frames: ``ota_begin`` (the
manifest and its signature), ``ota_chunk`` (base64 pieces), ``ota_commit``; each waits
for the device's ``ack`` (or ``error``) with a timeout and is sent again a few times. The
device then reboots; its next ``hello`` says which version runs, and fayd answers ``ota_confirm``.

This runs beside the hub, not in its frame loop: the daemon hands it the ``ack``, ``error``
and ``hello`` frames of a device being updated (they reach the hub as well)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from fayd.errors import FaydError
from fayd.protocol import Ack, Command, Error, Hello, Sender

log = logging.getLogger(__name__)

CHUNK = 2048  # bytes per ota_chunk: ~2.8 KB of JSON, under a 4 KB UART receive buffer
ACK_TIMEOUT_S = 5.0
SLOW_ACK_TIMEOUT_S = 20.0  # ota_begin and ota_commit hash files on the device
RETRIES = 3
BOOT_TIMEOUT_S = 120.0
RESYNCS = 3
MAX_FILES = 64
MAX_TOTAL = 1024 * 1024
PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/")


class OtaError(FaydError):
    """An update failed; ``status`` is the HTTP status the API answers with."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


class DeviceRefused(OtaError):
    def __init__(self, command: str, code: str, message: str) -> None:
        super().__init__(f"the device refused {command}: {code}: {message}")
        self.code = code
        self.detail = message


@dataclass(frozen=True)
class OtaFile:
    path: str
    data: bytes
    sha256: str = ""  # as hashed by whoever read the file; the device checks against it

    def __post_init__(self) -> None:
        check_path(self.path)
        if not self.sha256:
            object.__setattr__(self, "sha256", hashlib.sha256(self.data).hexdigest())

    def manifest(self) -> dict[str, Any]:
        return {"path": self.path, "size": len(self.data), "sha256": self.sha256}


def check_path(path: str) -> str:
    parts = path.split("/")
    if (
        not 0 < len(path) <= 96
        or not set(path) <= PATH_CHARS
        or any(not part or part.startswith(".") for part in parts)
    ):
        raise OtaError(f"file path {path!r}: 1-96 characters of A-Z a-z 0-9 _ . - /", 400)
    return path


@dataclass
class _Job:
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    hello: asyncio.Future[dict[str, Any]] | None = None


class OtaManager:
    """Updates, at most one per device at a time."""

    def __init__(self, sender: Sender) -> None:
        self.sender = sender
        self.jobs: dict[str, _Job] = {}
        self._ids = itertools.count(1)

    def device_answered(self, device: str, frame: Ack | Error | Hello, payload: bytes) -> None:
        """A device's answer (the hub tells every one): a step of its update, if it is
        being updated. The ack's whole body is kept (its ``have``, ``sha256`` …)."""
        job = self.jobs.get(device)
        if job is None:
            return
        body = json.loads(payload)  # decoded once already: valid JSON
        if isinstance(frame, Hello):
            if job.hello is not None and not job.hello.done():
                job.hello.set_result(body)
            return
        waiter = job.pending.pop(str(frame.ref), None)
        if waiter is None or waiter.done():
            return
        if isinstance(frame, Ack):
            waiter.set_result(body)
        else:
            waiter.set_exception(DeviceRefused("?", frame.code, frame.message))

    async def push(
        self,
        device: str,
        version: str,
        files: list[OtaFile],
        signature: str,
        *,
        chunk: int = CHUNK,
        boot_timeout_s: float = BOOT_TIMEOUT_S,
    ) -> dict[str, Any]:
        """Send ``files`` as app version ``version``, wait for the reboot into it, confirm.
        ``signature`` (fayd.auth.ota_signature) goes with the manifest; the device refuses
        the update (``ota-signature``) unless it matches its own key."""
        if not files or len(files) > MAX_FILES:
            raise OtaError(f"an update has 1-{MAX_FILES} files", 400)
        total = sum(len(f.data) for f in files)
        if total > MAX_TOTAL:
            raise OtaError(f"the update has {total} bytes, over {MAX_TOTAL}", 400)
        if len({f.path for f in files}) != len(files):
            raise OtaError("a file is listed twice", 400)
        if device in self.jobs:
            raise OtaError(f"an update of {device} is already running", 409)
        job = self.jobs[device] = _Job()
        started = time.monotonic()
        try:
            begin = {"version": version, "files": [f.manifest() for f in files], "sig": signature}
            sent = chunks = 0
            for resync in range(RESYNCS + 1):
                ack = await self._call(job, device, "ota_begin", begin, SLOW_ACK_TIMEOUT_S)
                have = ack.get("have") if isinstance(ack.get("have"), dict) else {}
                unchanged = sum(1 for f in files if have.get(f.path) == len(f.data))
                try:
                    for f in files:
                        offset = have.get(f.path, 0)
                        offset = offset if isinstance(offset, int) and offset >= 0 else 0
                        while offset < len(f.data):
                            piece = f.data[offset : offset + chunk]
                            args = {
                                "path": f.path,
                                "offset": offset,
                                "data": base64.b64encode(piece).decode(),
                            }
                            await self._call(job, device, "ota_chunk", args)
                            offset += len(piece)
                            sent += len(piece)
                            chunks += 1
                    break
                except DeviceRefused as exc:
                    # The device lost the transfer (it rebooted) or its place in a file:
                    # ota_begin again tells what it has, and the rest is sent.
                    if exc.code not in ("ota-state", "ota-offset") or resync == RESYNCS:
                        raise
                    log.warning("device %s: %s; resuming", device, exc)
            job.hello = asyncio.get_running_loop().create_future()
            ack = await self._call(
                job, device, "ota_commit", {"version": version}, SLOW_ACK_TIMEOUT_S
            )
            log.info("device %s: %s committed; waiting for it to reboot", device, version)
            try:
                async with asyncio.timeout(boot_timeout_s):  # not wait_for: fayd.devices.sensors
                    hello = await job.hello
            except TimeoutError:
                raise OtaError(
                    f"{device} took the update but did not say hello within "
                    f"{boot_timeout_s:.0f} s of rebooting",
                    504,
                ) from None
            running = hello.get("fw")
            if running != version:
                failed = ((hello.get("caps") or {}).get("ota") or {}).get("failed")
                why = f" ({failed} failed to boot)" if failed else ""
                raise OtaError(
                    f"{device} did not keep {version}: it went back to {running}{why}", 502
                )
            await self._call(job, device, "ota_confirm", {"version": version})
            log.info("device %s: now running %s", device, version)
            return {
                "device": device,
                "version": version,
                "slot": ack.get("slot"),
                "files": len(files),
                "unchanged": unchanged,
                "bytes_sent": sent,
                "chunks": chunks,
                "seconds": round(time.monotonic() - started, 1),
            }
        finally:
            for waiter in job.pending.values():
                waiter.cancel()
            del self.jobs[device]

    async def _call(
        self,
        job: _Job,
        device: str,
        name: str,
        args: dict[str, Any],
        timeout_s: float = ACK_TIMEOUT_S,
    ) -> dict[str, Any]:
        """Send one command and wait for its ack; sent again on silence, RETRIES times."""
        for _ in range(RETRIES + 1):
            ref = f"ota-{next(self._ids)}"
            waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            job.pending[ref] = waiter
            self.sender.send(device, Command(name, args, ref))
            try:
                async with asyncio.timeout(timeout_s):
                    return await waiter
            except TimeoutError:
                log.warning("device %s: no answer to %s within %.0f s", device, name, timeout_s)
            except DeviceRefused as exc:
                raise DeviceRefused(name, exc.code, exc.detail) from None
            finally:
                job.pending.pop(ref, None)
        raise OtaError(f"{device} did not answer {name} ({RETRIES + 1} tries); is it online?", 504)
