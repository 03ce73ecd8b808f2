"""Memory settings (a frozen dataclass like the other subsystems' in fayd.config)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryConfig:
    #: Username of nodes written without one (Fay writes its default user as 主人/User).
    default_user: str = "User"
    #: Recency decays over time since the node was last retrieved: 0.5 every half-life...
    recency_half_life_h: float = 72.0
    #: ...but never below this, so an old memory can still win on relevance.
    recency_floor: float = 0.1
    #: Default weights (recency, relevance, importance) of searches: Fay's memory service.
    weights: tuple[float, float, float] = (0.0, 1.0, 0.5)
    #: Weights of the chat path (Fay: [0.8, 0.5, 0.5] with step decay; time decay here).
    chat_weights: tuple[float, float, float] = (0.5, 1.0, 0.5)
