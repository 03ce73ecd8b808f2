"""glibc's heap as the model runtimes use it: freed pages given back after a large job.

Why here (beside ort_session): the engines call it after their own work, and the service's
heap policy (fayd.service.heap) builds on it. CTranslate2 (Whisper) allocates tens of MB of
buffers per utterance through malloc; freed, they stay in the arena of the worker thread
that ran it, so each voice turn left the daemon larger (benchmarks/footprint.py). A
``malloc_trim`` after each utterance gives them back: measured on tiny.en, 25-40 MB less
kept and no more CPU per utterance. A fixed 1 MB mmap threshold (M_MMAP_THRESHOLD) kept as
little but cost ~25 % more CPU per utterance (every large buffer a fresh mapping). On a libc
without these (musl), nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def glibc() -> ctypes.CDLL | None:
    """The C library when it has ``mallopt`` and ``malloc_trim`` (glibc), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not hasattr(libc, "mallopt") or not hasattr(libc, "malloc_trim"):
        return None
    return libc


def trim() -> bool:
    """Freed heap pages back to the system; True when some were."""
    libc = glibc()
    return bool(libc is not None and libc.malloc_trim(0))
