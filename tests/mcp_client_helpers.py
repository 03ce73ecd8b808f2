"""Shared by the MCP client's tests: server commands, child processes, polling."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fayd.mcp.client import McpTools
from fayd.mcp.client_config import McpServerConfig, parse_server

REPO = str(Path(__file__).resolve().parents[1])
#: The worktree's fayd, whatever directory a server is started in.
ENV = {"PYTHONPATH": REPO}
BAD_SERVER = [sys.executable, "-m", "fayd.testing.bad_mcp_server"]


def bad_server(**overrides: Any) -> McpServerConfig:
    """The misbehaving server over stdio, every tool allowed, short timeouts."""
    table = {
        "name": "bad",
        "command": BAD_SERVER,
        "env": ENV,
        "allow": ["*"],
        "timeout_s": 2,
        "connect_timeout_s": 20,
        "backoff_s": 0.2,
        "backoff_max_s": 1,
        "max_result_chars": 1000,
    }
    return parse_server({**table, **overrides})


def children() -> set[int]:
    """Live child processes of this test process (from /proc; zombies count as gone)."""
    found = set()
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if ppid == me and state != "Z":
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


async def until(check: Callable[[], bool], timeout_s: float = 20) -> None:
    """Poll ``check`` until true; fail after ``timeout_s`` (every wait bounded)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


def state(tools: McpTools, name: str) -> dict[str, Any]:
    return next(s for s in tools.status() if s["name"] == name)
