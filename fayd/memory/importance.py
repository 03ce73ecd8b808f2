"""Importance of a memory (1-10), scored by the LLM with a grammar-constrained answer.

Fay's fail-safes, kept: a memory is never lost because scoring failed. A failed call (no
model, an error) gets :data:`ON_FAILURE`, a conservative low value; an answer that cannot be
parsed gets :data:`ON_UNPARSABLE`, the middle of the scale (the model did read the text).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Protocol

from fayd.logwords import words

log = logging.getLogger(__name__)

ON_FAILURE = 3.0
ON_UNPARSABLE = 5.0
LOW, HIGH = 1, 10

#: The grammar: llama.cpp compiles this schema, so the model can only write {"importance": n}
#: with n an integer from 1 to 10 (an enum: ranges are not compiled by every version).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"importance": {"type": "integer", "enum": list(range(LOW, HIGH + 1))}},
    "required": ["importance"],
}

PROMPT = (
    "On a scale of 1 to 10, where 1 is purely mundane (e.g. brushing teeth, small talk) and "
    "10 is extremely poignant (e.g. a death in the family, a serious illness, a lasting "
    "rule the user asked for), rate the likely importance of this memory for a companion "
    'who looks after the user. Answer as JSON {"importance": <1-10>}.\n\nMemory: '
)


class ChatModel(Protocol):
    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str: ...


class ImportanceScorer:
    """Scores with ``llm.chat``; ``llm=None`` (no model installed) always gives ON_FAILURE."""

    def __init__(self, llm: ChatModel | None, max_chars: int = 1000) -> None:
        self.llm = llm
        self.max_chars = max_chars

    def score(self, content: str) -> float:
        if self.llm is None:
            return ON_FAILURE
        messages = [{"role": "user", "content": PROMPT + content[: self.max_chars]}]
        try:
            answer = self.llm.chat(
                messages,
                max_tokens=16,
                temperature=0.0,
                response_format={"type": "json_object", "schema": SCHEMA},
            )
        except Exception as exc:  # any failure of the model must not lose the memory
            log.warning("importance scoring failed, using %s: %s", ON_FAILURE, exc)
            return ON_FAILURE
        return parse_importance(answer)


def parse_importance(answer: str) -> float:
    """``{"importance": n}`` or a bare number in range → n; anything else → ON_UNPARSABLE."""
    value: Any = None
    try:
        data = json.loads(answer, strict=False)
        value = data.get("importance") if isinstance(data, dict) else data
    except (json.JSONDecodeError, TypeError):
        match = re.search(r"\d+(?:\.\d+)?", answer or "")
        value = match.group() if match else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        log.warning("unparsable importance answer %s, using %s", words(answer), ON_UNPARSABLE)
        log.debug("the unparsable importance answer: %s", words(answer))
        return ON_UNPARSABLE
    if not LOW <= number <= HIGH:
        return ON_UNPARSABLE
    return number
