"""Each spoken sentence of an avatar's reply as a WAV file at a capability URL.

A Fay frontend plays ``HttpValue`` with a plain ``<audio>`` element or HTTP GET, which
cannot carry the token: the URL itself is the secret (128 random bits, sent only over the
token-guarded WebSocket), kept a few minutes, in memory, within a count and a byte budget.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections import OrderedDict

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from fayd.speech.audio import wav_bytes

log = logging.getLogger(__name__)

#: Where the WAVs are served: a prefix the lock lets through without the token (GET only).
PREFIX = "/avatar/audio/"
#: How long a sentence's WAV stays fetchable: a frontend plays it within seconds.
KEEP_S = 300.0
#: At most this many WAVs and bytes are kept; the oldest go first.
MAX_FILES = 256
MAX_BYTES = 48 * 1024 * 1024
_NAME = re.compile(r"[0-9a-f]{32}\.wav")


class AudioStore:
    def __init__(
        self, keep_s: float = KEEP_S, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES
    ) -> None:
        self.keep_s = keep_s
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._files: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._bytes = 0

    def put(self, pcm16: bytes, rate: int) -> str:
        """Keep a sentence's speech; its URL path (``/avatar/audio/<32 hex>.wav``)."""
        data = wav_bytes(pcm16, rate)
        name = f"{secrets.token_hex(16)}.wav"
        self._files[name] = (time.monotonic() + self.keep_s, data)
        self._bytes += len(data)
        self._expire()
        return PREFIX + name

    def get(self, name: str) -> bytes | None:
        self._expire()
        found = self._files.get(name) if _NAME.fullmatch(name) else None
        return found[1] if found else None

    def __len__(self) -> int:
        return len(self._files)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._files:
            name, (until, data) = next(iter(self._files.items()))
            over = len(self._files) > self.max_files or self._bytes > self.max_bytes
            if until > now and not over:
                return
            if over and until > now:
                log.warning(
                    "avatar audio: over %d files or %d bytes, oldest dropped",
                    self.max_files,
                    self.max_bytes,
                )
            del self._files[name]
            self._bytes -= len(data)

    def route(self) -> Route:
        async def serve(request: Request) -> Response:
            data = self.get(request.path_params["name"])
            if data is None:
                return Response("no such audio (or it expired)\n", 404, media_type="text/plain")
            # Private: the URL is a capability, no shared cache should keep a copy.
            headers = {"Cache-Control": "private, max-age=300"}
            return Response(data, media_type="audio/wav", headers=headers)

        return Route(PREFIX + "{name}", serve, methods=["GET"])
