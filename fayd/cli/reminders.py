"""``fayd reminders list|add|cancel``: through the running daemon's API (its scheduler hears
of the change at once), else on the database directly (the daemon fires what it finds when
it starts). Bad input is one line naming the field; nothing is half-stored."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from fayd.cli import client
from fayd.cli.failures import UsageError
from fayd.config import Config
from fayd.reminders import ReminderBook, SystemClock
from fayd.reminders.rules import DAYS, EVERY
from fayd.store import Store
from fayd.zone import zone_name


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("reminders", help="reminders and timers: list, add, cancel")
    sub = p.add_subparsers(dest="reminders_command", required=True, metavar="ACTION")

    ls = sub.add_parser("list", help="active reminders (with --all: done, cancelled, broken too)")
    ls.add_argument("--user", help="only this person's (default: everyone's)")
    ls.add_argument("--all", action="store_true", help="also done, cancelled and broken ones")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=cmd_list)

    a = sub.add_parser("add", help="a reminder: --at a time, or --every with --time/--days/…")
    a.add_argument("text", help="what to remind of, e.g. 'take your pills'")
    a.add_argument("--user", help="whose (default: agent.default_user)")
    a.add_argument("--at", help="once, at YYYY-MM-DD HH:MM (the household's time zone)")
    a.add_argument("--every", choices=[e for e in EVERY if e != "once"], help="recurring")
    a.add_argument("--time", help="HH:MM, for --every day/weekday/week")
    a.add_argument("--days", help=f"for --every week: comma-separated, of {','.join(DAYS)}")
    a.add_argument("--hours", type=int, help="for --every hours: N")
    a.add_argument("--between", help="for --every hours: HH:MM-HH:MM")
    a.add_argument(
        "--kind",
        default="reminder",
        choices=["reminder", "medication", "timer", "greeting"],
        help="greeting: a morning greeting with the day's reminders (--every day --time 08:00)",
    )
    a.add_argument("--urgent", action="store_true", help="said even in quiet hours")
    a.add_argument("--json", action="store_true", help="print the stored reminder as JSON")
    a.set_defaults(func=cmd_add)

    c = sub.add_parser("cancel", help="cancel a reminder by its id (fayd reminders list)")
    c.add_argument("id", type=int)
    c.set_defaults(func=cmd_cancel)
    return p


def _running(cfg: Config) -> bool:
    try:
        client.runtime(cfg)
    except client.NotRunning:
        return False
    return True


def _offline(cfg: Config, work: Any) -> Any:
    """``work(book)`` on the database itself (the daemon is not running)."""

    async def run() -> Any:
        store = Store(cfg.db_path)
        try:
            return await work(ReminderBook(store, SystemClock(), zone_name(cfg)))
        finally:
            store.close()

    return asyncio.run(run())


def cmd_list(cfg: Config, args: argparse.Namespace) -> int:
    if _running(cfg):
        params = {"all": "1" if args.all else "0", **({"user": args.user} if args.user else {})}
        rows = client.call(cfg, "GET", "/api/reminders", params=params)["reminders"]
    else:
        rows = _offline(cfg, lambda book: book.list(args.user, everything=args.all))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no reminders")
    tz = zone_name(cfg)
    for row in rows:
        print(line(row, tz))
    return 0


def line(row: dict[str, Any], tz: str) -> str:
    """``#3 ann  Sun 06 Dec 17:00  once  reminder  call your son``."""
    when = (
        datetime.fromtimestamp(row["next_at"], ZoneInfo(tz)).strftime("%a %d %b %H:%M")
        if row["next_at"]
        else "-"
    )
    rule = json.loads(row["rule"]) if row["state"] != "broken" else {"every": "?"}
    every = rule.get("every", "?")
    if every != "once":
        every += f" {rule['at']}" if rule.get("at") else ""
        every += f" {','.join(rule['days'])}" if rule.get("days") else ""
    kind = row["kind"] + (" urgent" if row["urgent"] else "")
    state = (
        ""
        if row["state"] == "active"
        else f"  [{row['state']}{': ' + row['error'] if row['error'] else ''}]"
    )
    return f"#{row['id']} {row['username']}  {when}  {every}  {kind}  {row['text']}{state}"


def cmd_add(cfg: Config, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "user": args.user or cfg.agent.default_user,
        "text": args.text,
        "kind": args.kind,
        "urgent": args.urgent,
    }
    if args.at and args.every:
        raise UsageError("--at or --every, not both")
    if args.at:
        body["at"] = args.at.replace(" ", "T", 1)
    elif args.every:
        rule: dict[str, Any] = {"every": args.every, "at": args.time, "hours": args.hours}
        if args.days:
            rule["days"] = [d.strip().lower()[:3] for d in args.days.split(",") if d.strip()]
        if args.between:
            rule["between"] = args.between.split("-", 1)
        body["rule"] = rule
    else:
        raise UsageError("when? give --at 'YYYY-MM-DD HH:MM' or --every …")
    if _running(cfg):
        row = client.call(cfg, "POST", "/api/reminders", json=body)
    else:
        row = _offline(cfg, lambda book: book.add_request(body, source="cli"))
    print(json.dumps(row, indent=2, ensure_ascii=False) if args.json else line(row, zone_name(cfg)))
    return 0


def cmd_cancel(cfg: Config, args: argparse.Namespace) -> int:
    if _running(cfg):
        client.call(cfg, "DELETE", f"/api/reminders/{args.id}")
    elif not _offline(cfg, lambda book: book.cancel(args.id)):
        raise UsageError(f"no active reminder {args.id} (fayd reminders list)")
    print(f"cancelled reminder {args.id}")
    return 0
