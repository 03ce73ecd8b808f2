"""The local control API (loopback HTTP) that the CLI talks to. Starlette + uvicorn, which
the mcp SDK already brings, instead of another web framework."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import socket
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from fayd.devices.ota import OtaError, OtaFile
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
        # an idle daemon should sleep (see fayd.transport.beat), so exit() wakes this
        # instead and the app sends no Date header (see ApiServer.run).
        while not await self.on_tick(0):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit.wait(), self.POLL_S)


def build_app(
    status: Callable[[], Any], say: Callable[..., Any], ota: Callable[..., Any] | None = None
) -> Starlette:
    async def get_status(request: Request) -> JSONResponse:
        try:
            lag_since = float(request.query_params.get("lag_since", 0))
        except ValueError:
            return JSONResponse({"error": "lag_since must be a Unix time"}, status_code=400)
        return JSONResponse(await status(lag_since))

    async def post_say(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "body must be JSON"}, status_code=400)
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            return JSONResponse(
                {"error": f"'text' must be a non-empty string of at most {MAX_TEXT} characters"},
                status_code=400,
            )
        user, device = body.get("user"), body.get("device")
        if not all(v is None or isinstance(v, str) for v in (user, device)):
            return JSONResponse({"error": "'user' and 'device' must be strings"}, 400)
        try:
            return JSONResponse(await say(text.strip(), user, device))
        except LookupError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)

    async def post_ota(request: Request) -> JSONResponse:
        """``fayd devices ota``: {"version": V, "files": [{"path", "data" (base64), "sha256"
        (optional: as hashed when read; the device checks what it stored against it)}]}.
        Answers when the device runs V (or why not); that includes its reboot."""
        if ota is None:
            return JSONResponse({"error": "firmware updates are not available"}, 503)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "body must be JSON"}, status_code=400)
        version = body.get("version") if isinstance(body, dict) else None
        items = body.get("files") if isinstance(body, dict) else None
        if not isinstance(version, str) or not 0 < len(version) <= 32:
            return JSONResponse({"error": "'version' must be 1-32 characters"}, 400)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            return JSONResponse({"error": "'files' must be a list of objects"}, 400)
        try:
            files = [
                OtaFile(
                    str(i.get("path", "")),
                    base64.b64decode(str(i.get("data", "")), validate=True),
                    str(i.get("sha256") or ""),
                )
                for i in items
            ]
        except binascii.Error:
            return JSONResponse({"error": "each file's 'data' must be base64"}, 400)
        except OtaError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        try:
            return JSONResponse(await ota(request.path_params["device"], version, files))
        except LookupError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except OtaError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    return Starlette(
        routes=[
            Route("/api/status", get_status, methods=["GET"]),
            Route("/api/say", post_say, methods=["POST"]),
            Route("/api/devices/{device}/ota", post_ota, methods=["POST"]),
        ]
    )


class ApiServer:
    """Serves the app on host:port (0 = a free port, fixed at the first start)."""

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
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
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", access_log=False, date_header=False
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
