"""Keep llama.cpp's cache when the history drops its oldest exchanges (a context shift).

llama-cpp-python reuses the cache only for the longest common *prefix* of the cached tokens
and the new prompt. The agent's history falls back a block of exchanges at a time
(``fayd.store.records.history``): the prompt then keeps the persona, skips the dropped
exchanges and goes on with the rest of the history, all of which is in the cache, but after
the gap, so the whole history was read again (the slowest turns: +0.5-2 s on this board).

:func:`skipped_block` finds such a gap: the prompt's tokens after the common prefix found
again further on in the cache. :func:`drop_block` removes those cells from the cache and
moves the rest down to close the gap (llama.cpp re-rotates the keys for their new
positions), so the prefix match covers persona and kept history. As with llama.cpp's own
context shift, the kept tokens' cache entries were computed while the dropped exchanges were
in view: the reply is not bit-identical to a fresh read of the shorter prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the runtime import waits until a shift is needed
    import llama_cpp

#: Tokens of the prompt that must be found again after the gap (a chance match of a few
#: tokens, e.g. a repeated phrase, must not cut the cache).
PROBE = 8
#: A gap is closed only when this many cached tokens are reused after it.
MIN_REUSED = 32


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0]) if diff.size else n


def skipped_block(cached: Sequence[int], prompt: Sequence[int]) -> tuple[int, int, int] | None:
    """(start, end, reused): the prompt shares ``cached[:start]``, skips
    ``cached[start:end]`` and goes on with ``reused`` tokens of ``cached[end:]``; None when
    there is no such gap worth closing."""
    cached, prompt = np.asarray(cached, np.int64), np.asarray(prompt, np.int64)
    start = common_prefix(cached, prompt)
    rest = prompt[start:]
    if rest.size < PROBE or cached.size - start <= PROBE:
        return None
    best: tuple[int, int] | None = None  # (reused, end)
    for at in np.flatnonzero(cached[start + 1 :] == rest[0]):
        end = start + 1 + int(at)
        if not np.array_equal(cached[end : end + PROBE], rest[:PROBE]):
            continue
        reused = common_prefix(cached[end:], rest)
        if best is None or reused > best[0]:
            best = (reused, end)
    if best is None or best[0] < MIN_REUSED:
        return None
    return start, best[1], best[0]


def drop_block(llm: llama_cpp.Llama, prompt: Sequence[int]) -> int:
    """Close the gap :func:`skipped_block` finds between ``llm``'s cache (a
    ``llama_cpp.Llama``, sequence 0) and ``prompt``; returns the tokens dropped (0: none).
    Uses llama-cpp-python 0.3.36's ``_ctx``, ``input_ids`` and ``n_tokens``."""
    import llama_cpp

    n = llm.n_tokens
    found = skipped_block(llm.input_ids[:n], prompt)
    if found is None:
        return 0
    start, end, _ = found
    memory = llama_cpp.llama_get_memory(llm._ctx.ctx)
    if not llama_cpp.llama_memory_can_shift(memory):
        return 0
    if not llama_cpp.llama_memory_seq_rm(memory, 0, start, end):
        return 0
    gap = end - start
    llama_cpp.llama_memory_seq_add(memory, 0, end, n, -gap)
    llm.input_ids[start : n - gap] = llm.input_ids[end:n].copy()
    llm.n_tokens = n - gap
    llm._requires_eval = True  # the last logits are of the old sequence
    return gap
