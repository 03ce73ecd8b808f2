"""``fayd doctor``: checks the install and says what to fix, one line per check (ok, warn,
fail); exit 1 on any fail. With or without a running daemon (fayd.doctor)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from fayd.cli.client import NoPermission, NotRunning, call, is_system, runtime
from fayd.config import Config
from fayd.doctor.checks import FAIL, Facts, run_checks


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="check the install; say what to fix")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=cmd_doctor)


def facts_of(cfg: Config) -> Facts:
    try:
        found = runtime(cfg)
        status = call(cfg, "GET", "/api/status")
    except (NotRunning, NoPermission):  # permissions are a check of their own
        found, status = None, None
    return Facts(cfg, is_system(cfg), status, found)


def cmd_doctor(cfg: Config, args: argparse.Namespace) -> int:
    checks = run_checks(facts_of(cfg))
    if args.json:
        print(json.dumps([asdict(c) for c in checks]))
    else:
        for c in checks:
            print(f"{c.level:4}  {c.what:13} {c.detail}")
    return 1 if any(c.level == FAIL for c in checks) else 0
