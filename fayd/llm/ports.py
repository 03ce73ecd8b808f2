"""What the rest of fayd needs from a chat model, as Protocols: the local model
(:class:`fayd.llm.local.LocalLlm`), a LAN server (:class:`fayd.llm.remote.RemoteLlm`) and a
test's stand-in all fit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable


class ChatLlm(Protocol):
    """A chat model whose generations pass a priority gate: the user's turns first, then
    background work (memory extraction, reflection). All calls block: run them in a worker
    thread."""

    def stream_chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int = 128,
        temperature: float = 0.7,
        stop: threading.Event | None = None,
        background: bool = False,
        **options: Any,
    ) -> Iterator[str]:
        """The reply's text deltas; ``stop`` ends it early; ``background`` work gives way
        to the user's turns (:class:`fayd.llm.local.Preempted`)."""
        ...

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        """The whole reply (the arguments of ``stream_chat``); background work that gave
        way is started again."""
        ...

    def user_turn(self) -> AbstractContextManager[None]:
        """Holds background work back while a user's turn runs."""
        ...


@runtime_checkable
class TokenCounting(Protocol):
    """A chat model that knows its tokenizer and context size (the local one; a remote
    server does not say, and callers estimate instead)."""

    @property
    def n_ctx(self) -> int:
        """Context window in tokens (prompt + reply)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``."""
        ...
