"""Importance by the real small LLM under a JSON grammar, and Fay's fail-safes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fayd.errors import ModelError
from fayd.memory import ImportanceScorer, Memory
from fayd.memory.importance import ON_FAILURE, ON_UNPARSABLE, parse_importance
from fayd.store import Store

pytestmark = pytest.mark.models


def test_the_grammar_gives_a_number_in_range(local_llm) -> None:
    scorer = ImportanceScorer(local_llm)
    for text in ("I brushed my teeth.", "My mother died last night and I feel terrible."):
        value = scorer.score(text)
        assert 1 <= value <= 10 and value == int(value)


def test_parse_fallbacks() -> None:
    assert parse_importance('{"importance": 7}') == 7
    assert parse_importance("8") == 8
    assert parse_importance("I think it is quite important") == ON_UNPARSABLE
    assert parse_importance('{"importance": 70}') == ON_UNPARSABLE


class BrokenModel:
    """Stands for a model whose call fails (a real failure mode: a prompt over n_ctx)."""

    def chat(self, messages, **kwargs):
        raise ModelError("LLM request failed: context overflow")


def test_a_failed_call_never_loses_the_memory(tmp_path: Path, embedder) -> None:
    store = Store(tmp_path / "fayd.db")
    memory = Memory(store, embedder, ImportanceScorer(BrokenModel()))
    node = memory.remember("The doctor's appointment is on Friday", "ann", "event", "user")
    assert node["importance"] == ON_FAILURE
    assert memory.search("appointment", "ann")[0]["node_id"] == node["node_id"]
    assert ImportanceScorer(None).score("anything") == ON_FAILURE  # no model installed
    store.close()
