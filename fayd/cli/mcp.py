"""``fayd mcp``: the memory tools over stdio (default) or streamable HTTP with a token."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from fayd.agent.clock import days
from fayd.auth import TOKEN_FILE, ensure_token
from fayd.config import Config
from fayd.errors import ConfigError
from fayd.memory.open import open_memory

TOKEN_ENV = "FAYD_MCP_TOKEN"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("mcp", help="serve the memory tools over MCP (stdio or HTTP)")
    p.add_argument("--http", action="store_true", help="streamable HTTP at /mcp, not stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address (default loopback only)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765, as Fay)")
    p.add_argument("--db", help="database file (default: the state folder's fayd.db)")
    p.add_argument("--no-llm", action="store_true", help="don't score importance with the LLM")
    p.set_defaults(func=cmd_mcp)
    return p


def http_token(cfg: Config) -> str:
    """$FAYD_MCP_TOKEN, else the token of every fayd HTTP door, ``<state>/api_token``."""
    return os.environ.get(TOKEN_ENV) or ensure_token(cfg.state_dir)


def cmd_mcp(cfg: Config, args: argparse.Namespace) -> int:
    from fayd.mcp import serve_http, serve_stdio

    # stdout belongs to the protocol on stdio: logs go to stderr only.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    memory = open_memory(cfg, args.db, with_llm=not args.no_llm, days_named=days.named)
    try:
        if args.http:
            token = http_token(cfg)
            if len(token) < 16:
                raise ConfigError(f"{TOKEN_ENV}: the token must be at least 16 characters")
            print(
                f"MCP on http://{args.host}:{args.port}/mcp (bearer token: $FAYD_MCP_TOKEN or "
                f"{cfg.state_dir / TOKEN_FILE})",
                file=sys.stderr,
            )
            asyncio.run(serve_http(memory, token, args.host, args.port))
        else:
            asyncio.run(serve_stdio(memory))
    finally:
        memory.store.close()
    return 0
