"""What a caregiver can ask of the care engine — rules, caregivers, alerts — as one table of
operations on plain data, used alike by the control API (``POST /api/care/<op>``) and by
``fayd care`` when the daemon is not running (on the store directly). Every write is one
transaction and is checked whole before it: a CareError names the field, nothing is kept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any

import sqlite_utils

from fayd.care import records as rec
from fayd.care.daily import DailyDigest
from fayd.care.engine import EMERGENCY, CareEngine
from fayd.care.evaluate import Fire, on_event, on_tick
from fayd.care.notify import checked, shown
from fayd.care.ports import Digests
from fayd.care.rules import CareError, Rule, check_rule, free_name
from fayd.protocol.text import BadText, check_name

Op = Callable[[CareEngine, dict[str, Any]], Awaitable[dict[str, Any]]]


def describe(rule: Rule) -> str:
    """A rule in one line, as a caregiver would say it."""
    s = rule.spec
    if rule.kind == "threshold":
        parts = [f"{k} above {v:g}" for k, v in s["above"].items()]
        parts += [f"{k} below {v:g}" for k, v in s["below"].items()]
        what = f"{s['sensor']} " + " or ".join(parts)
    elif rule.kind == "missing":
        what = f"no {s['sensor']}{' from ' + s['device'] if s.get('device') else ''} by {s['by']}"
    elif rule.kind == "inactivity":
        window = "" if s["between"] == ["00:00", "00:00"] else " between " + "-".join(s["between"])
        what = f"no movement for {s['minutes']:g} min{window}"
    elif rule.kind == "event":
        window = " between " + "-".join(s["between"]) if s.get("between") else ""
        match = "".join(f" {k}={v}" for k, v in s["match"].items())
        what = f"{s['sensor']}{match}{window}"
    else:
        parts = [f"silent over {s['silent_min']:g} min"] if s.get("silent_min") else []
        parts += [f"battery below {s['battery_below']:g}%"] if s.get("battery_below") else []
        what = f"{s['device']} " + ", ".join([*parts, f"over {s['flood_per_min']:g} events/min"])
    steps = [f"{who} ({ack_s / 60:g} min)" for who, ack_s in rule.ladder]
    ladder = " → ".join((["check-in"] if rule.checkin else []) + steps)
    return f"{rule.user}: {what}; {rule.severity}; {ladder}"


def _rule_row(rule: Rule) -> dict[str, Any]:
    return {"name": rule.name, "user": rule.user, "kind": rule.kind, "text": describe(rule)}


def _name(body: dict[str, Any], key: str = "name") -> str:
    try:
        return check_name(key, body.get(key))
    except BadText as exc:
        raise CareError(str(exc)) from None


async def rules_list(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    return {"rules": [_rule_row(r) for r in await engine.store.run(rec.rules)]}


async def rules_add(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    """The rule; and with a person's first rule that tells caregivers, a call for help said
    aloud ("I've fallen", "my chest hurts") goes to the same caregivers too: a rule of its
    own (``<user>-help``), said in the answer and removable like any other."""

    def add(db: sqlite_utils.Database) -> tuple[Rule, Rule | None]:
        known = rec.known(db, engine.effects.default_user)
        now = engine.clock()
        rule = check_rule(body, known, now)
        first = not any(r.user == rule.user for r in known.rules)
        rec.add_rule(db, rule)
        if not (first and rule.ladder) or _watches_calls_for_help(rule):
            return rule, None
        help_body = {
            "name": free_name(f"{rule.user}-help", known),
            "user": rule.user,
            "kind": "event",
            "spec": {"sensor": EMERGENCY},
            "ladder": [[who, ack_s] for who, ack_s in rule.ladder],
        }
        helper = check_rule(help_body, rec.known(db, engine.effects.default_user), now)
        rec.add_rule(db, helper)
        return rule, helper

    rule, helper = await engine.store.run(add)
    engine.wake()
    return {"added": _rule_row(rule), "also": _rule_row(helper) if helper else None}


def _watches_calls_for_help(rule: Rule) -> bool:
    return rule.kind == "event" and rule.spec.get("sensor") == EMERGENCY


async def rules_remove(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    name = _name(body)
    if not await engine.store.run(rec.remove_rule, name):
        raise LookupError(f"no care rule {name!r}")
    engine.wake()  # what it watched is looked at again (CareEngine.will_tell)
    return {"removed": name}


async def rules_test(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    """A dry run: the rule played over today's stored events and the time now, from a fresh
    state. Nothing is stored, nobody is told."""
    name = _name(body)
    now = engine.clock()
    midnight = datetime.fromtimestamp(now, engine.zone).replace(hour=0, minute=0, second=0)

    def play(db: sqlite_utils.Database) -> list[str]:
        rule = next((r for r in rec.rules(db) if r.name == name), None)
        if rule is None:
            raise LookupError(f"no care rule {name!r}")
        start = db.execute(
            "SELECT coalesce(max(id), 0) FROM device_events WHERE received_at < ?",
            [midnight.timestamp()],
        ).fetchone()[0]
        trial = Rule(**{**rule.__dict__, "created_at": midnight.timestamp()})
        state: dict[str, Any] = {}
        fired = []
        for ev in rec.new_events(db, start, 100_000):
            fired += on_event(trial, state, ev, engine.zone)
        fired += on_tick(trial, state, now, engine.zone)
        return [d.text if isinstance(d, Fire) else f"(clears: {d.why})" for d in fired]

    said = await engine.store.run(play)
    return {"rule": name, "would_alert": said}


async def caregivers_list(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    people = await engine.store.run(rec.caregivers)
    cares_for = await engine.store.run(rec.caregivers_people)
    return {
        "caregivers": [
            {"name": n, "channels": await shown(u), "for": cares_for.get(n, [])}
            for n, u in people.items()
        ]
    }


async def caregivers_add(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    name = _name(body)
    urls = body.get("urls")
    if not isinstance(urls, list) or not urls:
        raise CareError("urls: at least one Apprise URL (mailto://…, ntfy://…, json://…)")
    people = body.get("for") or []
    if not isinstance(people, list) or not all(isinstance(p, str) for p in people):
        raise CareError("for: a list of the household members they look after")
    people = [_name({"for": p}, "for") for p in people]
    good = await checked(urls)
    await engine.store.run(rec.add_caregiver, name, good, engine.clock(), people)
    return {"added": name, "channels": await shown(good), "for": people}


async def caregivers_remove(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    name = _name(body)
    if not await engine.store.run(rec.remove_caregiver, name):
        raise LookupError(f"no caregiver {name!r}")
    return {"removed": name}


async def caregivers_test(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    """A test message to each of a caregiver's channels, now; says which went."""
    name = _name(body)
    urls = (await engine.store.run(rec.caregivers)).get(name)
    if urls is None:
        raise LookupError(f"no caregiver {name!r}")
    results = {}
    for url, seen in zip(urls, await shown(urls), strict=True):
        try:
            await engine.deliver.send(url, "fayd: test", f"A test message from fayd for {name}.")
            results[seen] = "sent"
        except Exception as exc:
            results[seen] = f"FAILED: {exc}"
    return {"caregiver": name, "channels": results}


async def alerts_list(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    states = ("open", "acknowledged", "resolved") if body.get("all") else ("open", "acknowledged")
    alerts = await engine.store.run(rec.alerts, states)
    for alert in alerts:
        alert["sent"] = [
            {
                "caregiver": r["caregiver"],
                "rung": r["step"],
                "sent_at": r["sent_at"],
                "attempts": r["attempts"],
                "last_error": r["last_error"],
            }
            for r in await engine.store.run(rec.outbox, alert["id"])
        ]
    return {"alerts": alerts}


async def alerts_ack(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    alert_id, by = _name(body, "id"), _name(body, "by")
    state = "resolved" if body.get("resolve") else "acknowledged"
    return {"alert": await engine.acknowledge(alert_id, by, state)}


def _who_when(engine: CareEngine, body: dict[str, Any], known: frozenset[str]) -> tuple[str, date]:
    user = engine.effects.default_user if body.get("user") in (None, "") else _name(body, "user")
    if user not in known:
        names = ", ".join(sorted(known))
        raise CareError(f"user: no household member {user!r} (known: {names})")
    today = datetime.fromtimestamp(engine.clock(), engine.zone).date()
    text = str(body.get("date") or "today").strip().lower()
    words = {"today": today, "yesterday": today - timedelta(days=1)}
    try:
        day = words[text] if text in words else date.fromisoformat(text)
    except ValueError:
        raise CareError(f"date: {text!r} is not YYYY-MM-DD, today or yesterday") from None
    if day > today:
        raise CareError(f"date: {day.isoformat()} has not happened yet")
    return user, day


async def _digest(engine: CareEngine, body: dict[str, Any]) -> tuple[Digests, str, date]:
    users = (await engine.store.run(rec.known, engine.effects.default_user)).users
    user, day = _who_when(engine, body, users)
    return engine.digest or DailyDigest(engine, {}), user, day


async def digest_show(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    """The daily digest of a person's day, as it stands now (nothing is sent)."""
    digest, user, day = await _digest(engine, body)
    return {"user": user, "date": day.isoformat(), "text": await digest.text(user, day)}


async def digest_send(engine: CareEngine, body: dict[str, Any]) -> dict[str, Any]:
    """The digest as it stands now, queued to the person's caregivers (on top of the
    scheduled one, which still goes at its time)."""
    digest, user, day = await _digest(engine, body)
    return await digest.send(user, day)


OPS: dict[str, Op] = {
    "rules.list": rules_list,
    "rules.add": rules_add,
    "rules.remove": rules_remove,
    "rules.test": rules_test,
    "caregivers.list": caregivers_list,
    "caregivers.add": caregivers_add,
    "caregivers.remove": caregivers_remove,
    "caregivers.test": caregivers_test,
    "alerts.list": alerts_list,
    "alerts.ack": alerts_ack,
    "digest.show": digest_show,
    "digest.send": digest_send,
}


async def handle(engine: CareEngine, op: str, body: dict[str, Any]) -> dict[str, Any]:
    """Run ``op``; CareError (bad input, 400) or LookupError (nothing by that name, 404)."""
    if op not in OPS:
        raise CareError(f"op: must be one of {', '.join(OPS)}, not {op!r}")
    done = await OPS[op](engine, body)
    if op in CHANGE_WHO_IS_WHO:  # alerts raised from now on go to the right devices
        await engine.refresh_household()
    return done


#: The ops after which who looks after whom may have changed (fayd.care.household).
CHANGE_WHO_IS_WHO = {"rules.add", "rules.remove", "caregivers.add", "caregivers.remove"}
