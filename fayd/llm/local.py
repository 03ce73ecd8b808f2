"""A local chat model: a GGUF file run by llama.cpp (llama-cpp-python), streamed."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fayd.errors import ModelError


class LocalLlm:
    """Chat with a GGUF model that has a chat template (ChatML for SmolLM2, Qwen…).

    One lock serialises every generation: a llama.cpp context holds one KV cache and is not
    re-entrant. ``stream_chat`` holds the lock from its first ``next()`` until it is
    exhausted, stopped or closed — consume it fully or ``close()`` it (a ``for`` loop that
    ``break``s is closed when the generator is garbage-collected, which CPython does at once).
    All calls block: run them in a worker thread (``asyncio.to_thread``).
    """

    def __init__(
        self,
        model_path: str | Path,
        n_ctx: int = 2048,
        threads: int = 2,
        seed: int | None = None,
    ) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise ModelError(f"LLM model not found: {path}")
        import llama_cpp  # heavy (loads libllama): only when a model is actually built

        if seed is None or seed == 0:
            # llama-cpp-python maps seed 0 to its default, and its default is not random: each
            # completion re-seeds from random.Random(seed), so every process start would give
            # the same replies in the same order. Draw a seed from the OS instead.
            seed = random.SystemRandom().randrange(1, 2**31)
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"cannot load LLM {path}: {exc}") from exc
        self.path = path
        self.seed = seed
        self._lock = threading.Lock()

    @property
    def n_ctx(self) -> int:
        """Context window in tokens (prompt + reply) that this instance was built with."""
        return int(self._llm.n_ctx())

    @property
    def n_ctx_train(self) -> int | None:
        """The context length the model was trained for (0.3.36 has no ``n_ctx_train()``)."""
        meta = self._llm.metadata
        value = meta.get(f"{meta.get('general.architecture', 'llama')}.context_length")
        return int(value) if value is not None else None

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``, to trim a history to fit :attr:`n_ctx`. Uses only the
        vocabulary (no context), so it does not wait for a running generation."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def stream_chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int = 128,
        temperature: float = 0.7,
        stop: threading.Event | None = None,
        **options: Any,
    ) -> Iterator[str]:
        """Yield the reply's text deltas as the model produces them.

        ``stop`` (e.g. set when the user barges in) ends the reply after the current token;
        the prompt's own evaluation cannot be interrupted. ``options`` go to llama-cpp-python's
        ``create_chat_completion`` (``stop`` strings there are ``stop_strings`` here, since
        ``stop`` is the event; also ``top_p``, ``repeat_penalty``, ``response_format``, ``seed``).
        Errors (e.g. a prompt longer than the context) are raised as ModelError.
        """
        if "stop_strings" in options:
            options["stop"] = options.pop("stop_strings")
        with self._lock:
            if stop is not None and stop.is_set():
                return
            try:
                chunks = self._llm.create_chat_completion(
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stream=True,
                    **options,
                )
            except (ValueError, RuntimeError) as exc:  # e.g. the chat template rejects a role
                raise ModelError(f"LLM request failed: {exc}") from exc
            try:
                for chunk in _translated(chunks):
                    if stop is not None and stop.is_set():
                        return
                    delta = chunk["choices"][0]["delta"].get("content")
                    if delta:
                        yield delta
            finally:
                chunks.close()  # ends llama.cpp's generation loop now, not at GC time

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        """The whole reply as one string (same arguments as :meth:`stream_chat`)."""
        return "".join(self.stream_chat(messages, **kwargs))


def _translated(chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    # The prompt is evaluated lazily, at the first next(): its errors surface here, not at
    # create_chat_completion(). Translate them without wrapping the caller's code.
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            return
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"LLM generation failed: {exc}") from exc
        yield chunk
