"""The escalation ladder's words and choices, as plain functions: what the person is asked,
what their answer means, what each caregiver is sent."""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from fayd.care.evaluate import NAMES
from fayd.care.rules import Rule

#: Seconds the person has to answer a check-in before silence escalates.
CHECKIN_S = 120.0
#: Steps of the ladder: -1 is the check-in; 0.. the rule's caregivers in order.
CHECKIN = -1
#: Outbox steps that are not a ladder rung: the closing note to those already told.
CLOSING = -2
#: Outbox steps of the notes that add to an alert (the same incident again): UPDATE - count.
UPDATE = -10
#: A check-in's "answer" when nothing could ask it (no speaker of the person online).
UNASKED = "unasked"
#: Why a check-in could not be asked, as a caregiver reads it ({} is the person).
UNASKED_WHY = {
    "offline": "{} has no speaker online, so I could not ask if all was well.",
    "busy": "{}'s speaker stayed busy, so I could not ask if all was well.",
    "failed": "I could not ask {} if all was well: the speaker failed.",
}

_FINE = re.compile(
    r"\b(i'?m|i am)\s+(fine|ok|okay|all right|alright|good)\b|^\s*(yes|yeah|yep|fine|ok|okay|"
    r"all right|alright|i'?m fine)\b|我没事|没事|我很好|还好|挺好",
    re.I,
)
_TROUBLE = re.compile(
    r"\b(no|not|help|hurt|fallen|fell|pain|can'?t|cannot|ambulance|emergency)\b|救命|不好|疼|痛|摔",
    re.I,
)


def understood(answer: str | None) -> str:
    """A check-in's answer: "fine" resolves the alert; "trouble" or "silence" escalates.
    Anything unclear counts as trouble: a caregiver asked once too often is the lesser harm."""
    if answer is None or not answer.strip():
        return "silence"
    if _TROUBLE.search(answer) and not re.search(r"\bnot (bad|hurt)\b", answer, re.I):
        return "trouble"
    return "fine" if _FINE.search(answer) else "trouble"


def question(rule: Rule, text: str) -> str:
    """The spoken check-in: short, kind, and says what fayd noticed."""
    if rule.kind == "inactivity":
        return "I haven't seen you moving about for a while. Are you all right?"
    if rule.kind == "missing" and rule.spec.get("sensor") == "motion":
        where = rule.spec.get("device", "").split("-")[0] or "about"
        where = f"in the {where}" if where != "about" else where
        return f"I haven't seen you {where} this morning. Are you all right?"
    if rule.kind == "missing":
        what = text.removeprefix("no ").split(" by ")[0]
        return f"I haven't had your {what} yet today. Are you all right?"
    if rule.kind == "threshold":
        what = NAMES.get(rule.spec["sensor"], rule.spec["sensor"])
        return f"Your {what} reading was outside its usual range. Are you all right?"
    return "I noticed something I want to check with you. Are you all right?"


def named(user: str) -> str:
    """A household member as a caregiver reads them: "rose" → "Rose"."""
    return user[:1].upper() + user[1:]


#: What an alert is about, on the wire (devices, MQTT): never a reading or words said.
ABOUT = {
    "emergency": "needs help",
    "panic": "pressed the alarm button",
    "fall": "may have fallen",
    "unconfirmed_medication": "has not said they took their medication",
    "threshold": "has a reading outside its limits",
    "missing": "has not been seen or measured by the time set",
    "inactivity": "has not moved for a while",
    "device": "has a device that needs looking at",
}


def headline(kind: str, sensor: str | None, user: str) -> str:
    """An alert in the fewest words a screen needs ("Rose may have fallen")."""
    about = ABOUT.get(sensor or "") or ABOUT.get(kind) or "has an alert"
    return f"{named(user)} {about}"


#: A notification's title by the alert's severity.
TITLE = {"critical": "fayd: urgent alert for {}", "warning": "fayd: alert for {}"}


def title(severity: str, user: str) -> str:
    return TITLE.get(severity, "fayd: note about {}").format(named(user))


def notice(
    alert: str,
    user: str,
    text: str,
    at: float,
    zone: tzinfo,
    step: int,
    answer: str,
    unasked: str = "",
) -> str:
    """What a caregiver receives: who, what, when, and what fayd did first — only what
    happened (``unasked``: why the check-in could not be asked)."""
    when = datetime.fromtimestamp(at, zone)
    user = named(user)
    said = {
        "silence": f"I asked {user} if all was well and heard no answer.",
        "trouble": f"I asked {user} if all was well; the answer was not reassuring.",
        UNASKED: UNASKED_WHY.get(unasked, UNASKED_WHY["offline"]).format(user),
        "skipped": "",
    }.get(answer, "")
    before = " Nobody has acknowledged it yet." if step > 0 else ""
    how = f" Acknowledge: fayd care alerts ack {alert}"
    return f"{user}: {text} ({when:%a %d %b %H:%M}). {said}{before}{how}".replace("  ", " ")


def closing(user: str, text: str, state: str, how: str) -> str:
    """The note to everyone already told when an alert ends or is taken."""
    if state == "acknowledged":
        return f"Taken care of — {named(user)}: {text} ({how})."
    return f"All clear for {named(user)}: {text} — {how}."
