"""The daily digest as plain data in, text out (no I/O, no clock, no language model): what a
caregiver reads on a phone in the evening about one person's day — what went well first,
then what needs attention — built only from what was recorded. A fact with no record is
never stated; what has no record at all is said to have none."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Literal, Protocol

from fayd.care.evaluate import NAMES
from fayd.care.ladder import named

Outcome = Literal["taken", "missed", "later", "no answer"]
#: A gap between two signs of movement this long or longer is told as a quiet stretch.
QUIET_S = 3 * 3600.0


@dataclass(frozen=True)
class MedicationRecord:
    """One medication check-in of the day (the reminders' records, wired by the lead)."""

    at: float
    text: str
    outcome: Outcome


class MedicationDay(Protocol):
    """The day's medication check-ins of ``user`` (the reminders' tables)."""

    async def medication(self, user: str, day: date) -> list[MedicationRecord]: ...


@dataclass(frozen=True)
class Reading:
    at: float
    sensor: str
    values: dict[str, float]
    #: The rule's limits it broke, as "above the 150/95 limit"; empty: within every limit.
    broke: tuple[str, ...] = ()
    #: A care rule had limits for this sensor (else it is only reported).
    judged: bool = False


@dataclass(frozen=True)
class AlertEnd:
    at: float
    text: str
    severity: str
    state: str  # open | acknowledged | resolved
    closed_at: float | None
    closed_by: str | None
    told: tuple[str, ...] = ()
    #: A call for help said aloud: what it was ("fall", "chest_pain"; fayd.agent.care.skill).
    emergency: str = ""


@dataclass
class DayFacts:
    """Everything the digest may say, as recorded."""

    user: str
    day: date
    #: When each sign of movement (motion, door, bed, chair) came, with its place.
    activity: list[tuple[float, str]] = field(default_factory=list)
    readings: list[Reading] = field(default_factory=list)
    alerts: list[AlertEnd] = field(default_factory=list)
    #: Panic presses and falls no alert speaks for: (time, words).
    incidents: list[tuple[float, str]] = field(default_factory=list)
    #: What the person said to fayd today (their own words only).
    said: list[str] = field(default_factory=list)
    #: Feeling unwell, as they told fayd (sensor ``wellbeing``): (time, kind, their words).
    symptoms: list[tuple[float, str, str]] = field(default_factory=list)
    #: None: no medication records are wired or kept.
    medication: list[MedicationRecord] | None = None


#: A ``wellbeing`` event's kind (fayd.agent.care.symptoms) as the digest says it.
#: What a call for help said aloud was (the emergency skill's kinds).
EMERGENCIES = {
    "fall": "a fall",
    "chest_pain": "chest pain",
    "breathing": "trouble breathing",
    "stroke": "signs of a stroke",
    "bleeding": "bleeding",
    "burn": "a burn",
    "fire": "smoke or fire",
    "gas": "a smell of gas",
    "medicine": "too much medicine",
    "help": "a call for help",
}


def _alert_said(alert: AlertEnd) -> str:
    """An alert's words for the digest: a call for help by what it was, with the person's
    words quoted ("a fall (“I've gone down in the kitchen”)"); else its own text."""
    text = alert.text.rstrip(" .")
    if alert.emergency not in EMERGENCIES:
        return text
    return f"{EMERGENCIES[alert.emergency]} (“{text}”)"


SYMPTOMS = {
    "dizzy": "feeling dizzy",
    "unsteady": "feeling unsteady",
    "funny_turn": "having a funny turn",
    "confused": "feeling muddled",
    "appetite": "not feeling like eating",
    "sleep": "sleeping badly",
    "pain": "being in pain",
    "sick": "feeling sick",
    "weak": "feeling weak",
    "unwell": "feeling unwell",
}


# --- mood: a small lexicon, counted, never guessed --------------------------------------------

#: Clearly positive or negative words and phrases, in English and Chinese. A match is
#: counted once per message per feeling; "not happy" is not counted as happy.
FEELINGS: dict[str, tuple[str, ...]] = {
    "cheerful": (
        r"\b(happy|lovely|wonderful|glad|cheerful|enjoyed|delighted|(good|great|lovely) day|"
        r"(feel|feeling|felt) (great|good|better))\b",
        r"开心|高兴|快乐|真好",
    ),
    "lonely": (
        r"\b(lonely|all alone|on my own all day|nobody visits|no one visits|"
        r"miss (him|her|them))\b",
        r"孤独|寂寞|想念",
    ),
    "sad": (
        r"\b(sad|(feel|feeling|felt) (down|low|blue)|depressed|miserable|unhappy|crying|cried)\b",
        r"难过|伤心|不开心|哭",
    ),
    "worried": (r"\b(worried|anxious|scared|afraid|nervous)\b", r"担心|害怕|焦虑"),
    "in pain": (r"\b(pain|hurts?|aching|sore)\b", r"疼|痛"),
    "tired": (r"\b(tired|exhausted|worn out|can'?t sleep|couldn'?t sleep)\b", r"累|睡不着"),
}
_NEGATED = re.compile(r"(\bnot|\bnever|n't|\bno longer)\s+(\w+\s+)?$|不$|没$", re.I)


def feelings(said: list[str]) -> dict[str, tuple[int, str]]:
    """Feeling → (messages that voiced it, the first word heard), from the person's words."""
    found: dict[str, tuple[int, str]] = {}
    for text in said:
        for feeling, patterns in FEELINGS.items():
            for pattern in patterns:
                match = next(
                    (
                        m
                        for m in re.finditer(pattern, text, re.I)
                        if not _NEGATED.search(text[: m.start()])
                    ),
                    None,
                )
                if match:
                    count, word = found.get(feeling, (0, match.group(0)))
                    found[feeling] = (count + 1, word)
                    break
    return found


# --- words ---------------------------------------------------------------------------------


def _hhmm(at: float, zone: tzinfo) -> str:
    return f"{datetime.fromtimestamp(at, zone):%H:%M}"


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _num(v: float) -> str:
    return f"{v:g}"


def reading_words(r: Reading) -> str:
    """ "blood pressure 152/96", "oxygen level 94" """
    name = NAMES.get(r.sensor, r.sensor.replace("_", " "))
    if r.sensor == "bp" and "sys" in r.values and "dia" in r.values:
        return f"{name} {_num(r.values['sys'])}/{_num(r.values['dia'])}"
    value = next(iter(r.values.values()), None)
    unit = " °C" if "temperature" in r.sensor else ""
    return f"{name} {_num(value)}{unit}" if value is not None else name


def place(device: str) -> str:
    """A device's place as a person says it: kitchen-1 → kitchen."""
    return re.sub(r"[-_]?\d+$", "", device).replace("-", " ").replace("_", " ") or device


def quiet_stretches(activity: list[tuple[float, str]]) -> list[tuple[float, float]]:
    times = sorted(t for t, _ in activity)
    return [(a, b) for a, b in itertools.pairwise(times) if b - a >= QUIET_S]


def compose(facts: DayFacts, zone: tzinfo, today: date | None = None) -> str:
    """The digest's text: a heading, what went well, what needs attention, what has no
    record. Short paragraphs; every sentence comes from one recorded fact. ``today``: the
    day it is now (the day's "today" is said only of it)."""
    who = facts.user[:1].upper() + facts.user[1:]
    that_day = "today" if facts.day == today else "that day"
    at = lambda t: _hhmm(t, zone)  # noqa: E731
    good: list[str] = []
    attention: list[str] = []
    missing: list[str] = []

    if facts.activity:
        first, last = facts.activity[0][0], facts.activity[-1][0]
        places = list(dict.fromkeys(place(d) for _, d in facts.activity))
        span = f"from {at(first)} to {at(last)}" if last - first >= 60 else f"at {at(first)}"
        good.append(f"{who} was up and about {span} (movement in the {_list(places)}).")
        for start, end in quiet_stretches(facts.activity):
            hours = (end - start) / 3600
            attention.append(
                f"No movement was seen from {at(start)} to {at(end)} ({hours:.1f} hours)."
            )
    else:
        missing.append("no movement was recorded")

    for r in facts.readings:
        words = f"{reading_words(r)} at {at(r.at)}"
        if r.broke:
            attention.append(f"Reading: {words}, {' and '.join(r.broke)}.")
        elif r.judged:
            good.append(f"Reading: {words}, within the limits set.")
        else:
            good.append(f"Reading: {words}.")

    if facts.medication is None:
        missing.append("no medication records")
    else:
        taken = [m for m in facts.medication if m.outcome == "taken"]
        if taken:
            good.append(
                "Medication taken: " + _list([f"{m.text} at {at(m.at)}" for m in taken]) + "."
            )
        for m in facts.medication:
            if m.outcome == "missed":
                attention.append(f"Medication missed: {m.text} ({at(m.at)}).")
            elif m.outcome == "later":
                attention.append(f"Medication put off for later: {m.text} ({at(m.at)}).")
            elif m.outcome == "no answer":
                attention.append(f"No answer to the medication reminder: {m.text} ({at(m.at)}).")
        if not facts.medication:
            missing.append("no medication check-ins")

    for a in facts.alerts:
        told = (
            f"; {_list([named(t) for t in a.told])} {'was' if len(a.told) == 1 else 'were'} told"
            if a.told
            else ""
        )
        said = _alert_said(a)
        if a.state == "open":
            attention.append(f"Alert at {at(a.at)}: {said}. It is still open{told}.")
            continue
        ended = f"{a.closed_by} at {at(a.closed_at)}" if a.closed_at else (a.closed_by or a.state)
        attention.append(f"Alert at {at(a.at)}: {said}{told}. It ended: {ended}.")
    for when, words in facts.incidents:
        attention.append(f"{words} at {at(when)}.")
    for when, kind, said in facts.symptoms:
        what = SYMPTOMS.get(kind, "feeling unwell")
        quoted = f" (“{said}”)" if said else ""
        attention.append(f"{who} told me about {what} at {at(when)}{quoted}.")

    if facts.said:
        n = len(facts.said)
        good.append(f"{who} talked with me {_times(n)}.")
        mood = feelings(facts.said)
        if "cheerful" in mood:
            count, word = mood.pop("cheerful")
            good.append(f"{who} sounded cheerful {_times(count)} (said “{word}”).")
        for feeling, (count, word) in mood.items():
            attention.append(f"{who} mentioned feeling {feeling} {_times(count)} (“{word}”).")
    else:
        missing.append(f"no conversations {that_day}")

    heading = f"{who}'s day, {facts.day:%A} {facts.day.day} {facts.day:%B %Y}"
    if not (facts.activity or facts.readings or facts.alerts or facts.said or facts.symptoms):
        if not facts.incidents and not (facts.medication or []):
            return (
                f"{heading}\n\nA quiet day: nothing was recorded for {who} {that_day} —"
                " no movement, no readings, no alerts and no conversations."
                + ("" if facts.medication is not None else " There are no medication records.")
            )
    parts = [heading]
    if good:
        parts.append("Went well:\n" + "\n".join(f"• {s}" for s in good))
    if attention:
        parts.append("Needs attention:\n" + "\n".join(f"• {s}" for s in attention))
    else:
        parts.append("Nothing needed attention.")
    if missing:
        parts.append(f"Not recorded: {_list(missing)}.")
    return "\n\n".join(parts)
