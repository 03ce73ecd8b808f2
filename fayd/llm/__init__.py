"""The language model: a local GGUF chat model, the Protocols its callers rely on, and
streaming text clean-up for speech."""

from fayd.llm.local import LocalLlm
from fayd.llm.ports import ChatLlm, TokenCounting
from fayd.llm.text import ABBREVIATIONS, SentenceSplitter, ThinkFilter, word_count

__all__ = [
    "ABBREVIATIONS",
    "ChatLlm",
    "LocalLlm",
    "SentenceSplitter",
    "ThinkFilter",
    "TokenCounting",
    "word_count",
]
