"""One household MCP server as fayd's agent reaches it: ``[[mcp.servers]]`` in fayd.toml.

    [[mcp.servers]]
    name = "time"                                  # the tools' prefix: time__get_current_time
    command = ["python3", "-m", "mcp_server_time"] # stdio: fayd starts it ...
    env = { TZ = "Europe/London" }                 # ... with only these (and PATH, HOME …)
    # url = "http://192.168.1.20:8000/mcp"         # or streamable HTTP on the LAN ...
    # token = "…"                                  # ... sent as Authorization: Bearer
    allow = ["get_current_time"]                   # the tools the agent may use ("*": all)
    trusted = false                                # may its tools write memory directly?

An empty ``allow`` exposes nothing: a server is a program the household installed, and a
new version of it can add tools (delete_all_files) that nobody looked at. Naming each tool
(or writing ``"*"`` on purpose) keeps the agent's reach a decision, not a side effect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fayd.errors import ConfigError

#: A server name becomes the first part of each tool name (``<name>__<tool>``), which an
#: OpenAI-style model accepts only as ``[A-Za-z0-9_-]{1,64}``: short, and without ``__``
#: so the split stays readable.
_SERVER_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,23}$")
ALLOW_ALL = "*"


@dataclass(frozen=True)
class McpServerConfig:
    """An external MCP server; exactly one of ``command`` (stdio) and ``url`` (HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    #: Extra environment for a stdio server, over a minimal safe one (PATH, HOME, USER…):
    #: fayd's own environment (its tokens) is not passed on.
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    #: Bearer token for an HTTP server; never logged.
    token: str = field(default="", repr=False)
    allow: tuple[str, ...] = ()
    #: Untrusted tools' memory writes go through the quarantine (the agent enforces it).
    trusted: bool = False
    #: Seconds one tool call may take before it is answered "timed out".
    timeout_s: float = 20.0
    #: Characters of a result the model is shown; the rest is cut (and it says so).
    max_result_chars: int = 4000
    #: A stdio server's longest message in MiB: a longer one is dropped as it arrives and
    #: the server restarted, so one answer cannot take the box's memory (HTTP: the SDK
    #: bounds a streamed event at 1 MiB). 32: a 10 MB text answer arrives twice in one
    #: message from SDK servers (as text and as structured content).
    max_message_mb: int = 32
    #: Seconds to start (stdio) or reach (HTTP) the server and list its tools.
    connect_timeout_s: float = 30.0
    #: Restart delay after a fault, doubling per failed attempt up to ``backoff_max_s``.
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    #: Seconds between health checks of an idle server (a tools/list it must answer).
    health_every_s: float = 30.0

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def allows(self, tool: str) -> bool:
        return ALLOW_ALL in self.allow or tool in self.allow


_SECONDS = ("timeout_s", "connect_timeout_s", "backoff_s", "backoff_max_s", "health_every_s")
_KEYS = (
    "name",
    "command",
    "env",
    "url",
    "token",
    "allow",
    "trusted",
    "max_result_chars",
    "max_message_mb",
    *_SECONDS,
)


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: expected a list of non-empty strings, got {value!r}")
    return tuple(value)


def _env(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and "=" not in k and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f'{where}: expected a table of NAME = "value" strings, got {value!r}')
    return dict(value)


def _positive(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{where}: expected a number of seconds above 0, got {value!r}")
    return float(value)


def _url(where: str, value: Any) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: not a URL like http://192.168.1.20:8000/mcp: {value!r}")
    if parts.username or parts.password:
        raise ConfigError(f"{where}: put the credentials in token, not in the URL")
    return value


def parse_server(table: Any, where: str = "mcp.servers[0]") -> McpServerConfig:
    """One ``[[mcp.servers]]`` table, as TOML gives it; ConfigError names the bad key."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, got {table!r}")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]} (known: {', '.join(_KEYS)})")
    name = table.get("name")
    if not isinstance(name, str) or not _SERVER_NAME.match(name):
        raise ConfigError(
            f"{where}.name: expected 1-24 lower-case letters, digits, - or single _, got {name!r}"
        )
    values: dict[str, Any] = {"name": name}
    if ("command" in table) == ("url" in table):
        raise ConfigError(f"{where}: give exactly one of command (stdio) or url (HTTP)")
    if "command" in table:
        values["command"] = _strings(f"{where}.command", table["command"])
        if not values["command"]:
            raise ConfigError(f'{where}.command: give the program to run, e.g. ["python3", …]')
        if "token" in table:
            raise ConfigError(f"{where}.token: only an HTTP server (url) takes a token")
    else:
        values["url"] = _url(f"{where}.url", table["url"])
        if "env" in table:
            raise ConfigError(f"{where}.env: only a stdio server (command) takes env")
    if "env" in table:
        values["env"] = _env(f"{where}.env", table["env"])
    if "token" in table:
        token = table["token"]
        if not isinstance(token, str) or not token.isprintable() or " " in token:
            raise ConfigError(f"{where}.token: expected one printable word")
        values["token"] = token
    if "allow" in table:
        values["allow"] = _strings(f"{where}.allow", table["allow"])
    if "trusted" in table:
        if not isinstance(table["trusted"], bool):
            raise ConfigError(f"{where}.trusted: expected true or false, got {table['trusted']!r}")
        values["trusted"] = table["trusted"]
    if "max_result_chars" in table:
        chars = table["max_result_chars"]
        if isinstance(chars, bool) or not isinstance(chars, int) or not 100 <= chars <= 1_000_000:
            raise ConfigError(f"{where}.max_result_chars: expected 100 to 1000000, got {chars!r}")
        values["max_result_chars"] = chars
    if "max_message_mb" in table:
        mb = table["max_message_mb"]
        if isinstance(mb, bool) or not isinstance(mb, int) or not 1 <= mb <= 256:
            raise ConfigError(f"{where}.max_message_mb: expected 1 to 256, got {mb!r}")
        values["max_message_mb"] = mb
    for key in _SECONDS:
        if key in table:
            values[key] = _positive(f"{where}.{key}", table[key])
    config = McpServerConfig(**values)
    if config.backoff_max_s < config.backoff_s:
        raise ConfigError(f"{where}.backoff_max_s: must not be below backoff_s")
    return config


def parse_servers(tables: Any, where: str = "mcp.servers") -> tuple[McpServerConfig, ...]:
    """The whole ``[[mcp.servers]]`` array; names must be unique (they prefix the tools)."""
    if not isinstance(tables, list):
        raise ConfigError(f"{where}: expected an array of tables ([[mcp.servers]])")
    servers = tuple(parse_server(t, f"{where}[{i}]") for i, t in enumerate(tables))
    seen: set[str] = set()
    for i, server in enumerate(servers):
        if server.name in seen:
            raise ConfigError(f"{where}[{i}].name: {server.name!r} is used twice")
        seen.add(server.name)
    return servers
