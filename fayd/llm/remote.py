"""A chat model behind an OpenAI-compatible endpoint (llama.cpp's ``llama-server`` or
llama-cpp-python's server on the household's LAN), streamed over server-sent events.

Same interface as :class:`fayd.llm.local.LocalLlm`, so the agent does not care which one runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from fayd.errors import LinkError, ModelError
from fayd.llm.local import ChatRequest, GatedChat, Preempted, PriorityGate


class LlmUnreachable(ModelError, LinkError):
    """The LLM server cannot be reached, or stopped answering in time.

    Both a ModelError (callers of either LLM backend catch that) and a LinkError (it is a
    network problem, not a broken model)."""


class RemoteLlm(GatedChat):
    """Chat with a model served at ``base_url`` (``http://host:8080`` or ``…/v1``).

    ``model`` is sent only when given (a llama.cpp server answers with the model it loaded);
    ``api_key`` is sent as a bearer token. ``connect_timeout_s`` bounds the connection and
    ``timeout_s`` every other wait on the server: sending the request, the answer's headers
    and each gap between streamed chunks (so the first one includes the prompt's
    evaluation). Each call is its own request; the connection pool is thread-safe, so no
    lock: the server queues concurrent requests itself. ``background=True`` requests (memory
    extraction) wait while one of the user's is in flight and give way to one that starts
    (the connection is closed, which stops the server's generation), as with the local model.
    All calls block: run them in a worker thread (``asyncio.to_thread``).
    """

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str = "",
        timeout_s: float = 30.0,
        connect_timeout_s: float = 5.0,
    ) -> None:
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ModelError(f"LLM server URL must be http(s)://host[:port][/v1], got {base_url!r}")
        if timeout_s <= 0 or connect_timeout_s <= 0:
            raise ModelError("LLM server timeouts must be positive")
        # OpenAI clients take the base with "/v1"; people also paste the bare server address.
        path = parts.path.rstrip("/") or "/v1"
        self.base_url = f"{parts.scheme}://{parts.netloc}{path}"
        self.model = model
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._gate = PriorityGate(exclusive=False)
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s)),
            # The LAN server is reached directly, never through a proxy from the environment.
            trust_env=False,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RemoteLlm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def models(self) -> list[str]:
        """The model ids the server offers (a cheap reachability check for start-up)."""
        url = f"{self.base_url}/models"
        try:
            response = self._client.get(url)
        except httpx.HTTPError as exc:
            raise self._link_error(url, exc) from exc
        if response.status_code >= 400:
            raise ModelError(_status_message(url, response.status_code, response.text))
        try:
            return [str(m["id"]) for m in response.json().get("data", [])]
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelError(f"LLM server {url} sent an unexpected model list: {exc}") from exc

    def _stream(self, request: ChatRequest) -> Iterator[str]:
        """``stop`` ends the reply at the next chunk and closes the connection, which makes
        the server stop generating. ``options`` join the request body. A refused request is
        a ModelError with the server's message; no connection or no answer within
        ``timeout_s`` is an :class:`LlmUnreachable`. A ``background`` request gives way at
        its next chunk; one still waiting for the server's first chunk cannot see the
        user's request, which the server may queue behind it."""
        if request.stopped:
            return
        url = f"{self.base_url}/chat/completions"
        body = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            **({"model": self.model} if self.model else {}),
            **request.options,
        }
        response = self._send(url, body)
        try:
            for event in self._events(url, response):
                if request.stopped:
                    return  # the finally closes the connection mid-stream
                if request.background and self._gate.must_yield():
                    raise Preempted("a background request gave way to the user's request")
                if "error" in event:
                    raise ModelError(f"LLM server {url} failed: {_error_text(event['error'])}")
                choices = event.get("choices") or [{}]
                delta = (choices[0].get("delta") or {}).get("content")
                if delta:
                    yield delta
        finally:
            response.close()

    def _send(self, url: str, body: dict[str, Any]) -> httpx.Response:
        """POST ``body``; returns once the response headers are in."""
        for attempt in (1, 2):
            request = self._client.build_request("POST", url, json=body)
            try:
                return self._client.send(request, stream=True)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                # A pooled keep-alive connection the server had closed meanwhile (its idle
                # timeout, a restart, an earlier failed request) is dropped or reset before
                # any answer: once more, on a new connection. Not after a timeout or a
                # refused connection: that would double the wait.
                if attempt == 2:
                    raise self._link_error(url, exc) from exc
            except httpx.HTTPError as exc:
                raise self._link_error(url, exc) from exc
        raise AssertionError("unreachable")

    def _events(self, url: str, response: httpx.Response) -> Iterator[dict[str, Any]]:
        # httpx raises while the stream is read; translate here, around the reads only, so
        # errors in the caller's own code between deltas are never rewrapped.
        try:
            if response.status_code >= 400:
                response.read()
                raise ModelError(_status_message(url, response.status_code, response.text))
            # A crashed server breaks the chunked body (an httpx error). A clean end without
            # "[DONE]" is accepted after some events (not every server sends it), but not
            # with none: llama-cpp-python's server answers 200 and an empty stream when the
            # request fails after the headers (e.g. a prompt longer than its context).
            seen = False
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue  # blank separators, ": ping" comments, "event:" names
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except ValueError as exc:
                    # Not quoted: the event may carry the model's words, and this goes to the log.
                    raise ModelError(
                        f"LLM server {url} sent a bad event ({len(data)} characters): {exc}"
                    ) from exc
                seen = True
                yield event
            if not seen:
                raise ModelError(
                    f"LLM server {url} sent an empty reply stream; its log says why "
                    "(e.g. the prompt is longer than its context)"
                )
        except httpx.HTTPError as exc:
            raise self._link_error(url, exc) from exc

    def _link_error(self, url: str, exc: httpx.HTTPError) -> LlmUnreachable:
        if isinstance(exc, httpx.ConnectTimeout | httpx.ConnectError):
            return LlmUnreachable(
                f"cannot connect to LLM server {url}: {exc or type(exc).__name__}"
            )
        if isinstance(exc, httpx.TimeoutException):
            return LlmUnreachable(f"LLM server {url} did not answer within {self.timeout_s:g} s")
        return LlmUnreachable(f"connection to LLM server {url} failed: {type(exc).__name__}: {exc}")


def _status_message(url: str, status: int, text: str) -> str:
    try:
        detail = _error_text(json.loads(text).get("error", text))
    except (ValueError, AttributeError):
        detail = text.strip()
    hint = " (check the API key)" if status in (401, 403) else ""
    return f"LLM server {url} refused the request: HTTP {status}{hint}: {detail[:500]}"


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
