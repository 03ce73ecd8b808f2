"""The language model: a local GGUF chat model, and streaming text clean-up for speech."""

from fayd.llm.local import LocalLlm
from fayd.llm.text import ABBREVIATIONS, SentenceSplitter, ThinkFilter, word_count

__all__ = ["ABBREVIATIONS", "LocalLlm", "SentenceSplitter", "ThinkFilter", "word_count"]
