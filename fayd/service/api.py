"""The local control API (loopback HTTP) that the CLI talks to. Starlette + uvicorn, which
the mcp SDK already brings, instead of another web framework. Every request passes
fayd.auth.HttpGuard first: its token, its Host and Origin, a JSON body (docs/security.md)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import socket
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from fayd.agent.chat import model_failure
from fayd.auth import HttpGuard, allowed_hosts
from fayd.auth.body_limit import KIB, MIB, BodyLimits
from fayd.auth.http_guard import Sessions
from fayd.care import CareError
from fayd.devices.ota import OtaError, OtaFile
from fayd.errors import FaydError, ProtocolError
from fayd.mcp.server import MCP_BODIES
from fayd.protocol.frames import MAX_TEXT, check_device_id
from fayd.protocol.text import BadText, check_name, json_object
from fayd.service.api_reminders import Reminding
from fayd.service.api_reminders import routes as reminder_routes
from fayd.service.care_rules import RULE_OPS, rule_shape_problem

#: The largest request body of each route family, refused unread above (fayd.auth.body_limit,
#: docs/security.md "Quotas"). An update carries at most 1 MiB of files (ota.MAX_TOTAL): 1.4 MB
#: in base64, with its manifest; an MCP message, a memory of 20,000 characters (fayd.mcp.server).
#: Every other body is a small JSON object: the longest, a text of 4,000 characters, is 48 KB
#: even with every character written as a JSON escape. An OpenAI client sends its whole
#: conversation each time (fayd reads only the last message).
API_BODIES = BodyLimits(
    default=64 * KIB,
    routes=(
        (r"/api/devices/[^/]+/ota", 2 * MIB),
        (r"/v1/chat/completions", 1 * MIB),
        ("/mcp", MCP_BODIES.default),
    ),
)


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
            with contextlib.suppress(TimeoutError):  # not wait_for: see fayd.devices.sensors
                async with asyncio.timeout(self.POLL_S):
                    await self._exit.wait()


class Backups(Protocol):
    async def backup_now(self) -> dict[str, Any]: ...


class Control(Protocol):
    """What the API asks of the daemon."""

    async def status(self, lag_since: float = 0.0) -> dict[str, Any]: ...

    async def say(self, text: str, user: str | None, device: str | None) -> dict[str, Any]: ...

    async def ota_push(
        self, device: str, version: str, files: list[OtaFile], signature: str
    ) -> dict[str, Any]: ...

    async def reload_devices(self) -> dict[str, Any]: ...

    async def start_over(self, user: str | None, device: str | None) -> dict[str, Any]: ...

    async def release_serial(self, port: str, seconds: float) -> dict[str, Any]: ...

    async def confirm_settings(self, device: str, wait_s: float) -> dict[str, Any]: ...

    async def care(self, op: str, body: dict[str, Any]) -> dict[str, Any]: ...

    @property
    def backups(self) -> Backups | None:
        """The backup job (fayd.store.nightly); None until the daemon has started it."""

    @property
    def reminding(self) -> Reminding | None:
        """Reminders (fayd.service.api_reminders); None until the daemon has started them."""


#: The stand-ins said when the model could not answer (fayd.agent.chat): the turn has a
#: reply, but a script must be able to tell it failed (``fayd say`` then exits 1).
def _model_failure(done: dict[str, Any]) -> dict[str, str]:
    """``{"failed": why}`` when the reply is a stand-in for the model's."""
    failed = model_failure(done.get("sentences") or [])
    return {"failed": failed[1]} if failed else {}


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object whose every string is text, or ValueError saying why
    (fayd.protocol.text.json_object)."""
    return json_object(await request.body())


def _who(user: Any, device: Any) -> str | None:
    """Why a request's ``user`` (a user name) or ``device`` (a device id) cannot be taken."""
    try:
        if user is not None:
            check_name("user", user)
        if device is not None:
            check_device_id(device)
    except (BadText, ProtocolError) as exc:
        return str(exc)
    return None


#: A POST route's handler: the daemon, the request and its body, already a JSON object.
Posted = Callable[[Control, Request, dict[str, Any]], Awaitable[JSONResponse]]


def build_app(control: Control, doors: Iterable[BaseRoute] = ()) -> Starlette:
    """The control API's routes, and ``doors``: the other doors served on the same port
    behind the same guard (fayd.web, fayd.doors, MCP over HTTP)."""

    def post(path: str, handler: Posted) -> Route:
        return Route(path, partial(_posted, handler, control), methods=["POST"])

    return Starlette(
        routes=[
            post("/api/care/{op}", post_care),
            Route("/api/status", partial(get_status, control), methods=["GET"]),
            post("/api/say", post_say),
            post("/api/reset", post_reset),
            post("/api/devices/{device}/ota", post_ota),
            Route("/api/devices/reload", partial(post_reload_devices, control), methods=["POST"]),
            post("/api/devices/{device}/settings", post_settings),
            post("/api/serial/release", post_release_serial),
            Route("/api/backup", partial(post_backup, control), methods=["POST"]),
            *reminder_routes(control, _json_object),
            *doors,
        ]
    )


async def _posted(handler: Posted, control: Control, request: Request) -> JSONResponse:
    """Every POST with a body: a JSON object (else 400 saying why), then its handler."""
    try:
        body = await _json_object(request)
    except ValueError as exc:
        return _error(str(exc), 400)
    return await handler(control, request, body)


async def get_status(control: Control, request: Request) -> JSONResponse:
    try:
        lag_since = float(request.query_params.get("lag_since", 0))
    except ValueError:
        return _error("lag_since must be a Unix time", 400)
    return JSONResponse(await control.status(lag_since))


async def post_say(control: Control, request: Request, body: dict[str, Any]) -> JSONResponse:
    text = body.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        return _error(f"'text' must be a non-empty string of at most {MAX_TEXT} characters", 400)
    user, device = body.get("user"), body.get("device")
    if bad := _who(user, device):
        return _error(bad, 400)
    try:
        done = await control.say(text.strip(), user, device)
    except LookupError as exc:
        return _error(str(exc), 404)
    return JSONResponse({**done, **_model_failure(done)})


async def post_ota(control: Control, request: Request, body: dict[str, Any]) -> JSONResponse:
    """``fayd devices ota``: {"version": V, "files": [{"path", "data" (base64), "sha256"
    (optional: as hashed when read; the device checks what it stored against it)}],
    "signature": the manifest's HMAC with the device's key (fayd.auth.device_keys)}.
    Answers when the device runs V (or why not); that includes its reboot."""
    version, items, signature = body.get("version"), body.get("files"), body.get("signature")
    if not isinstance(version, str) or not 0 < len(version) <= 32:
        return _error("'version' must be 1-32 characters", 400)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return _error("'files' must be a list of objects", 400)
    if not isinstance(signature, str):
        return _error("'signature' is missing: updates are signed by fayd devices ota", 403)
    if bad := _who(None, request.path_params["device"]):
        return _error(bad, 400)
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


async def post_reset(control: Control, request: Request, body: dict[str, Any]) -> JSONResponse:
    """``fayd chat --reset``: a new conversation (long-term memory stays)."""
    user, device = body.get("user"), body.get("device")
    if bad := _who(user, device):
        return _error(bad, 400)
    return JSONResponse(await control.start_over(user, device))


async def post_reload_devices(control: Control, request: Request) -> JSONResponse:
    """After ``fayd devices add/remove``: the broker's accounts are written again and
    reloaded, so a removed device is disconnected at once."""
    try:
        return JSONResponse(await control.reload_devices())
    except FaydError as exc:  # the broker did not reload: say so, the CLI prints it
        return _error(str(exc), 503)


async def post_release_serial(
    control: Control, request: Request, body: dict[str, Any]
) -> JSONResponse:
    """``fayd devices add NAME --port P``: {"port": P, "seconds": S} closes P and leaves
    it alone for S seconds (0: take it back now), so mpremote can open the board."""
    port, seconds = body.get("port"), body.get("seconds")
    if not isinstance(port, str) or not port.startswith("/"):
        return _error("'port' must be a device path such as /dev/ttyUSB0", 400)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        return _error("'seconds' must be a number of seconds, 0 or more", 400)
    return JSONResponse(await control.release_serial(port, float(seconds)))


async def post_settings(control: Control, request: Request, body: dict[str, Any]) -> JSONResponse:
    """After ``fayd devices set``: {"wait_s": S} applies the stored settings now and
    waits up to S seconds (0-60) for the device's ack (fayd.devices.settings_acks)."""
    wait_s = body.get("wait_s", 5)
    if isinstance(wait_s, bool) or not isinstance(wait_s, int | float) or not 0 <= wait_s <= 60:
        return _error("'wait_s' must be a number of seconds, 0-60", 400)
    device = request.path_params["device"]
    if bad := _who(None, device):
        return _error(bad, 400)
    return JSONResponse(await control.confirm_settings(device, float(wait_s)))


async def post_backup(control: Control, request: Request) -> JSONResponse:
    """``fayd backup``: a verified backup now; answers with its path (fayd.store.backup)."""
    if control.backups is None:
        return _error("fayd is still starting: try again when fayd status says ready", 503)
    try:
        return JSONResponse(await control.backups.backup_now())
    except (FaydError, OSError) as exc:  # no space, a read error: the CLI prints it
        return _error(f"the backup failed: {exc}", 500)


async def post_care(control: Control, request: Request, body: dict[str, Any]) -> JSONResponse:
    """``fayd care …``: {"op"'s arguments}; op is rules.list|add|remove|test,
    caregivers.list|add|remove|test, alerts.list|ack, digest.show|send (fayd.care.admin)."""
    op = request.path_params["op"]
    if op in RULE_OPS and (bad := rule_shape_problem(body)):
        return _error(bad, 400)
    try:
        return JSONResponse(await control.care(op, body))
    except CareError as exc:
        return _error(str(exc), 400)
    except LookupError as exc:
        return _error(str(exc), 404)


#: The largest WebSocket message a client may send, in bytes.
WS_MAX = 64 * 1024


@dataclass(frozen=True)
class Lock:
    """What the guard in front of every door checks besides the token (fayd.auth)."""

    #: Other host names of the box (``api.names``).
    names: tuple[str, ...] = ()
    #: Other sites' pages invited to use the token (``api.origins``).
    origins: tuple[str, ...] = ()
    #: Paths that need no token or session: the login page and its assets.
    public: tuple[str, ...] = ()
    #: Prefixes of capability URLs a GET reaches with the right Host alone (fayd.doors.avatar).
    shared: tuple[str, ...] = ()
    #: The web page's logins (fayd.web), or None: the token alone opens.
    sessions: Sessions | None = None


class ApiServer:
    """Serves the app on host:port (0 = a free port, fixed at the first start), behind the
    guard: ``token`` and this server's own host names."""

    def __init__(
        self, app: Starlette, host: str, port: int, token: str, lock: Lock | None = None
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.token = token
        self.lock = lock or Lock()
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
        lock = self.lock
        hosts = allowed_hosts(self.host, self.port, lock.names)
        guarded = HttpGuard(
            self.app,
            self.token,
            hosts,
            API_BODIES,
            sessions=lock.sessions,
            public=lock.public,
            origins=lock.origins,
            shared=lock.shared,
        )
        config = uvicorn.Config(
            guarded,
            log_level="warning",
            lifespan="off",
            access_log=False,
            date_header=False,
            # A WebSocket message is a small JSON frame (fayd.doors.avatar); uvicorn's own
            # default would take 16 MB into memory per message.
            ws_max_size=WS_MAX,
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
                await asyncio.wait({serving}, timeout=5)
            sock.close()
