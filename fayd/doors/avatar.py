"""Fay's avatar WebSocket (Fay's port 10002) on the API's port at ``/ws``, behind its lock:
a Live2D/UE frontend registers as a user, types text, and gets each reply as Fay's
``human`` frames, the speech of each sentence at a capability URL (docs/avatar.md).

Each user is a virtual device ``avatar:<username>`` (a colon: never a real device's id) on
the agent's Dialogue, so its turns run the same router, skills and memory as a voice's.
Several frontends may register as the same user: each gets the user's frames (Fay does
the same). A frontend that goes away mid-reply only stops getting frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from fayd.agent.dialogue import Dialogue
from fayd.agent.language.text import language
from fayd.doors.avatar_audio import PREFIX, AudioStore
from fayd.doors.avatar_frames import AvatarFrames, Pushed, error_frame
from fayd.protocol import FieldError, Outgoing, TextIn
from fayd.protocol.text import BadText, check_name, check_text

log = logging.getLogger(__name__)

PATH = "/ws"
#: Paths a frontend's ``<audio>`` fetches without the token (fayd.auth.http_guard).
SHARED = (PREFIX,)
#: A frontend must say who it is within this long after connecting.
REGISTER_S = 30.0
#: Frames waiting for a slow frontend before new ones are dropped (with a warning).
QUEUE = 512
#: The keys a typed text may come in: Fay's ``/api/send`` body says ``msg``.
TEXT_KEYS = ("Text", "text", "msg")
REGISTER = '{"Username": ..., "Output": true|false}'
#: A WebSocket close reason is at most 123 bytes.
_REASON = 120


class Refused(Exception):
    """A frontend's message that cannot be used; the words say why."""


@dataclass(eq=False)
class _Frontend:
    username: str
    output: bool
    base: str  # http(s)://host:port as the frontend reached the box
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    dropped: int = 0

    def offer(self, pushed: Pushed) -> None:
        frame, path = pushed
        if frame.get("Data", {}).get("Key") == "audio" and not self.output:
            return  # Output false: text only
        if path is not None:
            frame = {**frame, "Data": {**frame["Data"], "Value": self.base + path}}
            frame["Data"]["HttpValue"] = self.base + path
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning(
                    "avatar %s: slow frontend, %d frames dropped", self.username, self.dropped
                )


class AvatarDoor:
    """The door and the agent's Sender for every avatar device."""

    def __init__(self, dialogue: Dialogue, store: AudioStore | None = None) -> None:
        self.dialogue = dialogue
        self.store = store or AudioStore()
        self.frontends: dict[str, set[_Frontend]] = {}
        self.streams: dict[str, AvatarFrames] = {}

    def routes(self) -> list[BaseRoute]:
        return [WebSocketRoute(PATH, self.serve), self.store.route()]

    # --- the Sender port: the agent's frames for avatar devices ---------------------------
    def send(self, device: str, frame: Outgoing) -> bool:
        stream = self.streams.get(device)
        if stream is not None:
            stream.feed(frame)
        return True

    def _push(self, username: str, pushed: Pushed) -> None:
        for frontend in self.frontends.get(username, ()):
            frontend.offer(pushed)

    def _wants_audio(self, username: str) -> bool:
        return any(f.output for f in self.frontends.get(username, ()))

    def _device(self, username: str) -> str:
        device = f"avatar:{username}"
        if device not in self.streams:
            self.streams[device] = AvatarFrames(
                username,
                self.store,
                lambda pushed: self._push(username, pushed),
                lambda: self._wants_audio(username),
            )
            self.dialogue.attach(device, self, lambda: self._wants_audio(username))
        return device

    # --- one frontend's connection ----------------------------------------------------------
    async def serve(self, ws: WebSocket) -> None:
        await ws.accept()
        try:
            async with asyncio.timeout(REGISTER_S):
                first = await ws.receive()
            if first["type"] == "websocket.disconnect":
                return
            if first.get("text") is None:
                raise Refused(f"register with a JSON text message: {REGISTER}")
            username, output = registration(parse(first["text"]))
        except TimeoutError:
            await _close(ws, 1008, f"register within {REGISTER_S:.0f} s: {REGISTER}")
            return
        except Refused as exc:
            await _close(ws, 1008, str(exc))
            return
        scheme = "https" if ws.url.scheme == "wss" else "http"
        frontend = _Frontend(username, output, f"{scheme}://{ws.headers['host']}")
        device = self._device(username)
        self.frontends.setdefault(username, set()).add(frontend)
        log.info(
            "avatar frontend for %s connected (%d now)", username, len(self.frontends[username])
        )
        writer = asyncio.create_task(_write(ws, frontend.queue), name=f"avatar:{username}")
        try:
            await self._read(ws, frontend, device)
        finally:
            self.frontends[username].discard(frontend)
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            log.info("avatar frontend for %s gone", username)

    async def _read(self, ws: WebSocket, frontend: _Frontend, device: str) -> None:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            try:
                if message.get("text") is None:
                    raise Refused("binary messages are not accepted: send JSON text")
                self._handle(parse(message["text"]), frontend, device)
            except Refused as exc:
                frontend.offer((error_frame("bad-message", str(exc)), None))

    def _handle(self, message: dict[str, Any], frontend: _Frontend, device: str) -> None:
        name = message.get("Username", message.get("username", frontend.username))
        if name != frontend.username:
            raise Refused(f"this connection is {frontend.username!r}; reconnect to change user")
        if "Output" in message:
            frontend.output = _output(message["Output"])
        given = [key for key in TEXT_KEYS if key in message]
        if not given:
            if "Output" in message:
                return  # a registration sent again: Output updated
            raise Refused(f'nothing to do: send {{"Text": ...}} (or {", ".join(TEXT_KEYS)})')
        try:
            text = check_text(given[0], message[given[0]]).strip()
            said = TextIn(text, user=frontend.username)
        except (BadText, FieldError) as exc:
            raise Refused(str(exc)) from exc
        self.streams[device].lang = language(text)
        self.dialogue.typed(device, said)


def parse(text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Refused(f"not JSON: {exc.msg} at character {exc.pos}") from exc
    if not isinstance(message, dict):
        raise Refused("a message must be a JSON object")
    return message


def registration(message: dict[str, Any]) -> tuple[str, bool]:
    """(username, output) from a frontend's first message, or Refused saying why."""
    if "Username" not in message:
        raise Refused(f"register first: {REGISTER}")
    try:
        username = check_name("Username", message["Username"])
    except BadText as exc:
        raise Refused(str(exc)) from exc
    return username, _output(message.get("Output", True))


def _output(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):  # Fay's frontends write flags as numbers too
        return bool(value)
    raise Refused("Output must be true or false")


async def _write(ws: WebSocket, queue: asyncio.Queue[dict[str, Any]]) -> None:
    """Sends the frontend its frames; a gone frontend ends it (the reader notices)."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
        while True:
            frame = await queue.get()
            await ws.send_text(json.dumps(frame, ensure_ascii=False))


async def _close(ws: WebSocket, code: int, reason: str) -> None:
    data = reason.encode()[:_REASON].decode(errors="ignore")
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await ws.close(code, data)
