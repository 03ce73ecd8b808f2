"""fayd's MCP server seen by an independent client: the MCP Inspector CLI from npm
(installed by ./install.sh into tests/.npm), over stdio with a real `fayd mcp` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

INSPECTOR = Path(__file__).parent / ".npm" / "node_modules" / ".bin" / "mcp-inspector"
pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists(), reason="MCP Inspector not installed in tests/.npm (./install.sh)"
)


def inspect(state: Path, *args: str) -> dict:
    # MCP clients start servers with a minimal environment: pass the state folder with -e.
    argv = [str(INSPECTOR), "--cli", "-e", f"FAYD_PATHS_STATE_DIR={state}"]
    argv += [sys.executable, "-m", "fayd", "mcp", "--no-llm", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tools_list_remember_and_search(tmp_path: Path) -> None:
    tools = inspect(tmp_path, "--method", "tools/list")["tools"]
    assert {t["name"] for t in tools} == {
        "memory_remember",
        "memory_search",
        "memory_get_recent",
        "memory_get_active_rules",
        "memory_get_reflections",
        "memory_get_user_profile",
        "memory_get_schema",
    }
    remembered = inspect(
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_remember",
        "--tool-arg",
        "content=Grandma's doctor is Dr. Weber, every second Tuesday",
        "--tool-arg",
        "username=grandma",
    )
    result = json.loads(remembered["content"][0]["text"])
    assert result["ok"] is True and "source:mcp" in result["tags"]
    found = inspect(
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_search",
        "--tool-arg",
        "query=who is the doctor?",
        "--tool-arg",
        "username=grandma",
    )
    nodes = json.loads(found["content"][0]["text"])
    assert nodes[0]["content"] == "Grandma's doctor is Dr. Weber, every second Tuesday"
    assert nodes[0]["node_id"] == result["node_id"]
