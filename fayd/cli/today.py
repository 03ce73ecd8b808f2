"""``fayd today``: what happened on a day — sensor events, conversation turns, the alerts
they raised and the reminders asked for — in time order, in the household's time zone.

It opens the database read-only, so it works whether the daemon runs or not, and never
changes anything (not even the WAL files of a service install it may only read)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import sqlite_utils

from fayd.cli.client import JOIN_GROUP, NoPermission, is_system
from fayd.config import Config
from fayd.errors import ConfigError, FaydError
from fayd.protocol.text import shown
from fayd.store import day_records

#: The conversation of ``fayd say``/``chat`` without a device (fayd.agent.ports.CLI).
TYPED = "cli"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "today",
        help="what happened on a day: sensor events, conversations, alerts, in time order",
    )
    p.add_argument("--user", help="only this person's turns and devices (default: everyone)")
    p.add_argument("--date", default="today", help="YYYY-MM-DD, today or yesterday")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help="database file (default: the state folder's fayd.db)")
    p.set_defaults(func=cmd_today)
    return p


def cmd_today(cfg: Config, args: argparse.Namespace) -> int:
    zone = _zone(cfg)
    day = parse_day(args.date, _now(zone).date())
    start, end = (_local(datetime.combine(d, time()), zone) for d in (day, day + timedelta(1)))
    conn = open_read_only(Path(args.db) if args.db else cfg.db_path, cfg)
    try:
        db = sqlite_utils.Database(conn)
        if args.user is not None and args.user not in (users := day_records.known_users(db)):
            known = ", ".join(repr(u) for u in users) or "none yet"
            raise FaydError(f"no user {args.user!r} in fayd's records (users: {known})")
        events = day_records.events_between(db, start.timestamp(), end.timestamp(), args.user)
        turns = day_records.turns_between(db, start.timestamp(), end.timestamp(), args.user)
    except sqlite3.DatabaseError as exc:
        raise FaydError(f"{cfg.db_path if not args.db else args.db}: {exc}") from exc
    finally:
        conn.close()
    items = timeline(events, turns, zone)
    if args.json:
        out = {"date": day.isoformat(), "timezone": str(start.tzinfo), "user": args.user}
        valid = finite({**out, "items": items})
        print(json.dumps(valid, ensure_ascii=False, indent=2, allow_nan=False))
        return 0
    print(_heading(day, start, args.user, items))
    for item in items:
        print(_line(item, cfg.agent.agent_name))
    return 0


def parse_day(text: str, today: date) -> date:
    """``today``, ``yesterday`` or an ISO date (YYYY-MM-DD)."""
    words = {"today": today, "yesterday": today - timedelta(1)}
    if text.strip().lower() in words:
        return words[text.strip().lower()]
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--date must be YYYY-MM-DD, today or yesterday, not {text!r}") from None


def open_read_only(path: Path, cfg: Config) -> sqlite3.Connection:
    """The database, read-only. A service install's folder is not writable by its group, so
    with the daemon stopped (no -wal/-shm files to share) the file is read as immutable."""
    if not path.is_file():
        raise FaydError(f"no database at {path}: fayd has not run here yet (or give --db FILE)")
    if not os.access(path, os.R_OK):
        hint = JOIN_GROUP if is_system(cfg) else "check its permissions"
        raise NoPermission(f"{path} is not readable by you: {hint}")
    for mode in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, timeout=10)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:  # cannot open the -shm file: try immutable
            conn.close()
            failure = exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise FaydError(f"{path} is not a fayd database: {exc}") from exc
    raise FaydError(f"cannot read {path}: {failure}")


def timeline(
    events: list[dict[str, Any]], turns: list[dict[str, Any]], zone: tzinfo | None
) -> list[dict[str, Any]]:
    """Events, turns and the alerts turns raised, as plain items in time order (an alert
    before the turn that raised it: it is sent before anything is said)."""
    items = [{"type": "event", **_stamp(e["at"], zone), **_without(e, "id", "at")} for e in events]
    for t in turns:
        meta, stamp = t["meta"], _stamp(t["at"], zone)
        skill = meta.get("skill") if isinstance(meta.get("skill"), dict) else {}
        where = {"user": t["user"], "device": t["device"]}
        if skill.get("alert"):
            alert = {"alert": skill["alert"], "kind": skill.get("kind"), "said": t["question"]}
            items.append({"type": "alert", **stamp, **where, **alert})
        turn = {
            "type": "turn",
            **stamp,
            **where,
            "question": t["question"],
            "answer": t["answer"],
            "source": meta.get("source"),
            "intent": (meta.get("decision") or {}).get("intent"),
        }
        if meta.get("rejected") == "model":  # the model failed: a stand-in was said
            turn["failed"] = True
        items.append(turn)
    order = {"event": 0, "alert": 1, "turn": 2}
    return sorted(items, key=lambda i: (i["at"], order[i["type"]]))


def _heading(day: date, start: datetime, user: str | None, items: list[dict[str, Any]]) -> str:
    counts = [
        _count(sum(i["type"] == kind for i in items), kind) for kind in ("event", "turn", "alert")
    ]
    who = f"for {user}" if user else "everyone"
    when = f"{day:%A %-d %B %Y} ({start.tzinfo})"
    if not items:
        return f"{when}, {who}: nothing recorded"
    return f"{when}, {who}: {', '.join(counts)}"


def finite(value: Any) -> Any:
    """``value`` with every infinite or NaN number as None: Python writes them as
    ``Infinity``/``NaN``, which is not JSON (a device's ``1e999`` was stored as one)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _plain(value: Any) -> str:
    """A stored value as the terminal may print it: control characters (an escape sequence
    a device sent, a NUL) escaped, not obeyed."""
    return shown(str(value))


def _line(item: dict[str, Any], agent: str) -> str:
    clock = item["time"][11:19]  # HH:MM:SS of the local ISO time
    if item["type"] == "event":
        data = " ".join(f"{_plain(k)}={_plain(v)}" for k, v in item["data"].items())
        owner = f" ({_plain(item['user'])})" if item["user"] else ""
        device, sensor = _plain(item["device"]), _plain(item["sensor"])
        return f"{clock}  event  {device}{owner}: {sensor} {data}".rstrip()
    who = _who(item)
    if item["type"] == "alert":
        kind = _plain(item["kind"] or "help")
        return f"{clock}  ALERT  {kind}: {who} said {item['said']!r}"
    intent = f" [{item['intent']}]" if item.get("intent") not in (None, "chat") else ""
    failed = " (the model failed)" if item.get("failed") else ""
    return (
        f"{clock}  turn   {who}: {item['question']!r}{intent}\n"
        f"{'':17}{agent}: {item['answer'] or '(nothing said)'!r}{failed}"
    )


def _who(item: dict[str, Any]) -> str:
    if item["device"] == TYPED:
        return f"{_plain(item['user'])} (typed)"
    return f"{_plain(item['user'])} on {_plain(item['device'])}"


def _count(n: int, kind: str) -> str:
    return f"{n} {kind}{'' if n == 1 else 's'}"


def _stamp(at: float, zone: tzinfo | None) -> dict[str, Any]:
    local = datetime.fromtimestamp(at, zone) if zone else datetime.fromtimestamp(at).astimezone()
    return {"at": at, "time": local.isoformat(timespec="seconds")}


def _without(row: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in keys}


def _zone(cfg: Config) -> ZoneInfo | None:
    """``agent.timezone``, or None for the system's own zone (with its DST rules)."""
    if not cfg.agent.timezone:
        return None
    try:
        return ZoneInfo(cfg.agent.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"agent.timezone: no time zone {cfg.agent.timezone!r}") from exc


def _now(zone: tzinfo | None) -> datetime:
    return datetime.now(zone) if zone else datetime.now().astimezone()


def _local(naive: datetime, zone: tzinfo | None) -> datetime:
    return naive.replace(tzinfo=zone) if zone else naive.astimezone()
