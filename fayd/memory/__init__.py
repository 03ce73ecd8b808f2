"""Long-term memory: Fay's memory stream in SQLite with an in-memory vector index."""

from fayd.memory.config import MemoryConfig
from fayd.memory.errors import BadInput
from fayd.memory.importance import ImportanceScorer
from fayd.memory.nodes import NewNode
from fayd.memory.service import Memory, fay_node
from fayd.memory.tags import KIND_ENUM, TAG_NAMESPACES, normalize_tags, reflection_tags

__all__ = [
    "KIND_ENUM",
    "TAG_NAMESPACES",
    "BadInput",
    "ImportanceScorer",
    "Memory",
    "MemoryConfig",
    "NewNode",
    "fay_node",
    "normalize_tags",
    "reflection_tags",
]
