"""Open the memory of a fayd installation outside the daemon (CLI, MCP over stdio)."""

from __future__ import annotations

import logging
from pathlib import Path

from fayd.config import Config
from fayd.embedding import Embedder
from fayd.errors import FaydError
from fayd.memory.config import MemoryConfig
from fayd.memory.dates import DaysNamed
from fayd.memory.importance import ImportanceScorer
from fayd.memory.service import Memory
from fayd.models import resolve
from fayd.store import Store

log = logging.getLogger(__name__)


def load_embedder(threads: int = 1) -> Embedder:
    files = resolve("embed").files
    return Embedder(files["model"], files["tokenizer"], threads=threads)


def load_scorer(cfg: Config) -> ImportanceScorer:
    """The LLM scorer, or the fail-safe default when no model is installed."""
    from fayd.llm.local import LocalLlm

    try:
        path = resolve("llm", cfg.llm.model_path or None).files["model"]
        return ImportanceScorer(LocalLlm(path, n_ctx=1024, threads=cfg.llm.threads))
    except FaydError as exc:
        log.warning("importance without the LLM (conservative default): %s", exc)
        return ImportanceScorer(None)


def open_memory(
    cfg: Config,
    db_path: str | Path | None = None,
    with_llm: bool = False,
    days_named: DaysNamed | None = None,
) -> Memory:
    """The memory in the state folder's database (the daemon's, or ``db_path``);
    ``days_named``: as Memory's (the CLI gives fayd.agent.clock.days.named)."""
    store = Store(db_path or cfg.db_path)
    scorer = load_scorer(cfg) if with_llm else ImportanceScorer(None)
    settings = MemoryConfig(default_user=cfg.agent.default_user)
    return Memory(store, load_embedder(), scorer, settings, days_named)
