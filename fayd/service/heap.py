"""The C heap under a long run: few malloc arenas, and freed pages given back.

Why: glibc gives each thread that contends for malloc an arena of its own (up to 8 per
core), and a freed block inside an arena is kept, not returned. The store's writer thread,
the model workers and onnxruntime's threads each grew theirs, so the daemon's RSS crept up
under a steady event load long after its caches were full (benchmarks/soak.py). Two
arenas and a periodic ``malloc_trim`` keep it flat. On a libc without these (musl), nothing.
"""

from __future__ import annotations

import asyncio
import logging

from fayd.models.native_heap import glibc, trim

log = logging.getLogger(__name__)

#: glibc's mallopt parameter number for the arena limit (malloc.h: M_ARENA_MAX).
M_ARENA_MAX = -8
ARENAS = 2
#: Each minute: at five, the soak's RSS rose 7–10 MB between trims (a sawtooth, not growth).
TRIM_EVERY_S = 60.0


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Called before the worker threads start (arenas are made as threads first contend)."""
    libc = glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas) == 1)


async def trim_forever(every_s: float = TRIM_EVERY_S) -> None:
    """A supervised task: trims in a worker thread (a large heap takes a few ms)."""
    if glibc() is None:
        log.info("heap: not glibc; freed memory is left to the allocator")
        await asyncio.Event().wait()  # a component that ends would be restarted
    while True:
        await asyncio.sleep(every_s)
        await asyncio.to_thread(trim)
