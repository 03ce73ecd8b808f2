"""Long-term memory: Fay's memory stream in SQLite with an in-memory vector index."""

from fayd.memory.config import MemoryConfig
from fayd.memory.errors import BadInput
from fayd.memory.facts import Fact, Facts
from fayd.memory.importance import ImportanceScorer
from fayd.memory.nodes import NewNode
from fayd.memory.provenance import TRUST_TIERS
from fayd.memory.service import Memory, fay_node
from fayd.memory.tags import KIND_ENUM, TAG_NAMESPACES, normalize_tags, reflection_tags
from fayd.memory.working import Working

__all__ = [
    "KIND_ENUM",
    "TAG_NAMESPACES",
    "TRUST_TIERS",
    "BadInput",
    "Fact",
    "Facts",
    "ImportanceScorer",
    "Memory",
    "MemoryConfig",
    "NewNode",
    "Working",
    "fay_node",
    "normalize_tags",
    "reflection_tags",
]
