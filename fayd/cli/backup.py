"""``fayd backup`` (a verified backup now) and ``fayd restore`` (list the backups, or put
one back while fayd is stopped). The backups are ``<state>/backups/fayd-YYYYmmdd.db``,
made every night by the daemon (fayd.store.nightly)."""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from fayd.cli.client import NotRunning, call, is_system
from fayd.config import Config
from fayd.errors import FaydError
from fayd.store.backup import folder_of, list_backups, make_backup
from fayd.store.restore import DaemonRunning, daemon_stopped, kept_copies, restore


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("backup", help="back the database up now (verified)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_backup)
    p = subparsers.add_parser(
        "restore", help="list the backups, or put one back (with fayd stopped)"
    )
    p.add_argument(
        "backup",
        nargs="?",
        help="a backup's name (fayd-20250101.db), its date (2025-01-01) or a file's path",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_restore)


def cmd_backup(cfg: Config, args: argparse.Namespace) -> int:
    """Through the daemon when it runs (its backup job), else directly on the file."""
    if not cfg.db_path.exists():
        raise FaydError(f"there is no database at {cfg.db_path} to back up")
    try:
        with daemon_stopped(cfg.state_dir):
            zone = ZoneInfo(cfg.agent.timezone) if cfg.agent.timezone else None
            day = datetime.now(zone).date()
            report = make_backup(cfg.db_path, folder_of(cfg.state_dir), cfg.backup.keep_days, day)
    except DaemonRunning as running:
        try:
            report = call(cfg, "POST", "/api/backup", timeout=900)
        except NotRunning as exc:
            raise NotRunning(
                f"fayd (pid {running.pid}) holds {cfg.state_dir} but does not answer yet "
                f"(starting?): {exc}"
            ) from exc
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"backed up to {report['path']} ({report['size'] / 2**20:.1f} MB, checked)")
    for path in report["pruned"]:
        print(f"removed the old backup {path} (backup.keep_days = {cfg.backup.keep_days})")
    return 0


def cmd_restore(cfg: Config, args: argparse.Namespace) -> int:
    if args.backup is None:
        return _list(cfg, args.json)
    source = _find(cfg, args.backup)
    done = restore(cfg.state_dir, cfg.db_path, source)
    if args.json:
        print(json.dumps(done, indent=2))
        return 0
    print(f"restored {source} to {cfg.db_path}")
    if done["moved"]:
        print(f"the database it replaces was moved to {done['moved']} (kept)")
    print(f"start fayd again: {'sudo systemctl start fayd' if is_system(cfg) else 'fayd run'}")
    return 0


def _list(cfg: Config, as_json: bool) -> int:
    folder = folder_of(cfg.state_dir)
    backups, kept = list_backups(folder), kept_copies(cfg.db_path)
    if as_json:
        rows = [{"path": str(b.path), "day": b.day.isoformat(), "size": b.size} for b in backups]
        print(json.dumps({"backups": rows, "kept": [str(p) for p in kept]}, indent=2))
        return 0
    if not backups:
        print(
            f"no backups in {folder} yet: fayd makes one every night at {cfg.backup.time} "
            "(backup.time), or now with fayd backup"
        )
    else:
        print(f"backups in {folder}, newest first:")
        for b in backups:
            made = datetime.fromtimestamp(b.made).strftime("%Y-%m-%d %H:%M")
            print(f"  {b.path.name}  made {made}  {b.size / 2**20:.1f} MB")
    if kept:
        print(f"databases moved aside in {cfg.db_path.parent} (damaged, or replaced):")
        for path in kept:
            print(f"  {path.name}")
    if backups:
        print(f"put one back, with fayd stopped: fayd restore {backups[0].path.name}")
    return 0


def _find(cfg: Config, name: str) -> Path:
    """A file's path, a backup's name, or a backup's date (YYYY-MM-DD or YYYYmmdd)."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    folder = folder_of(cfg.state_dir)
    digits = re.sub(r"-", "", name) if re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", name) else ""
    for candidate in (folder / name, folder / f"fayd-{digits}.db" if digits else None):
        if candidate is not None and candidate.is_file():
            return candidate
    known = ", ".join(b.path.name for b in list_backups(folder)) or "none yet"
    raise FaydError(f"no backup {name!r} (in {folder}: {known})")
