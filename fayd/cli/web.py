"""``fayd web password``: set the household page's password (fayd.web). It asks twice on a
terminal, or reads one line from standard input (scripts, tests). Only its scrypt hash is
kept, in the state folder; a running daemon notices the new file and ends every session."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from fayd.config import Config
from fayd.errors import FaydError
from fayd.web.password import BadPassword, check_new, write_password


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("web", help="the household page: its password")
    sub = p.add_subparsers(dest="web_command", required=True, metavar="ACTION")
    pw = sub.add_parser(
        "password",
        help="set the page's household password (asked twice; or one line on stdin); "
        "everyone logged in is logged out",
    )
    pw.set_defaults(func=cmd_password)
    return p


def _read() -> str:
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        return line.removesuffix("\n").removesuffix("\r")
    first = getpass.getpass("New household password: ")
    check_new(first)  # said before asking again
    if getpass.getpass("Again: ") != first:
        raise BadPassword("the two passwords differ; nothing was changed")
    return first


def cmd_password(cfg: Config, args: argparse.Namespace) -> int:
    password = _read()
    try:
        path = write_password(cfg.state_dir, password)
    except PermissionError as exc:
        raise FaydError(
            f"cannot write in {cfg.state_dir}: run as the daemon's user or with sudo"
        ) from exc
    port = cfg.api.port
    print(f"password set ({path}); open http://<this box>:{port}/ and log in")
    return 0
