"""Token counting for the memory jobs and context assembly.

Budgets are counted with the model's own tokenizer (``count_tokens``) when it has one; a
remote model may not, and then ~3 characters a token is assumed (on the safe side for
English, and Chinese packs ~1.5 characters a token, so the guess errs long, never short).
"""

from __future__ import annotations

from collections.abc import Callable

from fayd.llm import ChatLlm

CountTokens = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return (len(text) - cjk) // 3 + cjk + 1


def counter(llm: ChatLlm | None) -> CountTokens:
    count = getattr(llm, "count_tokens", None)
    return count if callable(count) else estimate_tokens


def context_size(llm: ChatLlm | None, default: int = 2048) -> int:
    value = getattr(llm, "n_ctx", None)
    return int(value) if isinstance(value, int) and value > 0 else default
