"""A chat completion request as OpenAI's clients send it, read into the one thing fayd
answers: the user's last words, as whom, streamed or not. Every refusal is OpenAI's error
shape, ``{"error": {"message", "type", "param", "code"}}``, so a client shows its message.
Plain functions, no I/O (docs/openai-endpoint.md says what is taken and what ignored)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from fayd.protocol.frames import MAX_TEXT
from fayd.protocol.text import BadText, check_name, json_object

#: The one model this server lists: fayd itself (its router, skills, memory and model).
MODEL = "fayd"
#: The roles OpenAI's chat format knows; any other is a mistake worth saying.
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


class Refused(Exception):
    """A request fayd will not answer: the status and OpenAI's error fields."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        kind: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


@dataclass(frozen=True)
class Asked:
    """What a request asks of fayd: ``text`` said by ``user`` (None: the household's
    default user), the reply streamed as it is made or not."""

    text: str
    user: str | None
    stream: bool


def no_model(model: str) -> Refused:
    return Refused(
        f"The model {model!r} does not exist: this server has one, {MODEL!r}",
        404,
        "model",
        "model_not_found",
    )


def read_body(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object whose every string is text (fayd.protocol.text), or
    Refused."""
    try:
        return json_object(raw)
    except BadText as exc:
        raise Refused(str(exc), param=exc.field) from exc
    except ValueError as exc:
        raise Refused(str(exc)) from exc


def parse(body: dict[str, Any]) -> Asked:
    """The request's utterance, user and mode; unknown fields (temperature, tools …) are
    ignored, as OpenAI-compatible servers do, since fayd chooses its own."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise Refused("'model' is required: this server's model is 'fayd'", param="model")
    if model != MODEL:
        raise no_model(model)
    n = body.get("n")
    if n is not None and n != 1:
        raise Refused("'n' must be 1: fayd gives one reply a turn", param="n")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise Refused("'stream' must be true or false", param="stream")
    return Asked(_utterance(body.get("messages")), _user(body.get("user")), bool(stream))


def _user(user: Any) -> str | None:
    """The request's ``user``: one of the household's names (the token holder is the
    administrator, who may speak as anyone: docs/security.md); absent, the default user."""
    if user is None:
        return None
    try:
        return check_name("user", user)
    except BadText as exc:
        raise Refused(str(exc), param="user", code="invalid_user") from exc


def _utterance(messages: Any) -> str:
    """The last message, the user's, as text: what fayd answers. The messages before it are
    the client's copy of the conversation; fayd keeps its own (per user), so they are not
    replayed, and the system's are not taken (the persona and guardrails are fayd's)."""
    if not isinstance(messages, list) or not messages:
        raise Refused("'messages' must be a non-empty list of messages", param="messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise Refused(
                f"messages[{i}] must be an object with a role ({', '.join(sorted(ROLES))})",
                param=f"messages[{i}]",
            )
    if not any(m["role"] == "user" for m in messages):
        raise Refused("there is no user message to answer", param="messages")
    last = len(messages) - 1
    if messages[last]["role"] != "user":
        raise Refused(
            "the last message must be the user's: fayd answers what the user said last",
            param=f"messages[{last}]",
        )
    text = _text(messages[last].get("content"), f"messages[{last}].content").strip()
    if not text:
        raise Refused("the user's message is empty", param=f"messages[{last}].content")
    if len(text) > MAX_TEXT:
        raise Refused(
            f"the user's message is {len(text)} characters long, over {MAX_TEXT}",
            param=f"messages[{last}].content",
            code="string_above_max_length",
        )
    return text


def _text(content: Any, where: str) -> str:
    """A message's content: a string, or OpenAI's list of parts of which only text parts
    are taken (an image or a sound is refused: fayd's endpoint reads text only)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise Refused(f"{where} must be a string or a list of text parts", param=where)
    texts = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(kind, str) and kind != "text":
            raise Refused(
                f"{where}[{i}] is {kind!r}: fayd's endpoint takes text only",
                param=f"{where}[{i}]",
                code="unsupported_content",
            )
        else:
            raise Refused(f"{where}[{i}] must be {{'type': 'text', 'text': …}}", param=where)
    return "\n".join(texts)
