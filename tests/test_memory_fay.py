"""Fay's memory folder in and out: the seed's example nodes (事例 A–G) round-trip, a large
generated file, malformed files rejected with nothing written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fayd.memory import BadInput, Memory
from fayd.memory.fay_io import export_fay, import_fay
from fayd.store import Store

pytestmark = pytest.mark.models


def _n(node_id, node_type, content, importance, dt, created, last, pointer, tags):
    return {
        "node_id": node_id,
        "node_type": node_type,
        "content": content,
        "importance": importance,
        "datetime": dt,
        "created": created,
        "last_retrieved": last,
        "pointer_id": pointer,
        "tags": tags,
    }


# Seed 000, "节点完整事例" A–G, verbatim.
EXAMPLES = [
    _n(
        142,
        "conversation",
        "主人：今天股市怎么样？\nFay：A股震荡走低，沪指跌 0.8%。",
        4,
        "2026/04/27 10:23:15",
        142,
        142,
        None,
        [],
    ),
    _n(
        156,
        "observation",
        "上午 10:30 AAPL 突破日内高点 187.4，breakout 策略买入信号触发",
        7,
        "2026/04/27 10:30:42",
        156,
        156,
        None,
        [
            "domain:quant",
            "kind:event",
            "session:2026-04-27-am",
            "source:claude_code",
            "strategy:breakout",
            "symbol:AAPL",
        ],
    ),
    _n(
        88,
        "observation",
        "每小时整点检查所有持仓策略是否有未触发的止损单",
        9,
        "2026/04/26 09:00:00",
        88,
        130,
        None,
        ["domain:quant", "kind:rule", "persistent:true", "schedule:hourly", "source:user"],
    ),
    _n(
        31,
        "observation",
        "用户希望晚上 22:00 之后不要主动发起对话",
        8,
        "2026/04/15 22:13:05",
        31,
        105,
        None,
        ["domain:life_assistant", "kind:preference", "persistent:true", "source:user"],
    ),
    _n(
        173,
        "observation",
        "买入信号在 AAPL 涨停封板后仍触发，导致 0 成交但占用了风控额度",
        8,
        "2026/04/27 14:02:11",
        173,
        173,
        None,
        [
            "domain:quant",
            "kind:error",
            "session:2026-04-27-pm",
            "source:claude_code",
            "strategy:breakout",
            "symbol:AAPL",
        ],
    ),
    _n(
        412,
        "observation",
        "老人晨起血压 158/95，比上周平均高 12 个点",
        7,
        "2026/04/27 07:15:00",
        412,
        412,
        None,
        ["domain:homecare", "kind:event", "source:elderly_monitor", "date:2026-04-27"],
    ),
    _n(
        201,
        "reflection",
        "用户在 AAPL 上的 breakout 策略本周 3 次假突破亏损，可能需要加 ATR 滤波或限制涨停后入场",
        8,
        "2026/04/27 23:00:14",
        201,
        201,
        [156, 162, 173],
        [
            "domain:quant",
            "kind:insight",
            "source:fay_reflection",
            "strategy:breakout",
            "symbol:AAPL",
        ],
    ),
]


def _fay_folder(root: Path, nodes: list, portrait: str = "") -> Path:
    stream = root / "memory_stream"
    stream.mkdir(parents=True)
    (stream / "nodes.json").write_text(json.dumps(nodes, ensure_ascii=False), "utf-8")
    (stream / "embeddings.json").write_text(json.dumps({n["content"]: [0.1] * 8 for n in nodes}))
    (root / "meta.json").write_text('{"id": "x"}')
    if portrait:
        with sqlite3.connect(root / "user_profiles.db") as db:
            db.execute(
                "CREATE TABLE T_Member (id INTEGER PRIMARY KEY AUTOINCREMENT, username TEXT"
                " NOT NULL UNIQUE, extra_info TEXT DEFAULT '', user_portrait TEXT"
                " DEFAULT '')"
            )
            db.execute(
                "INSERT INTO T_Member (username, user_portrait) VALUES ('trader', ?)", [portrait]
            )
        db.close()
    return root


@pytest.fixture
def memory(tmp_path: Path, embedder):
    store = Store(tmp_path / "fayd.db")
    yield Memory(store, embedder)
    store.close()


def test_examples_a_to_g_round_trip(memory: Memory, tmp_path: Path) -> None:
    src = _fay_folder(tmp_path / "fay", EXAMPLES, portrait="短线交易者，关注 AAPL")
    report = import_fay(memory, src, "trader", progress=lambda _: None)
    assert report == {"users": {"trader": 7}, "dangling_pointers": 1, "profiles": 1}
    # The imported 8-dimensional vectors were not used: everything has MiniLM vectors.
    assert memory.stats()["nodes_without_current_embedding"] == 0
    hits = memory.search("blood pressure of the elderly", "trader", n=1)
    assert hits[0]["content"].startswith("老人晨起血压")
    assert [r["content"] for r in memory.get_active_rules("trader")] == [EXAMPLES[2]["content"]]
    refl = memory.get_reflections("trader")
    assert len(refl) == 1 and len(refl[0]["pointer_id"]) == 2  # 162 was not in the file

    export_fay(memory, tmp_path / "out", "trader", progress=lambda _: None)
    back = json.loads((tmp_path / "out/memory_stream/nodes.json").read_text("utf-8"))
    # Tags come back sorted, as Fay's normalisation writes them (事例 F lists date: last).
    expected = [{**n, "tags": sorted(n["tags"])} for n in EXAMPLES]
    expected[6]["pointer_id"] = [156, 173]  # the dangling id is gone, the rest map back
    assert sorted(back, key=lambda n: n["node_id"]) == sorted(expected, key=lambda n: n["node_id"])
    vectors = json.loads((tmp_path / "out/memory_stream/embeddings.json").read_text("utf-8"))
    assert set(vectors) == {n["content"] for n in EXAMPLES}
    assert {len(v) for v in vectors.values()} == {384}
    assert json.loads((tmp_path / "out/meta.json").read_text())["id"]
    with sqlite3.connect(tmp_path / "out/user_profiles.db") as db:
        rows = db.execute("SELECT username, user_portrait FROM T_Member").fetchall()
    db.close()
    assert rows == [("trader", "短线交易者，关注 AAPL")]


def test_large_generated_file_per_user_folders(memory: Memory, tmp_path: Path) -> None:
    topics = ["tea", "garden", "football", "doctor", "music", "weather", "cooking", "travel"]
    for user in ("ann", "bob"):
        nodes = [
            _n(
                i,
                "observation",
                f"{user} talked about {topics[i % 8]} on day {i}",
                i % 10 + 1,
                "" if i % 7 == 0 else f"2025/0{i % 9 + 1}/1{i % 9} 10:00:00",
                i,
                i,
                None,
                [f"kind:{'fact' if i % 2 else 'event'}"],
            )
            for i in range(1500)
        ]
        _fay_folder(tmp_path / "fay" / user, nodes)
    report = import_fay(memory, tmp_path / "fay", progress=lambda _: None)
    assert report["users"] == {"ann": 1500, "bob": 1500}
    hits = memory.search("gardening", "bob", n=5, filter_tags_all=["kind:fact"])
    assert all("bob talked about garden" in h["content"] and "kind:fact" in h["tags"] for h in hits)
    export_fay(memory, tmp_path / "out", progress=lambda _: None)
    back = json.loads((tmp_path / "out/ann/memory_stream/nodes.json").read_text("utf-8"))
    assert len(back) == 1500 and back[7]["datetime"] == "" and back[8]["node_id"] == 8


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{not json", "not a readable JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ('[{"node_id": 1}]', "missing"),
        (json.dumps([{**EXAMPLES[0], "node_type": "dream"}]), "node_type"),
        (json.dumps([EXAMPLES[1], EXAMPLES[1]]), "appears twice"),
        (json.dumps([EXAMPLES[1], {**EXAMPLES[2], "content": ""}]), "node #1: content"),
    ],
)
def test_malformed_nodes_json_writes_nothing(
    memory: Memory, tmp_path: Path, content: str, error: str
) -> None:
    stream = tmp_path / "bad" / "memory_stream"
    stream.mkdir(parents=True)
    (stream / "nodes.json").write_text(content, "utf-8")
    with pytest.raises(BadInput, match=error):
        import_fay(memory, tmp_path / "bad", progress=lambda _: None)
    assert memory.stats()["nodes"] == 0
