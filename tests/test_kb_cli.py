"""``fayd kb`` as a real subprocess on a temporary state folder: what a person types, what
they read, and the exit code (README, "Knowledge base")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[1]


def fayd_kb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    env.pop("FAYD_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "fayd", "kb", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_add_list_search_remove(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bins.md").write_text(
        "# Bin days\n\nThe green recycling bin goes out on Tuesday night.\n", encoding="utf-8"
    )
    (docs / "wifi.txt").write_text("The wifi password is on the back of the router.\n")
    added = fayd_kb(tmp_path, "add", str(docs))
    assert added.returncode == 0, added.stderr
    assert "bins.md: added, 1 chunk" in added.stdout and "wifi.txt: added" in added.stdout
    assert (tmp_path / "state" / "fayd" / "kb.sqlite").is_file()

    again = fayd_kb(tmp_path, "add", str(docs / "bins.md"))
    assert again.stdout.strip() == "bins.md: unchanged (1 chunk), nothing to do"

    listed = fayd_kb(tmp_path, "list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["sources"]] == ["bins.md", "wifi.txt"]

    found = fayd_kb(tmp_path, "search", "which night do I put the recycling out", "-n", "1")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("1. bins.md #0") and "Tuesday night" in found.stdout
    as_json = json.loads(fayd_kb(tmp_path, "search", "router password", "--json").stdout)
    assert as_json["results"][0]["source"] == "wifi.txt"

    removed = fayd_kb(tmp_path, "remove", "bins.md")
    assert removed.returncode == 0 and removed.stdout.startswith("removed bins.md (1 chunk")
    listed = fayd_kb(tmp_path, "list")
    assert "bins.md" not in listed.stdout and "wifi.txt" in listed.stdout


def test_mistakes_are_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n% truncated")
    (tmp_path / "ok.txt").write_text("The spare key is under the third flowerpot.\n")
    cases = [
        (("add", "missing.txt"), "fayd: " + str(tmp_path / "missing.txt") + ": no such file"),
        (
            ("add", "broken.pdf"),
            "fayd: " + str(tmp_path / "broken.pdf") + ": is not a readable PDF",
        ),
        (("search", "  "), "fayd: the query is empty"),
        (("remove", "nothing.txt"), "fayd: no source 'nothing.txt'"),
    ]
    for args, line in cases:
        done = fayd_kb(tmp_path, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert done.stderr.startswith(line), (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    # one bad file among good ones: the good one is added, the bad one named, exit 1
    mixed = fayd_kb(tmp_path, "add", "ok.txt", "broken.pdf")
    assert mixed.returncode == 1 and "ok.txt: added" in mixed.stdout
    assert "broken.pdf" in mixed.stderr
