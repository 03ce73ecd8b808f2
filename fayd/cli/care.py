"""``fayd care``: the household's care rules, caregivers and alerts (docs/care.md).

Through the running daemon's API (its engine acts at once: an acknowledgement stops the
ladder now), or, when fayd is not running, on the store directly with the same checks
(fayd.care.admin), so a caregiver can set things up before the first start."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from fayd.cli.client import NotRunning, call
from fayd.config import Config
from fayd.errors import FaydError
from fayd.store import Store

KINDS = "threshold, missing, inactivity, event or device"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("care", help="care rules, caregivers and alerts (eldercare)")
    what = p.add_subparsers(dest="what", required=True)

    rules = what.add_parser("rules", help="the rules that watch over someone").add_subparsers(
        dest="action", required=True
    )
    rules.add_parser("list", help="every rule, in words")
    add = rules.add_parser("add", help="a new rule (checked whole before it is kept)")
    add.add_argument("name")
    add.add_argument("--user", required=True, help="the household member it watches over")
    add.add_argument("--kind", required=True, help=KINDS)
    add.add_argument("--sensor", help="bp, heart_rate, spo2, temperature, motion, door, panic …")
    add.add_argument("--device", help="only this device (device rules: the device watched)")
    add.add_argument("--above", help="threshold: field=limit pairs, e.g. sys=150,dia=95")
    add.add_argument("--below", help="threshold: field=limit pairs, e.g. value=92")
    add.add_argument("--hysteresis", type=float, help="threshold: clears this far inside")
    add.add_argument("--by", help="missing: HH:MM the reading or motion is due by")
    add.add_argument("--since", help="missing: HH:MM the day's wait starts (default 00:00)")
    add.add_argument("--minutes", type=float, help="inactivity: minutes without movement")
    add.add_argument("--between", help="inactivity/event: HH:MM-HH:MM (may wrap midnight)")
    add.add_argument("--match", help="event: field=value pairs, e.g. open=true")
    add.add_argument("--silent-min", type=float, help="device: silent longer than this")
    add.add_argument("--battery-below", type=float, help="device: battery percent")
    add.add_argument("--flood-per-min", type=float, help="device: events a minute (60)")
    add.add_argument("--severity", help="critical, warning or info")
    add.add_argument(
        "--ladder", default="", help="caregivers in order with minutes to acknowledge: anna:10,ben"
    )
    add.add_argument(
        "--checkin",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ask the person first (default: yes for readings and inactivity)",
    )
    add.add_argument("--cooldown-min", type=float, help="no new alert this long after one ends")
    for action, help_text in (("remove", "forget a rule"), ("test", "would it alert today?")):
        rules.add_parser(action, help=help_text).add_argument("name")

    people = what.add_parser("caregivers", help="who is told, and how").add_subparsers(
        dest="action", required=True
    )
    people.add_parser("list", help="caregivers and their channels (secrets hidden)")
    add = people.add_parser("add", help="a caregiver with Apprise URLs (mailto://, ntfy:// …)")
    add.add_argument("name")
    add.add_argument("urls", nargs="+")
    add.add_argument(
        "--for",
        dest="people",
        default="",
        metavar="NAMES",
        help="the household members they look after, comma-separated (default: everyone)",
    )
    for action, help_text in (("remove", "forget a caregiver"), ("test", "send a test message")):
        people.add_parser(action, help=help_text).add_argument("name")

    alerts = what.add_parser("alerts", help="alerts and acknowledgements").add_subparsers(
        dest="action", required=True
    )
    listing = alerts.add_parser("list", help="open and acknowledged alerts")
    listing.add_argument("--all", action="store_true", help="resolved ones too")
    ack = alerts.add_parser("ack", help="acknowledge an alert: its ladder stops")
    ack.add_argument("id")
    ack.add_argument("--by", default=None, help="who takes it (default: your login name)")
    ack.add_argument("--resolve", action="store_true", help="close it for good")

    digest = what.add_parser("digest", help="a person's day in words (the daily digest)")
    digest.add_argument("--user", help="the household member (default: agent.default_user)")
    digest.add_argument("--date", help="YYYY-MM-DD, today or yesterday (default: today)")
    digest.add_argument("--send", action="store_true", help="send it to their caregivers now")
    p.set_defaults(func=cmd_care)
    return p


def _pairs(text: str | None, key: str, number: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in filter(None, (text or "").split(",")):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise FaydError(f"--{key}: {part!r} is not field=value")
        if number:
            try:
                out[name.strip()] = float(value)
            except ValueError:
                raise FaydError(f"--{key}: {value!r} is not a number") from None
        else:
            low = value.strip().lower()
            out[name.strip()] = {"true": True, "false": False}.get(low, value.strip())
    return out


def rule_body(args: argparse.Namespace) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "sensor": args.sensor,
        "device": args.device,
        "hysteresis": args.hysteresis,
        "by": args.by,
        "since": args.since,
        "minutes": args.minutes,
        "silent_min": args.silent_min,
        "battery_below": args.battery_below,
        "flood_per_min": args.flood_per_min,
    }
    if args.above or args.below:
        spec.update(above=_pairs(args.above, "above"), below=_pairs(args.below, "below"))
    if args.match:
        spec["match"] = _pairs(args.match, "match", number=False)
    if args.between:
        spec["between"] = args.between.split("-", 1)
    ladder = []
    for step in filter(None, args.ladder.split(",")):
        who, _, minutes = step.partition(":")
        try:
            ladder.append([who.strip(), float(minutes or 10) * 60])
        except ValueError:
            raise FaydError(f"--ladder: {minutes!r} is not a number of minutes") from None
    body = {
        "name": args.name,
        "user": args.user,
        "kind": args.kind,
        "spec": {k: v for k, v in spec.items() if v is not None},
        "ladder": ladder,
        "severity": args.severity,
    }
    if args.checkin is not None:
        body["checkin"] = args.checkin
    if args.cooldown_min is not None:
        body["cooldown_s"] = args.cooldown_min * 60
    return body


def run_op(cfg: Config, op: str, body: dict[str, Any]) -> dict[str, Any]:
    """Through the daemon, or on the store when it is not running."""
    try:
        return call(cfg, "POST", f"/api/care/{op}", timeout=60, json=body)
    except NotRunning:
        pass
    from fayd.care import AppriseDeliver, CareEngine, Effects, admin
    from fayd.zone import household_zone

    async def local() -> dict[str, Any]:
        store = Store(cfg.db_path)
        try:
            effects = Effects(cfg.agent.default_user)
            engine = CareEngine(store, AppriseDeliver(), effects, household_zone(cfg))
            done = await admin.handle(engine, op, body)
            if op == "digest.send":  # no daemon to deliver it: sent now (kept if it fails)
                await engine.deliver_due()
            return done
        except LookupError as exc:
            raise FaydError(str(exc)) from None
        finally:
            store.close()

    return asyncio.run(local())


def cmd_care(cfg: Config, args: argparse.Namespace) -> int:
    if args.what == "digest":
        op = "digest.send" if args.send else "digest.show"
        done = run_op(cfg, op, {"user": args.user, "date": args.date})
        print(done["text"])
        if args.send:
            to = done["to"]
            kept = "`fayd status` lists any not delivered yet"
            print(
                f"\n(sent to {', '.join(to)}; {kept})" if to else "\n(no caregivers to send it to)"
            )
        return 0
    op = f"{args.what}.{args.action}"
    if op == "rules.add":
        body = rule_body(args)
    elif op == "caregivers.add":
        people = [p.strip() for p in args.people.split(",") if p.strip()]
        body = {"name": args.name, "urls": args.urls, "for": people}
    elif op == "alerts.list":
        body = {"all": args.all}
    elif op == "alerts.ack":
        import getpass

        body = {"id": args.id, "by": args.by or getpass.getuser(), "resolve": args.resolve}
    else:
        body = {"name": args.name} if hasattr(args, "name") else {}
    done = run_op(cfg, op, body)
    show(op, done)
    return 0


def _when(at: float | None) -> str:
    return time.strftime("%a %d %b %H:%M", time.localtime(at)) if at else "-"


def show(op: str, done: dict[str, Any]) -> None:
    if op == "rules.list":
        for r in done["rules"]:
            print(f"{r['name']:16} {r['kind']:10} {r['text']}")
        if not done["rules"]:
            print("no care rules yet: fayd care rules add NAME --user … --kind …")
    elif op == "rules.add":
        print(f"kept rule {done['added']['name']}: {done['added']['text']}")
        if also := done.get("also"):
            print(
                f"kept rule {also['name']}: {also['text']} (a call for help said aloud goes to"
                f" the same caregivers; fayd care rules remove {also['name']} if it should not)"
            )
    elif op == "rules.test":
        said = done["would_alert"]
        print("\n".join(f"would alert: {s}" for s in said) or "quiet: it would not alert now")
    elif op == "caregivers.list":
        for c in done["caregivers"]:
            people = ", ".join(c.get("for") or []) or "everyone"
            print(f"{c['name']:12} for {people:16} {', '.join(c['channels'])}")
    elif op == "caregivers.add":
        people = ", ".join(done.get("for") or []) or "everyone in the household"
        print(
            f"kept caregiver {done['added']} (looks after {people}): {', '.join(done['channels'])}"
        )
    elif op == "caregivers.test":
        for url, result in done["channels"].items():
            print(f"{url}: {result}")
    elif op == "alerts.list":
        for a in done["alerts"]:
            told = ", ".join(
                f"{s['caregiver']} {'sent ' + _when(s['sent_at']) if s['sent_at'] else 'NOT SENT'}"
                for s in a["sent"]
                if s["rung"] >= 0
            )
            print(f"{a['id']}  {a['state'].upper():12} {a['severity']:8} {_when(a['opened_at'])}")
            print(f"    {a['user']}: {a['text']} (rule {a['rule']}, seen {a['count']}x)")
            print(
                f"    told: {told or 'nobody yet'}"
                + (f"; {a['closed_by']}" if a["closed_by"] else "")
            )
        if not done["alerts"]:
            print("no open alerts")
    elif op == "alerts.ack":
        a = done["alert"]
        print(f"{a['id']} is {a['state']} ({a['closed_by']})")
    else:
        print(f"removed {done['removed']}")
