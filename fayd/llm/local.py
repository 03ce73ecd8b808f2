"""A local chat model: a GGUF file run by llama.cpp (llama-cpp-python), streamed.

The user's turns go before background work (memory extraction): see :class:`PriorityGate`.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import random
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fayd.errors import ModelError
from fayd.llm.kvshift import drop_block
from fayd.precedence import is_door_work

log = logging.getLogger(__name__)

#: A background generation checks for a waiting foreground caller every this many prompt
#: tokens (and after every generated token): the longest a user's turn waits for it.
YIELD_TOKENS = 32
#: ``chat(background=True)`` starts a generation again this many times after giving way,
#: then fails (its caller gives up this round rather than compete with a busy user forever).
MAX_PREEMPTIONS = 5


class Preempted(ModelError):
    """A background generation gave way to a foreground one (``stream_chat`` raises it;
    ``chat`` starts the generation again once the model is free)."""


class _Abandoned(Exception):
    """``stop`` was set while a background prompt was being read."""


class PriorityGate:
    """Foreground calls (the user's turns) before background ones.

    Background callers wait while any foreground call runs or waits; a running background
    generation asks :meth:`must_yield` between steps and gives way (:class:`Preempted`).
    A foreground caller therefore waits at most for one step of background work, never for
    a queue of it. A :meth:`hold` (a user's turn in progress: its speech recognition and
    synthesis need the CPU too) keeps background work out the same way without taking the
    model. A door's foreground call (fayd.precedence: an OpenAI client, an avatar, ``fayd
    say``) also waits while a device's turn holds or waits: the person in the room first.
    ``exclusive`` (the local model, one KV cache): one generation at a time,
    whatever its kind. Not exclusive (a server that queues requests itself): foreground calls
    run at once and side by side; only background calls are held back, one at a time.
    """

    #: How often a waiting background caller looks at its ``stop`` event.
    POLL_S = 0.1

    def __init__(self, exclusive: bool = True) -> None:
        self.exclusive = exclusive
        self._cond = threading.Condition()
        self._busy = False  # a generation holds the model (exclusive) or a background one runs
        self._foreground = 0  # foreground callers running or waiting
        self._background = False  # a background generation runs
        self._holds = 0  # turns in progress that hold background work back
        self._room = 0  # of those (holds and foreground callers), a device's, not a door's

    def enter_foreground(self) -> None:
        door = is_door_work()
        with self._cond:
            if door:
                while self._room:
                    self._cond.wait()
            else:
                self._room += 1
            self._foreground += 1
            if self.exclusive:
                while self._busy:
                    self._cond.wait()
                self._busy = True
            if not door:
                self._room -= 1
                self._cond.notify_all()

    def leave_foreground(self) -> None:
        with self._cond:
            self._foreground -= 1
            if self.exclusive:
                self._busy = False
            self._cond.notify_all()

    def enter_background(self, stop: threading.Event | None = None) -> bool:
        """Wait until no generation runs and no foreground caller waits; False (nothing
        entered) when ``stop`` is set meanwhile."""
        with self._cond:
            while self._busy or self._foreground or self._holds:
                if stop is not None and stop.is_set():
                    return False
                self._cond.wait(self.POLL_S if stop is not None else None)
            self._busy = self._background = True
            return True

    def leave_background(self) -> None:
        with self._cond:
            self._busy = self._background = False
            self._cond.notify_all()

    def enter(
        self, background: bool, stop: threading.Event | None = None
    ) -> Callable[[], None] | None:
        """Enter as foreground or background work; returns the matching ``leave``, or None
        when a background caller's ``stop`` was set while it waited (nothing entered)."""
        if not background:
            self.enter_foreground()
            return self.leave_foreground
        return self.leave_background if self.enter_background(stop) else None

    @property
    def background_running(self) -> bool:
        return self._background

    def must_yield(self) -> bool:
        """True when a foreground caller runs or waits, or a turn holds background work back
        (a racy read: one step late at worst)."""
        return self._foreground > 0 or self._holds > 0

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Background work waits (and a running one gives way) until the block ends; a
        device's hold keeps doors' generations waiting too. Never blocks: safe on an event
        loop."""
        room = not is_door_work()
        with self._cond:
            self._holds += 1
            self._room += room
        try:
            yield
        finally:
            with self._cond:
                self._holds -= 1
                self._room -= room
                self._cond.notify_all()


def chat_in_background(stream: Callable[[], Iterator[str]]) -> str:
    """``"".join(stream())``, started again after each :class:`Preempted`, at most
    :data:`MAX_PREEMPTIONS` times (the next start waits for the foreground turn to end)."""
    for _ in range(MAX_PREEMPTIONS + 1):
        try:
            return "".join(stream())
        except Preempted:
            continue
    raise ModelError(f"gave way to the user's turns {MAX_PREEMPTIONS + 1} times; given up")


@dataclass(frozen=True)
class ChatRequest:
    """One :meth:`GatedChat.stream_chat` call, as a backend's ``_stream`` receives it."""

    messages: list[dict[str, Any]]
    max_tokens: int
    temperature: float
    stop: threading.Event | None
    background: bool
    #: The backend's own options (``stop_strings`` already renamed ``stop``).
    options: dict[str, Any]

    @property
    def stopped(self) -> bool:
        """The caller's ``stop`` event is set: end the reply now."""
        return self.stop is not None and self.stop.is_set()


class GatedChat(ABC):
    """What both chat models (:class:`LocalLlm`, :class:`fayd.llm.remote.RemoteLlm`) do
    alike: each generation passes the model's :class:`PriorityGate` (``_gate``, set by the
    subclass), so the user's turns go before background work. A subclass writes
    ``_stream``, the generation itself."""

    _gate: PriorityGate

    def user_turn(self) -> contextlib.AbstractContextManager[None]:
        """Hold background model work back for a user's whole turn (listening to speaking),
        not only while the model answers (:meth:`PriorityGate.hold`)."""
        return self._gate.hold()

    def stream_chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int = 128,
        temperature: float = 0.7,
        stop: threading.Event | None = None,
        background: bool = False,
        **options: Any,
    ) -> Iterator[str]:
        """Yield the reply's text deltas as the model produces them.

        ``stop`` (e.g. set when the user barges in) ends the reply early. ``options`` join
        the backend's chat completion request (``top_p``, ``seed``, ``response_format``…);
        stop strings are passed as ``stop_strings``, since ``stop`` is the event here.
        Errors are raised as ModelError; a ``background`` generation that gives way to a
        user's turn raises :class:`Preempted` (use ``chat``, which starts it again).
        """
        if "stop_strings" in options:
            options["stop"] = options.pop("stop_strings")
        leave = self._gate.enter(background, stop)
        if leave is None:
            return
        try:
            request = ChatRequest(messages, max_tokens, temperature, stop, background, options)
            yield from self._stream(request)
        finally:
            leave()

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        """The whole reply as one string (same arguments as :meth:`stream_chat`); with
        ``background=True`` started again after giving way (:func:`chat_in_background`)."""
        if kwargs.get("background"):
            return chat_in_background(lambda: self.stream_chat(messages, **kwargs))
        return "".join(self.stream_chat(messages, **kwargs))

    @abstractmethod
    def _stream(self, request: ChatRequest) -> Iterator[str]:
        """The reply's deltas; runs inside the gate."""


@dataclass
class _Cache:
    """The foreground's KV cache (sequence 0) and the tokens it holds."""

    data: Any
    size: int
    tokens: Sequence[int]


class LocalLlm(GatedChat):
    """Chat with a GGUF model that has a chat template (ChatML for SmolLM2, Qwen…).

    One :class:`PriorityGate` serialises every generation: a llama.cpp context holds one KV
    cache and is not re-entrant. ``stream_chat`` holds it from its first ``next()`` until it
    is exhausted, stopped or closed — consume it fully or ``close()`` it (a ``for`` loop that
    ``break``s is closed when the generator is garbage-collected, which CPython does at once).

    ``background=True`` (memory extraction) waits for the user's turns, gives way to one that
    arrives (within :data:`YIELD_TOKENS` tokens, prompt included) and puts the KV cache back
    as it found it, so the user's next turn still finds its persona and history read
    (llama.cpp's prefix cache). All calls block: run them in a worker thread.
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
        self._gate = PriorityGate(exclusive=True)
        # Every prompt goes through Llama.generate: close a gap the history left first.
        self._llm.generate = self._generate_keeping_history

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

    def _stream(self, request: ChatRequest) -> Iterator[str]:
        """``stop`` ends the reply after the current token; the prompt's own evaluation
        cannot be interrupted (a background one can). ``options`` go to llama-cpp-python's
        ``create_chat_completion`` (also ``repeat_penalty``). Errors (e.g. a prompt longer
        than the context) are raised as ModelError."""
        if request.stopped:
            return
        if not request.background:
            yield from self._generate(request)
            return
        cache = self._save_cache()
        # llama-cpp-python reads the prompt and every new token through Llama.eval: in
        # small steps, it is where a background generation can give way.
        self._llm.eval = functools.partial(self._eval_yielding, request)
        try:
            yield from self._generate(request)
        except _Abandoned:
            return
        finally:
            del self._llm.eval
            self._restore_cache(cache)

    def _generate(self, request: ChatRequest) -> Iterator[str]:
        try:
            chunks = self._llm.create_chat_completion(
                messages=request.messages,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                stream=True,
                **request.options,
            )
        except (ValueError, RuntimeError) as exc:  # e.g. the chat template rejects a role
            raise ModelError(f"LLM request failed: {exc}") from exc
        try:
            for chunk in _translated(chunks):
                if request.stopped:
                    return
                delta = chunk["choices"][0]["delta"].get("content")
                if delta:
                    yield delta
        finally:
            chunks.close()  # ends llama.cpp's generation loop now, not at GC time

    def _generate_keeping_history(
        self, tokens: Sequence[int], *args: Any, **kwargs: Any
    ) -> Iterator[int]:
        """``Llama.generate``, after dropping from the cache the exchanges the prompt no
        longer holds, so the rest of the history is reused (:mod:`fayd.llm.kvshift`)."""
        import llama_cpp

        tokens = list(tokens)
        if self._llm.n_tokens:
            dropped = drop_block(self._llm, tokens)
            if dropped:
                log.debug("LLM cache: %d tokens of dropped history removed, the rest kept", dropped)
        return llama_cpp.Llama.generate(self._llm, tokens, *args, **kwargs)

    def _eval_yielding(self, request: ChatRequest, tokens: Sequence[int]) -> None:
        import llama_cpp

        for start in range(0, len(tokens), YIELD_TOKENS):
            if self._gate.must_yield():
                raise Preempted("a background generation gave way to the user's turn")
            if request.stopped:
                raise _Abandoned
            llama_cpp.Llama.eval(self._llm, tokens[start : start + YIELD_TOKENS])

    def keep_prefix(self, path: Path, prompt: Any) -> None:
        """Write the KV cache as it is now (the warm-up read ``prompt``) to ``path``, for
        :meth:`recall_prefix` at the next start (fayd.llm.prefix_file)."""
        from fayd.llm import prefix_file

        self._gate.enter_foreground()
        try:
            cache = self._save_cache()
        finally:
            self._gate.leave_foreground()
        if cache is not None:
            made_from = prefix_file.identity(self.path, self.n_ctx, prompt)
            data = bytes(cache.data)[: cache.size]
            prefix_file.write(path, made_from, [int(t) for t in cache.tokens], data)

    def recall_prefix(self, path: Path, prompt: Any) -> bool:
        """The KV cache :meth:`keep_prefix` wrote for this model and ``prompt``, if any."""
        from fayd.llm import prefix_file

        found = prefix_file.read(path, prefix_file.identity(self.path, self.n_ctx, prompt))
        if found is None:
            return False
        tokens, data = found
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        self._gate.enter_foreground()
        try:
            return self._restore_cache(_Cache(buffer, len(data), tokens))
        finally:
            self._gate.leave_foreground()

    def _save_cache(self) -> _Cache | None:
        """A copy of the KV cache (ms: only the cells in use, not the 100 MB of logits that
        ``Llama.save_state`` copies too). Uses llama-cpp-python 0.3.36's private ``_ctx``."""
        import llama_cpp

        n = self._llm.n_tokens
        if n == 0:
            return None
        ctx = self._llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        data = (ctypes.c_uint8 * size)()
        got = llama_cpp.llama_state_seq_get_data(ctx, data, size, 0)
        if not got:
            return None
        return _Cache(data, got, self._llm.input_ids[:n].copy())

    def _restore_cache(self, cache: _Cache | None) -> bool:
        import llama_cpp

        llm = self._llm
        if cache is None:
            return False
        if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, cache.data, cache.size, 0):
            n = len(cache.tokens)
            llm.input_ids[:n] = cache.tokens
            llm.n_tokens = n
            llm._requires_eval = True  # the logits are not restored: re-read one token
            return True
        # The next prompt is read in full: slower, still right.
        log.warning("could not restore the LLM's KV cache: the next prompt is read in full")
        llm.reset()
        return False


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
