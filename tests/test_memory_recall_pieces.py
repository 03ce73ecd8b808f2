"""The pieces of issue 27's retrieval: days named in a turn become tags, repeats leave the
results, a speaker's name does not drown BM25, and (measured, off by default) neighbour
expansion brings the other turn of a two-turn fact. Real MiniLM, real SQLite."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest

from fayd.agent.clock import days
from fayd.memory import Memory, MemoryConfig, NewNode, dates, speakers
from fayd.store import Store

SAID = "2023/05/08 14:00:00"  # a Monday


def _turns(lines: list[str], when: str = SAID) -> list[NewNode]:
    return [NewNode(t, "User", "conversation", datetime=when) for t in lines]


def test_days_named_in_english_and_chinese_resolve_against_the_turn() -> None:
    said = datetime(2023, 5, 8, 14)
    assert days.named("I went hiking last Saturday", said) == [date(2023, 5, 6)]
    assert days.named("yesterday we swam", said) == [date(2023, 5, 7)]
    assert days.named("two weeks ago I adopted a cat", said) == [date(2023, 4, 24)]
    assert days.named("上周六我们去爬山了", said) == [date(2023, 5, 6)]
    assert days.named("前天去医院", said) == [date(2023, 5, 6)]
    assert days.named("On 14 March I ran", said) == [date(2023, 3, 14)]
    # No day, a bare clock time, hostile text: nothing, and no error.
    for text in ("at eight", "the 5th", "🙂" * 50, "x" * 10_000, "9" * 300, "我用Python写了v2"):
        assert days.named(text, said) == []
    assert dates.words("when:2023-05-06") == "6 May 2023 2023年5月6日"


@pytest.mark.models
def test_a_relative_day_becomes_a_searchable_tag(tmp_path: Path, embedder) -> None:
    memory = Memory(Store(tmp_path / "m.db"), embedder, days_named=days.named)
    node = memory.add(_turns(["Caroline: I went to a support group last Saturday."]))[0]
    assert "when:2023-05-06" in node["tags"]
    assert [n["node_id"] for n in memory.get_recent(filter_tags_all=["when:2023-05-06"])] == [
        node["node_id"]
    ]
    # The day's words are in the lexical row: "6 May" finds the turn by BM25.
    found = memory.store.call(memory.lexical_search, "6 May 2023", "User", 5)
    assert [i for i, _ in found] == [node["node_id"]]
    memory.store.close()


@pytest.mark.models
def test_repeats_and_a_speakers_name_do_not_crowd_out_the_evidence(
    tmp_path: Path, embedder
) -> None:
    filler = [f"Callum: {t}" for t in ("Classic.", "Fair enough.", "Makes sense.", "No way!")]
    fact = "Callum: I still don't have a smartphone, my old flip phone does me fine."
    lines = filler * 15 + [fact] + [f"Anna: line {i} about the garden" for i in range(40)]
    memory = Memory(Store(tmp_path / "m.db"), embedder)
    added = memory.add(_turns(lines))
    fact_id = added[60]["node_id"]
    hits = memory.search("Would Callum like a new phone?", n=5)
    contents = [h["content"] for h in hits]
    assert len(set(contents)) == len(contents)  # each filler line once at most
    assert fact_id in [h["node_id"] for h in hits]
    # Without leaving repeats out, copies of the filler lines fill the results.
    plain = Memory(memory.store, embedder, cfg=replace(MemoryConfig(), distinct=False))
    again = [h["content"] for h in plain.search("Would Callum like a new phone?", n=5)]
    assert len(set(again)) < len(again)
    memory.store.close()


@pytest.mark.models
def test_neighbour_expansion_brings_the_other_turn_of_a_two_turn_fact(
    tmp_path: Path, embedder
) -> None:
    # Small talk that shares the question's words, so the answer (which shares none) is not
    # the runner-up on its own.
    chat = [f"Ann: the heart of the town was busy, stall number {i}" for i in range(30)]
    asked = "Ann: What did the cardiologist say about my heart on Monday?"
    answer = "Ben: Less of it in your food, a stroll every day, and back again in spring."
    lines = [*chat[:15], asked, answer, *chat[15:]]
    store = Store(tmp_path / "m.db")
    added = Memory(store, embedder).add(_turns(lines))
    answer_id = added[16]["node_id"]
    query = "What did the cardiologist say about the heart?"
    on = Memory(store, embedder, cfg=replace(MemoryConfig(), neighbour_weight=0.8))
    off = Memory(store, embedder, cfg=replace(MemoryConfig(), neighbour_weight=0.0))
    top_off = [h["node_id"] for h in off.search(query, n=3)]
    top_on = [h["node_id"] for h in on.search(query, n=3)]
    assert top_on[0] == top_off[0] == added[15]["node_id"]  # the question turn
    assert answer_id in top_on  # came in through its neighbour...
    assert answer_id not in top_off  # ...and was not there on its own score
    store.close()


@pytest.mark.models
def test_a_second_hop_finds_the_turn_linked_by_a_name(tmp_path: Path, embedder) -> None:
    chat = [f"Hannah: work was hectic again today, meeting number {i}" for i in range(30)]
    moved = "Hannah: Ellie has packed up and gone to Brighton, she found a flat by the station."
    job = "Hannah: Ellie is a journalist now, can you believe it?"
    store = Store(tmp_path / "m.db")
    added = Memory(store, embedder).add(_turns([*chat[:10], job, *chat[10:], moved]))
    job_id = added[10]["node_id"]
    query = "What work does the person who moved to Brighton do?"
    on = Memory(store, embedder, cfg=replace(MemoryConfig(), hop_weight=0.1))
    off = Memory(store, embedder, cfg=replace(MemoryConfig(), hop_weight=0.0))
    assert job_id not in [h["node_id"] for h in off.search(query, n=3)]
    top_on = [h["node_id"] for h in on.search(query, n=3)]
    assert top_on[0] == added[-1]["node_id"] and job_id in top_on  # via "Ellie"
    store.close()


@pytest.mark.models
def test_turns_are_embedded_without_the_speaker_and_a_named_speaker_is_lifted(
    tmp_path: Path, embedder
) -> None:
    store = Store(tmp_path / "m.db")
    memory = Memory(store, embedder)
    said = memory.add(_turns(["Callum: I went to three gigs this month.", "王丽：我对海鲜过敏。"]))
    assert "speaker:Callum" in said[0]["tags"] and "speaker:王丽" in said[1]["tags"]
    index = memory._index("User")
    bare = embedder.embed(["I went to three gigs this month."])[0]
    assert float(index.vecs[index.pos[said[0]["node_id"]]] @ bare) > 0.999
    named = speakers.rows_named(index, "王丽对什么过敏？").tolist()
    assert named == [index.pos[said[1]["node_id"]]]
    assert speakers.rows_named(index, "Did Callumx go?").size == 0
    store.close()
