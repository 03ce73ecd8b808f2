"""The MCP client against real MCP servers: `fayd mcp` itself and mcp-server-time (PyPI)
over stdio, and a token-guarded streamable HTTP server on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest

from fayd.mcp.client import McpTools
from fayd.mcp.client_config import parse_server
from tests.mcp_client_helpers import BAD_SERVER, ENV, children, state, until

TOKEN = "a-test-token-of-32-characters-xx"


@pytest.mark.models
async def test_fayd_mcp_over_stdio_list_remember_and_search(tmp_path: Path) -> None:
    before = children()
    memory = parse_server(
        {
            "name": "memory",
            "command": [sys.executable, "-m", "fayd", "mcp", "--no-llm", "--db", "m.db"],
            "env": {**ENV, "XDG_STATE_HOME": str(tmp_path)},
            "allow": ["memory_search", "memory_remember"],
            "timeout_s": 30,
        }
    )
    async with McpTools([memory]) as tools:
        await tools.wait_started(60)
        assert state(tools, "memory")["state"] == "up", tools.status()
        described = {d["name"]: d for d in tools.describe()}
        assert set(described) == {"memory__memory_search", "memory__memory_remember"}
        schema = described["memory__memory_remember"]["schema"]
        assert schema["required"] == ["content"] and "username" in schema["properties"]
        assert described["memory__memory_search"]["trusted"] is False

        saved = await tools.call(
            "memory__memory_remember",
            {"content": "Grandma's cat is called Biscuit", "username": "grandma"},
        )
        assert saved.ok and not saved.trusted, saved
        assert json.loads(saved.text)["ok"] is True
        found = await tools.call("memory__memory_search", {"query": "cat", "username": "grandma"})
        assert found.ok, found
        assert json.loads(found.text)[0]["content"] == "Grandma's cat is called Biscuit"
        # Fay's other five tools are on the server, not on the allow-list.
        recent = await tools.call("memory__memory_get_recent", {"username": "grandma"})
        assert recent.error == "not_allowed"
        assert children() - before  # the server really is our child ...
    assert children() == before  # ... and is gone after stop


async def test_time_server_from_pypi_with_an_allow_list() -> None:
    time_server = parse_server(
        {
            "name": "time",
            "command": [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"],
            "allow": ["get_current_time"],
            "trusted": True,
        }
    )
    async with McpTools([time_server]) as tools:
        await tools.wait_started(30)
        assert [d["name"] for d in tools.describe()] == ["time__get_current_time"]
        assert state(tools, "time")["tools"] == ["get_current_time"]

        london = await tools.call("time__get_current_time", {"timezone": "Europe/London"})
        assert london.ok and london.trusted, london
        answer = json.loads(london.text)
        assert answer["timezone"] == "Europe/London" and answer["day_of_week"]

        # convert_time exists on the server but is not allowed: neither offered nor run.
        refused = await tools.call(
            "time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/London"},
        )
        assert refused.error == "not_allowed" and not refused.text
        assert (await tools.call("time__no_such_tool", {})).error == "unknown_tool"
        assert (await tools.call("weather__today", {})).error == "unknown_tool"
        wrong = await tools.call("time__get_current_time", {"zone": "Europe/London"})
        assert wrong.error == "bad_arguments" and "timezone" in wrong.detail
        bad_zone = await tools.call("time__get_current_time", {"timezone": "Mars/Olympus"})
        assert bad_zone.error == "tool_failed" and "Mars/Olympus" in bad_zone.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _http_server(port: int) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *BAD_SERVER, "--http", str(port), "--token", TOKEN, env={**ENV, "PATH": "/usr/bin"}
    )
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return process
        except OSError:
            await asyncio.sleep(0.05)
    process.kill()
    raise AssertionError("the HTTP test server did not start")


async def test_streamable_http_with_a_token_and_refused_without() -> None:
    port = _free_port()
    process = await _http_server(port)
    url = f"http://127.0.0.1:{port}/mcp"
    fast = {"allow": ["echo"], "backoff_s": 0.2, "backoff_max_s": 1, "connect_timeout_s": 10}
    try:
        servers = [
            parse_server({"name": "lan", "url": url, "token": TOKEN, **fast}),
            parse_server({"name": "wrong", "url": url, "token": "x" * 32, **fast}),
            parse_server({"name": "none", "url": url, **fast}),
        ]
        async with McpTools(servers) as tools:
            await tools.wait_started(30)
            assert state(tools, "lan")["state"] == "up", tools.status()
            echoed = await tools.call("lan__echo", {"text": "over HTTP"})
            assert echoed.ok and echoed.text == "over HTTP"

            wrong, none = state(tools, "wrong"), state(tools, "none")
            assert wrong["state"] == "down" and "401" in wrong["reason"]
            assert "wrong or missing token" in wrong["reason"]
            assert none["state"] == "down" and "no token configured" in none["reason"]
            assert [d["name"] for d in tools.describe()] == ["lan__echo"]
            refused = await tools.call("wrong__echo", {"text": "hi"})
            assert refused.error == "unknown_tool"  # never listed: nothing is known of it
            assert TOKEN not in json.dumps(tools.status())
            # It keeps retrying with back-off, logged once: still down, restarts counted.
            await until(lambda: state(tools, "wrong")["restarts"] >= 2)
    finally:
        process.terminate()
        await process.wait()
