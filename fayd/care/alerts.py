"""An alert's book-keeping, each method inside the caller's SQLite transaction (the engine
runs them through ``Store.run``): open or fold on a rule's Fire, resolve on its Clear, climb
the ladder (queueing the rung's notifications in the same transaction), close with a note to
those already told, take a check-in's answer or a caregiver's acknowledgement."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

import sqlite_utils

from fayd.care import ladder
from fayd.care import records as rec
from fayd.care.evaluate import Clear, Event, Fire
from fayd.care.rules import Rule
from fayd.logwords import words

log = logging.getLogger(__name__)
#: The sensor of a spoken call for help (fayd.care.engine.EMERGENCY).
EMERGENCY = "emergency"
#: Urgent alerts of one person this close together are one incident (one alert).
INCIDENT_S = 15 * 60
#: The rule of a call for help that no rule watches (said before any caregiver was set up).
NO_RULE = ""


class AlertBook:
    def __init__(self, zone: tzinfo, can_speak: Callable[[], bool]) -> None:
        self.zone = zone
        #: Whether a check-in can be spoken (an Asker or Announcer is wired).
        self.can_speak = can_speak

    def fire(
        self, db: sqlite_utils.Database, rule: Rule, fire: Fire, now: float
    ) -> list[tuple[str, dict[str, Any]]]:
        folding = [
            a
            for a in rec.alerts(db, ("open", "acknowledged"))
            if a["rule"] == rule.name
            and a["detail"].get("key", "") == fire.key
            and (a["state"] == "open" or rule.kind != "event")
        ]
        if folding:  # de-duplication: the same cause again is counted, not raised again
            rec.update_alert(db, folding[0]["id"], count=folding[0]["count"] + 1)
            return []
        incident = self._same_incident(db, rule, fire)
        if incident is not None:
            return self._fold(db, incident, rule, fire, now)
        closed = rec.last_closed(db, rule.name, fire.key)
        if closed is not None and fire.at - closed < rule.cooldown_s:
            return []
        alert = self.draft(rule, fire, now)
        alert_id, kind, ask = alert["id"], alert["kind"], "question" in alert["detail"]
        if rule.checkin and not ask:
            log.info("care alert %s: no speech wired, so no check-in; caregivers first", alert_id)
        rec.insert_alert(db, alert)
        # The text may quote the person ("I've fallen"): its words only at DEBUG.
        log.warning(
            "care alert %s (%s, %s) for %s: %s",
            alert_id,
            rule.name,
            kind,
            rule.user,
            words(fire.text),
        )
        log.debug("care alert %s: %s", alert_id, words(fire.text))
        if not ask:  # straight to the first caregiver, in this same transaction
            alert = self.climb(db, alert, rule, now)
        return [("opened", alert)]

    def draft(self, rule: Rule, fire: Fire, now: float) -> dict[str, Any]:
        """The alert ``fire`` opens, not yet written (fayd.care.early raises it from memory
        when the disk refuses it)."""
        alert_id = fire.detail.get("alert_id") or f"care-{int(fire.at)}-{secrets.token_hex(3)}"
        kind = "emergency" if fire.detail.get("sensor") == "emergency" else rule.kind
        ask = rule.checkin and self.can_speak()
        alert = {
            "id": alert_id,
            "rule": rule.name,
            "user": rule.user,
            "kind": kind,
            "severity": rule.severity,
            "text": fire.text,
            "state": "open",
            "opened_at": fire.at,
            "step": ladder.CHECKIN if ask else -1,
            "step_until": now + ladder.CHECKIN_S if ask else now,
            "count": 1,
            "closed_at": None,
            "closed_by": None,
            "detail": {**fire.detail, "key": fire.key, "answer": "" if ask else "skipped"},
        }
        if ask:
            alert["detail"]["question"] = ladder.question(rule, fire.text)
        return alert

    def _same_incident(
        self, db: sqlite_utils.Database, rule: Rule, fire: Fire
    ) -> dict[str, Any] | None:
        """An open urgent alert of the same person from the last minutes whose ladder tells
        everyone this rule would: a fall, a press and "I've fallen and can't get up" within
        them are one incident, not three (a rule that tells someone more is its own alert)."""
        if not (rule.kind == "event" and rule.severity == "critical"):
            return None
        ladders = {r.name: {who for who, _ in r.ladder} for r in rec.rules(db)}
        wanted = {who for who, _ in rule.ladder}
        for alert in rec.alerts(db, ("open",)):
            recent = 0 <= fire.at - alert["opened_at"] <= INCIDENT_S
            urgent = alert["severity"] == "critical" and alert["kind"] in ("event", "emergency")
            covers = wanted <= ladders.get(alert["rule"], set())
            if alert["user"] == rule.user and urgent and recent and covers:
                return alert
        return None

    def _fold(
        self, db: sqlite_utils.Database, alert: dict[str, Any], rule: Rule, fire: Fire, now: float
    ) -> list[tuple[str, dict[str, Any]]]:
        """``fire`` joins the open ``alert``: counted, said in its detail, and sent to those
        already told; an alert the emergency skill published under its own id is closed as
        part of this one."""
        count = alert["count"] + 1
        also = [*alert["detail"].get("also", []), fire.text][-10:]
        detail = {**alert["detail"], "also": also}
        rec.update_alert(db, alert["id"], count=count, detail=detail)
        told = {r["caregiver"] for r in rec.outbox(db, alert["id"]) if r["step"] >= 0}
        when = datetime.fromtimestamp(fire.at, self.zone)
        note = f"{ladder.named(rule.user)}, also: {fire.text} ({when:%H:%M})."
        title = ladder.title(alert["severity"], rule.user)
        for who in sorted(told):
            self.queue(db, alert["id"], ladder.UPDATE - count, who, title, note, now)
        log.warning("care alert %s: the same incident again (%d times)", alert["id"], count)
        log.debug("care alert %s, again: %s", alert["id"], words(fire.text))
        out = [("updated", {**alert, "count": count, "detail": detail})]
        if fire.detail.get("alert_id"):  # published by the emergency skill: closed as joined
            joined = {
                **alert,
                "id": fire.detail["alert_id"],
                "kind": "emergency",
                "text": fire.text,
                "opened_at": fire.at,
                "state": "resolved",
                "closed_by": f"the same incident as {alert['id']}",
                "detail": {"sensor": "emergency"},
            }
            out.append(("joined", joined))
        return out

    def unwatched(
        self,
        db: sqlite_utils.Database,
        ev: Event,
        now: float,
        watchers: frozenset[str] = frozenset(),
    ) -> list[tuple[str, dict[str, Any]]]:
        """A call for help no rule watches: a care alert like any other — in the digest,
        taken with ``fayd care alerts ack``, cleared in Home Assistant when it ends. The
        caregivers who look after the person (``watchers``: added for them, or for the whole
        household) are all told at once; with none, no one is (the person heard so). A
        second call within minutes is the same incident."""
        alert_id = str(ev.data["alert_id"])
        if rec.alert(db, alert_id) is not None:  # already kept (a report sent again)
            return []
        text = str(ev.data.get("said") or "a call for help")
        for alert in rec.alerts(db, ("open",)):
            recent = 0 <= ev.at - alert["opened_at"] <= INCIDENT_S
            if alert["rule"] == NO_RULE and alert["user"] == ev.user and recent:
                count = alert["count"] + 1
                detail = {**alert["detail"], "also": [*alert["detail"].get("also", []), text][-10:]}
                rec.update_alert(db, alert["id"], count=count, detail=detail)
                joined = {
                    **alert,
                    "id": alert_id,
                    "text": text,
                    "opened_at": ev.at,
                    "state": "resolved",
                    "closed_by": f"the same incident as {alert['id']}",
                    "detail": {"sensor": EMERGENCY},
                }
                updated = {**alert, "count": count, "detail": detail}
                return [("updated", updated), ("joined", joined)]
        alert = {
            "id": alert_id,
            "rule": NO_RULE,
            "user": ev.user,
            "kind": "emergency",
            "severity": "critical",
            "text": text,
            "state": "open",
            "opened_at": ev.at,
            "step": 0,  # no check-in, no ladder: it waits to be acknowledged
            "step_until": None,
            "count": 1,
            "closed_at": None,
            "closed_by": None,
            "detail": {
                "sensor": EMERGENCY,
                "device": ev.device,
                "key": "",
                "answer": "skipped",
                "unwatched": True,
                "emergency": str(ev.data.get("emergency") or "help"),  # "fall", "chest_pain" …
            },
        }
        rec.insert_alert(db, alert)
        log.warning("care alert %s for %s: a call for help no rule watches", alert_id, ev.user)
        if watchers:  # a stroke said aloud reaches the daughter added for her, rule or none
            title, body = self.message(alert, 0)
            for who in sorted(watchers):
                self.queue(db, alert_id, 0, who, title, body, now)
            log.warning("care alert %s: telling %s", alert_id, ", ".join(sorted(watchers)))
        return [("opened", alert)]

    def clear(
        self, db: sqlite_utils.Database, rule: Rule, clear: Clear, now: float
    ) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for alert in rec.alerts(db, ("open", "acknowledged")):
            if alert["rule"] == rule.name and alert["detail"].get("key", "") == clear.key:
                out.append(("resolved", self.close(db, alert, "resolved", clear.why, now)))
        return out

    # --- the ladder -----------------------------------------------------------------------

    def escalate(self, db: sqlite_utils.Database, now: float) -> list[tuple[str, dict]]:
        rules = {r.name: r for r in rec.rules(db)}
        out = []
        for alert in rec.alerts(db, ("open",)):
            until, rule = alert["step_until"], rules.get(alert["rule"])
            if until is None or until > now or rule is None:
                continue
            if alert["step"] == ladder.CHECKIN and not alert["detail"].get("answer"):
                alert["detail"]["answer"] = "silence"
            out.append(("escalated", self.climb(db, alert, rule, now)))
        return out

    def climb(
        self, db: sqlite_utils.Database, alert: dict[str, Any], rule: Rule, now: float
    ) -> dict[str, Any]:
        """The next rung: its caregiver's notifications queued, their time to acknowledge
        set — all in the caller's transaction."""
        step = alert["step"] + 1
        until = None
        if step < len(rule.ladder):
            who, ack_s = rule.ladder[step]
            title, body = self.message(alert, step)
            self.queue(db, alert["id"], step, who, title, body, now)
            until = now + ack_s
            log.warning("care alert %s: telling %s (rung %d)", alert["id"], who, step + 1)
        elif rule.ladder:
            log.error("care alert %s: no caregiver acknowledged; all were told", alert["id"])
        rec.update_alert(db, alert["id"], step=step, step_until=until, detail=alert["detail"])
        return {**alert, "step": step, "step_until": until}

    def message(self, alert: dict[str, Any], step: int) -> tuple[str, str]:
        """The title and body of the notification of rung ``step``."""
        also = alert["detail"].get("also") or []
        body = ladder.notice(
            alert["id"],
            alert["user"],
            "; also: ".join([alert["text"], *also]),
            alert["opened_at"],
            self.zone,
            step,
            alert["detail"].get("answer", ""),
            alert["detail"].get("unasked", ""),
        )
        return ladder.title(alert["severity"], alert["user"]), body

    def queue(
        self,
        db: sqlite_utils.Database,
        alert: str,
        step: int,
        who: str,
        title: str,
        body: str,
        now: float,
    ) -> None:
        urls = rec.caregivers(db).get(who, [])
        if not urls:
            log.error("care alert %s: caregiver %s has no channel left", alert, who)
        rows = [
            {
                "alert": alert,
                "step": step,
                "caregiver": who,
                "url": u,
                "title": title,
                "body": body,
                "at": now,
            }
            for u in urls
        ]
        rec.enqueue(db, rows)

    def close(
        self, db: sqlite_utils.Database, alert: dict[str, Any], state: str, why: str, now: float
    ) -> dict[str, Any]:
        """Acknowledged or resolved: the ladder stops; those already told hear how it ended."""
        rec.update_alert(
            db, alert["id"], state=state, step_until=None, closed_at=now, closed_by=why
        )
        told = {r["caregiver"] for r in rec.outbox(db, alert["id"]) if r["step"] >= 0}
        note = ladder.closing(alert["user"], alert["text"], state, why)
        for who in sorted(told):
            ending = "taken care of" if state == "acknowledged" else "all clear"
            title = f"fayd: {ending} for {ladder.named(alert['user'])}"
            self.queue(db, alert["id"], ladder.CLOSING, who, title, note, now)
        log.info("care alert %s %s: %s", alert["id"], state, why)
        return {**alert, "state": state, "step_until": None, "closed_at": now, "closed_by": why}

    def answer(
        self, db: sqlite_utils.Database, alert_id: str, meaning: str, answer: str | None, now: float
    ) -> list[tuple[str, dict[str, Any]]]:
        alert = rec.alert(db, alert_id)
        if alert is None or alert["state"] != "open" or alert["step"] != ladder.CHECKIN:
            return []
        if meaning == "fine":
            why = f"{alert['user']} said they are fine ({answer!r})"
            return [("resolved", self.close(db, alert, "resolved", why, now))]
        detail = {**alert["detail"], "answer": meaning}
        if meaning == ladder.UNASKED:  # ``answer`` is why nothing could be asked
            detail["unasked"] = answer or "offline"
        rec.update_alert(db, alert_id, step_until=now, detail=detail)
        return []

    def still_true(self, db: sqlite_utils.Database, about: str) -> bool:
        """Whether words waiting to be said about an alert are still true: ``about`` is
        "<alert id>:open" (the alert is open) or "<alert id>:asking" (its check-in is)."""
        alert_id, _, what = about.rpartition(":")
        alert = rec.alert(db, alert_id)
        if alert is None or alert["state"] != "open":
            return False
        return what != "asking" or alert["step"] == ladder.CHECKIN

    def acknowledge(
        self, db: sqlite_utils.Database, alert_id: str, by: str, state: str, now: float
    ) -> dict[str, Any]:
        alert = rec.alert(db, alert_id)
        if alert is None:
            raise LookupError(f"no care alert {alert_id!r}")
        if alert["state"] == "resolved" or alert["state"] == state:
            return alert
        return self.close(db, alert, state, f"{state} by {by}", now)
