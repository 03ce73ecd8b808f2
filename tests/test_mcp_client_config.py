"""``[[mcp.servers]]`` tables as TOML gives them: good ones parsed, bad ones named."""

from __future__ import annotations

import tomllib

import pytest

from fayd.errors import ConfigError
from fayd.mcp.client_config import McpServerConfig, parse_servers

GOOD = """
[[mcp.servers]]
name = "time"
command = ["python3", "-m", "mcp_server_time"]
env = { TZ = "Europe/London" }
allow = ["get_current_time"]

[[mcp.servers]]
name = "garden"
url = "http://192.168.1.30:8000/mcp"
token = "garden-token-0123456789"
allow = ["*"]
trusted = true
timeout_s = 5
max_result_chars = 2000
"""


def test_the_documented_example_parses() -> None:
    time_server, garden = parse_servers(tomllib.loads(GOOD)["mcp"]["servers"])
    assert time_server == McpServerConfig(
        name="time",
        command=("python3", "-m", "mcp_server_time"),
        env={"TZ": "Europe/London"},
        allow=("get_current_time",),
    )
    assert time_server.transport == "stdio" and not time_server.trusted
    assert time_server.allows("get_current_time") and not time_server.allows("convert_time")
    assert garden.transport == "http" and garden.trusted and garden.allows("anything")
    assert garden.timeout_s == 5.0 and garden.max_result_chars == 2000
    assert "garden-token" not in repr(garden)  # the token never reaches a log line


def test_allow_is_empty_by_default() -> None:
    (server,) = parse_servers([{"name": "x", "command": ["x"]}])
    assert server.allow == () and not server.allows("anything")


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"command": ["x"]}, "mcp.servers[0].name"),
        ({"name": "Time Server", "command": ["x"]}, "mcp.servers[0].name"),
        ({"name": "a__b", "command": ["x"]}, "mcp.servers[0].name"),
        ({"name": "x"}, "exactly one of command"),
        ({"name": "x", "command": ["x"], "url": "http://h/mcp"}, "exactly one of command"),
        ({"name": "x", "command": "python3 -m x"}, "mcp.servers[0].command"),
        ({"name": "x", "command": []}, "mcp.servers[0].command"),
        ({"name": "x", "url": "garden.local"}, "mcp.servers[0].url"),
        ({"name": "x", "url": "ftp://h/mcp"}, "mcp.servers[0].url"),
        ({"name": "x", "url": "http://u:p@h/mcp"}, "credentials"),
        ({"name": "x", "command": ["x"], "token": "t"}, "mcp.servers[0].token"),
        ({"name": "x", "url": "http://h/mcp", "env": {"A": "b"}}, "mcp.servers[0].env"),
        ({"name": "x", "url": "http://h/mcp", "token": "two words"}, "mcp.servers[0].token"),
        ({"name": "x", "command": ["x"], "env": {"A": 1}}, "mcp.servers[0].env"),
        ({"name": "x", "command": ["x"], "allow": "get_time"}, "mcp.servers[0].allow"),
        ({"name": "x", "command": ["x"], "trusted": "yes"}, "mcp.servers[0].trusted"),
        ({"name": "x", "command": ["x"], "timeout_s": 0}, "mcp.servers[0].timeout_s"),
        ({"name": "x", "command": ["x"], "timeout_s": True}, "mcp.servers[0].timeout_s"),
        ({"name": "x", "command": ["x"], "max_result_chars": 10}, "max_result_chars"),
        ({"name": "x", "command": ["x"], "backoff_s": 9, "backoff_max_s": 2}, "backoff_max_s"),
        ({"name": "x", "command": ["x"], "timeout": 5}, "unknown key timeout"),
        ("x", "mcp.servers[0]: expected a table"),
    ],
)
def test_a_bad_table_is_refused_naming_the_key(table: object, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse_servers([table])


def test_names_are_unique_and_servers_an_array() -> None:
    twice = [{"name": "x", "command": ["a"]}, {"name": "x", "command": ["b"]}]
    with pytest.raises(ConfigError, match=r"mcp.servers\[1\].name: 'x' is used twice"):
        parse_servers(twice)
    with pytest.raises(ConfigError, match="array of tables"):
        parse_servers({"name": "x"})
