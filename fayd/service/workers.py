"""The daemon's worker threads: model runs (ASR, LLM, TTS, embeddings) happen there, at a
lower CPU priority than the event loop's thread.

Why: on a 2-core board the models keep every core busy during a turn (llama.cpp alone
runs one thread per core), and the event loop, which needs little CPU but needs it at once
(audio frames, barge-in, timers), waits in the run queue behind them: the 10-100 ms late
wake-ups measured during turns were run-queue time, not work on the loop. Linux keeps a
nice value per thread and a new thread inherits its creator's, so the thread pools the
libraries start from a worker (onnxruntime, OpenMP) are lowered too. Raising a nice value
needs no privilege.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from fayd.precedence import ROOM_POLL_S, BusyStretch, is_door_work

T = TypeVar("T")

log = logging.getLogger(__name__)

#: How much lower than the event loop's thread the workers run (nice steps; +5 gives a
#: thread about a third of the CPU weight of a nice-0 one).
WORKER_NICE = 5
#: How much lower still a door's work runs (fayd.precedence): nice 15 against the room's 5
#: has about a tenth of its CPU weight, so a voice turn's speech recognition barely notices
#: an OpenAI client's or an avatar's turn beside it.
DOOR_NICE = 10
#: Threads for the doors' work: they queue behind each other, never beside the room's.
DOOR_THREADS = 2


def lower_priority(step: int = WORKER_NICE) -> bool:
    """Lower the calling thread's CPU priority by ``step`` nice levels (Linux only, where
    nice is per thread); False if it could not."""
    if sys.platform != "linux" or step <= 0:
        return False
    tid = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + step))
    except OSError as exc:  # e.g. a seccomp profile without setpriority: run as before
        log.debug("could not lower worker thread priority: %s", exc)
        return False
    return True


def thread_nice() -> int:
    """The calling thread's nice value (for tests and status)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class WorkerPool(ThreadPoolExecutor):
    """The room's workers, and a smaller pool of lower priority for what a door's task
    submits (fayd.precedence). The choice is made in :meth:`submit`, which
    ``asyncio.to_thread`` calls on the loop's thread in the caller's context. A
    ThreadPoolExecutor itself: asyncio takes no other kind as its default executor."""

    def __init__(self, step: int = WORKER_NICE, door_step: int = DOOR_NICE) -> None:
        super().__init__(
            thread_name_prefix="fayd-worker", initializer=lower_priority, initargs=(step,)
        )
        #: The room's busy stretch as the door threads see it (two threads: a race only
        #: moves its start by a poll).
        self.stretch = BusyStretch()
        self.doors = ThreadPoolExecutor(
            DOOR_THREADS,
            thread_name_prefix="fayd-door",
            initializer=lower_priority,
            initargs=(step + door_step,),
        )

    #: Whether a device's turn is being heard or answered (set by the daemon once its parts
    #: are built: Dialogue.room_busy). Read from the door's threads: plain reads of flags
    #: and counters, atomic under the GIL.
    room_busy: Callable[[], bool] = staticmethod(lambda: False)  # none yet: never busy

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        if is_door_work():
            return self.doors.submit(self._after_the_room, fn, *args, **kwargs)
        return super().submit(fn, *args, **kwargs)

    def _after_the_room(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """A door's piece of work (a sentence's speech, an embedding) starts once no
        device's turn needs the CPU (at most ROOM_WAIT_S a busy stretch): the ONNX
        runtimes' own threads were started by the room's workers and run at their
        priority, whoever asks."""
        while self.stretch.wait(self.room_busy(), time.monotonic()):
            time.sleep(ROOM_POLL_S)
        return fn(*args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.doors.shutdown(wait, cancel_futures=cancel_futures)
        super().shutdown(wait, cancel_futures=cancel_futures)


def worker_pool(step: int = WORKER_NICE) -> WorkerPool:
    """A default executor for the daemon's loop: ``asyncio.to_thread`` work runs there."""
    return WorkerPool(step)
