"""The local control API (loopback HTTP) that the CLI talks to. Starlette + uvicorn, which
the mcp SDK already brings, instead of another web framework. Every request passes
fayd.auth.HttpGuard first: its token, its Host and Origin, a JSON body (docs/security.md)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import socket
from collections.abc import Iterator
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from fayd.auth import HttpGuard, allowed_hosts
from fayd.devices.ota import OtaError, OtaFile
from fayd.errors import FaydError
from fayd.protocol.frames import MAX_TEXT


class QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers (the daemon owns SIGTERM/SIGINT) and without
    its 10-a-second tick: :meth:`exit` stops it."""

    #: A safety net only: how often the main loop looks at ``should_exit`` on its own.
    POLL_S = 60.0

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._exit = asyncio.Event()

    def exit(self) -> None:
        self.should_exit = True
        self._exit.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def main_loop(self) -> None:
        # uvicorn's tick wakes the process to notice a shutdown and refresh the Date header;
        # an idle daemon should sleep (see fayd.beat), so exit() wakes this
        # instead and the app sends no Date header (see ApiServer.run).
        while not await self.on_tick(0):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit.wait(), self.POLL_S)


class Control(Protocol):
    """What the API asks of the daemon."""

    async def status(self, lag_since: float = 0.0) -> dict[str, Any]: ...

    async def say(self, text: str, user: str | None, device: str | None) -> dict[str, Any]: ...

    async def ota_push(
        self, device: str, version: str, files: list[OtaFile], signature: str
    ) -> dict[str, Any]: ...

    async def reload_devices(self) -> dict[str, Any]: ...

    async def start_over(self, user: str | None, device: str | None) -> dict[str, Any]: ...


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object, or ValueError."""
    body = await request.json()
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    return body


def build_app(control: Control) -> Starlette:
    async def get_status(request: Request) -> JSONResponse:
        try:
            lag_since = float(request.query_params.get("lag_since", 0))
        except ValueError:
            return _error("lag_since must be a Unix time", 400)
        return JSONResponse(await control.status(lag_since))

    async def post_say(request: Request) -> JSONResponse:
        try:
            body = await _json_object(request)
        except ValueError:
            return _error("the body must be a JSON object", 400)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            return _error(
                f"'text' must be a non-empty string of at most {MAX_TEXT} characters", 400
            )
        user, device = body.get("user"), body.get("device")
        if not all(v is None or isinstance(v, str) for v in (user, device)):
            return _error("'user' and 'device' must be strings", 400)
        try:
            return JSONResponse(await control.say(text.strip(), user, device))
        except LookupError as exc:
            return _error(str(exc), 404)

    async def post_ota(request: Request) -> JSONResponse:
        """``fayd devices ota``: {"version": V, "files": [{"path", "data" (base64), "sha256"
        (optional: as hashed when read; the device checks what it stored against it)}],
        "signature": the manifest's HMAC with the device's key (fayd.auth.device_keys)}.
        Answers when the device runs V (or why not); that includes its reboot."""
        try:
            body = await _json_object(request)
        except ValueError:
            return _error("the body must be a JSON object", 400)
        version, items, signature = body.get("version"), body.get("files"), body.get("signature")
        if not isinstance(version, str) or not 0 < len(version) <= 32:
            return _error("'version' must be 1-32 characters", 400)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            return _error("'files' must be a list of objects", 400)
        if not isinstance(signature, str):
            return _error("'signature' is missing: updates are signed by fayd devices ota", 403)
        try:
            files = [
                OtaFile(
                    str(i.get("path", "")),
                    base64.b64decode(str(i.get("data", "")), validate=True),
                    str(i.get("sha256") or ""),
                )
                for i in items
            ]
            return JSONResponse(
                await control.ota_push(request.path_params["device"], version, files, signature)
            )
        except binascii.Error:
            return _error("each file's 'data' must be base64", 400)
        except LookupError as exc:
            return _error(str(exc), 404)
        except OtaError as exc:
            return _error(str(exc), exc.status)

    async def post_reset(request: Request) -> JSONResponse:
        """``fayd chat --reset``: a new conversation (long-term memory stays)."""
        try:
            body = await _json_object(request)
        except ValueError:
            return _error("the body must be a JSON object", 400)
        user, device = body.get("user"), body.get("device")
        if not all(v is None or isinstance(v, str) for v in (user, device)):
            return _error("'user' and 'device' must be strings", 400)
        return JSONResponse(await control.start_over(user, device))

    async def post_reload_devices(request: Request) -> JSONResponse:
        """After ``fayd devices add/remove``: the broker's accounts are written again and
        reloaded, so a removed device is disconnected at once."""
        try:
            return JSONResponse(await control.reload_devices())
        except FaydError as exc:  # the broker did not reload: say so, the CLI prints it
            return _error(str(exc), 503)

    return Starlette(
        routes=[
            Route("/api/status", get_status, methods=["GET"]),
            Route("/api/say", post_say, methods=["POST"]),
            Route("/api/reset", post_reset, methods=["POST"]),
            Route("/api/devices/{device}/ota", post_ota, methods=["POST"]),
            Route("/api/devices/reload", post_reload_devices, methods=["POST"]),
        ]
    )


class ApiServer:
    """Serves the app on host:port (0 = a free port, fixed at the first start), behind the
    guard: ``token`` and this server's own host names."""

    def __init__(self, app: Starlette, host: str, port: int, token: str) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.token = token
        self.started = asyncio.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        return sock

    async def run(self) -> None:
        sock = self._bind()
        guarded = HttpGuard(self.app, self.token, allowed_hosts(self.host, self.port))
        config = uvicorn.Config(
            guarded, log_level="warning", lifespan="off", access_log=False, date_header=False
        )
        server = QuietServer(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            while not server.started and not serving.done():  # noqa: ASYNC110 (uvicorn has no event)
                await asyncio.sleep(0.02)
            self.started.set()
            await serving
        finally:
            self.started.clear()
            server.exit()
            if not serving.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(serving), 5)
            sock.close()
