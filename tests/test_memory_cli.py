"""``fayd memory`` as a real subprocess on a temporary state folder, no daemon running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.models


def fayd_memory(tmp_path: Path, *args: str, stdin: str | None = None):
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("FAYD_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "fayd", "memory", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_add_search_batch_stats(tmp_path: Path) -> None:
    lines = [
        {
            "content": "Ann's granddaughter Lily visits every Sunday",
            "username": "ann",
            "datetime": "2026/04/26 10:00:00",
            "tags": ["domain:companion"],
            "importance": 6,
        },
        {
            "content": "Ann takes her pills at 8 am",
            "username": "ann",
            "kind": "rule",
            "persistent": True,
            "importance": 9,
            "source": "caregiver",
        },
        {"content": "Bob likes jazz", "username": "bob", "kind": "preference", "importance": 4},
    ]
    added = fayd_memory(
        tmp_path, "add", "--jsonl", "-", "--no-llm", stdin="\n".join(json.dumps(x) for x in lines)
    )
    assert added.returncode == 0, added.stderr
    acks = [json.loads(line) for line in added.stdout.splitlines()]
    assert [a["ok"] for a in acks] == [True] * 3
    assert acks[0]["tags"] == ["domain:companion", "kind:observation", "source:cli"]
    assert acks[1]["tags"] == ["kind:rule", "persistent:true", "source:caregiver"]

    found = fayd_memory(
        tmp_path, "search", "family visits", "--user", "ann", "-n", "1", "--json", "--stateless"
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["content"].startswith("Ann's granddaughter")
    rules = fayd_memory(
        tmp_path,
        "search",
        "anything",
        "--user",
        "ann",
        "--json",
        "--tags-all",
        "kind:rule",
        "persistent:true",
    )
    assert [h["importance"] for h in json.loads(rules.stdout)] == [9]

    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": 1, "query": "music", "user": "bob"}\n'
        '{"id": 2, "query": "medication", "user": "ann", "n": 1}\n'
    )
    batch = fayd_memory(tmp_path, "search", "--queries", str(queries), "--json")
    out = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [o["id"] for o in out] == [1, 2]
    assert out[0]["results"][0]["content"] == "Bob likes jazz"
    assert out[1]["results"][0]["content"] == "Ann takes her pills at 8 am"

    stats = json.loads(fayd_memory(tmp_path, "stats").stdout)
    assert stats["nodes"] == 3 and stats["users"]["ann"]["nodes"] == 2


def test_a_bad_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    text = '{"content": "fine", "importance": 3}\n{"content": "", "importance": 3}\n'
    bad = fayd_memory(tmp_path, "add", "--jsonl", "-", "--no-llm", stdin=text)
    assert bad.returncode == 1 and "-:2: content must be a non-empty string" in bad.stderr
    unknown = fayd_memory(tmp_path, "add", "--jsonl", "-", stdin='{"content": "x", "colour": 1}')
    assert unknown.returncode == 1 and "unknown keys ['colour']" in unknown.stderr
    assert json.loads(fayd_memory(tmp_path, "stats").stdout)["nodes"] == 0
