"""An OpenAI-compatible door on the API's port: ``/v1/chat/completions`` (streamed as
server-sent events, or whole) and ``/v1/models``. The answer is a turn like a spoken or
typed one (router, skills, memory, the model: ``Dialogue.say``), never a bare call to the
model, and a streamed reply goes out sentence by sentence as the turn says them. The lock is
the API's (fayd.auth.HttpGuard): the token as ``Authorization: Bearer``, which is what
OpenAI's clients send as their api_key. docs/openai-endpoint.md."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from fayd.agent.chat import model_failure
from fayd.agent.language.text import join_sentences
from fayd.agent.turn import Turn
from fayd.doors.openai_request import MODEL, Asked, Refused, no_model, parse, read_body

log = logging.getLogger(__name__)

#: A turn asked of the agent: (text, user or None, told each sentence) → the turn, or None
#: when it was interrupted or failed (``Dialogue.say`` on the administrator's conversation).
Ask = Callable[[str, str | None, Callable[[str], None]], Awaitable[Turn | None]]

#: Ends a turn's queue of sentences.
_END = None
#: Turns whose client went away: kept referenced until they finish (asyncio holds tasks weakly).
_orphans: set[asyncio.Task[Turn | None]] = set()


def routes(ask: Ask, created: float) -> list[BaseRoute]:
    """The door's routes; ``created`` (a Unix time) is the listed model's."""
    return [
        Route("/v1/models", partial(list_models, created), methods=["GET"]),
        Route("/v1/models/{model}", partial(one_model, created), methods=["GET"]),
        Route("/v1/chat/completions", partial(completions, ask), methods=["POST"]),
        Route("/v1/{rest:path}", elsewhere, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]


def _model(created: float) -> dict[str, Any]:
    return {"id": MODEL, "object": "model", "created": int(created), "owned_by": "fayd"}


async def list_models(created: float, request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [_model(created)]})


async def one_model(created: float, request: Request) -> JSONResponse:
    model = request.path_params["model"]
    if model != MODEL:
        return no_model(model).response()
    return JSONResponse(_model(created))


async def elsewhere(request: Request) -> JSONResponse:
    """Any other /v1 path or method: OpenAI's error shape, not Starlette's plain text."""
    path = request.url.path
    if path in ("/v1/models", "/v1/chat/completions"):
        return Refused(f"{request.method} is not allowed on {path}", 405).response()
    return Refused(
        f"fayd does not serve {path}: only /v1/chat/completions and /v1/models",
        404,
        code="unknown_url",
    ).response()


class Reply:
    """One turn's sentences as the turn delivers them, then its end."""

    def __init__(self, ask: Ask, asked: Asked) -> None:
        self.sentences: asyncio.Queue[str | None] = asyncio.Queue()
        self.task = asyncio.create_task(self._run(ask, asked))

    async def _run(self, ask: Ask, asked: Asked) -> Turn | None:
        try:
            return await ask(asked.text, asked.user, self.sentences.put_nowait)
        finally:
            self.sentences.put_nowait(_END)

    async def next(self) -> str | None:
        """The next sentence; None once the turn has ended (then :meth:`turn`)."""
        return await self.sentences.get()

    async def turn(self) -> Turn:
        """The finished turn, or Refused: it failed, or the model's stand-in was said."""
        turn = await self.task
        if turn is None:
            raise Refused(
                "the turn was interrupted or failed (see fayd's log)",
                500,
                None,
                "turn_failed",
                "server_error",
            )
        failed(turn.sentences)
        return turn

    def abandon(self) -> None:
        """The client went away: the turn goes on (it is the household's conversation
        too, and is stored) but nobody waits for it."""
        if not self.task.done():
            _orphans.add(self.task)
            self.task.add_done_callback(_orphans.discard)


def failed(sentences: list[str]) -> None:
    """Refused (503, its code) when a sentence is the stand-in a turn says for a model that
    could not answer (fayd.agent.chat): never passed off as the model's words."""
    if found := model_failure(sentences):
        code, why = found
        raise Refused(why, 503, None, code, "server_error")


async def completions(ask: Ask, request: Request) -> Response:
    try:
        asked = parse(read_body(await request.body()))
    except Refused as refused:
        return refused.response()
    reply = Reply(ask, asked)
    answer = _Answer()
    try:
        if not asked.stream:
            turn = await reply.turn()
            return JSONResponse(answer.whole(turn.answer))
        # The headers wait for the first sentence: a turn that fails before it (no
        # model) gets an error status, not a stream that says so.
        first = await reply.next()
        if first is None:
            await reply.turn()
        else:
            failed([first])
    except Refused as refused:
        return refused.response()
    except BaseException:  # the client went away (cancelled), or a bug: the turn goes on
        reply.abandon()
        raise
    return StreamingResponse(
        _events(answer, reply, first),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _events(answer: _Answer, reply: Reply, first: str | None) -> AsyncIterator[str]:
    """The reply as OpenAI's chunks: the role, a chunk a sentence, the end, ``[DONE]``."""
    try:
        yield _sse(answer.chunk({"role": "assistant", "content": ""}))
        said: list[str] = []
        sentence = first
        while sentence is not None:
            failed([sentence])
            yield _sse(answer.chunk({"content": _joined(said, sentence)}))
            said.append(sentence)
            sentence = await reply.next()
        await reply.turn()
        yield _sse(answer.chunk({}, "stop"))
    except Refused as refused:  # after the headers: OpenAI streams an error event
        reply.abandon()
        yield _sse(refused.body())
    except BaseException:
        reply.abandon()
        raise
    yield "data: [DONE]\n\n"


def _joined(said: list[str], sentence: str) -> str:
    """``sentence`` as it continues the text so far: after a space in English, none after
    Chinese (as ``join_sentences`` joins a turn's whole answer)."""
    if not said:
        return sentence
    last = said[-1]
    return sentence if join_sentences([last, "x"]) == last + "x" else " " + sentence


def _sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


class _Answer:
    """The ids and time every object of one answer carries."""

    def __init__(self) -> None:
        self.id = f"chatcmpl-{secrets.token_hex(12)}"
        self.created = int(time.time())

    def whole(self, text: str) -> dict[str, Any]:
        # No "usage": fayd's turn is not one prompt to one model (a skill may answer with
        # no model at all), so there is no honest token count to give.
        message = {"role": "assistant", "content": text}
        return {
            **self._head("chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **self._head("chat.completion.chunk"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": MODEL}
