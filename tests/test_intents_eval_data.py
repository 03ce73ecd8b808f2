"""The intent evaluation set (benchmarks/data/intents_eval.jsonl, format in
docs/understanding.md) is well formed, large enough where it matters, and unseen by the
router: no line is one of the router's own example phrases."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from fayd.agent.language.declared import DECLARED, KNOWN

ROOT = Path(__file__).parents[1]
DATA = ROOT / "benchmarks" / "data" / "intents_eval.jsonl"
DEFAULT_NOW = datetime(2026, 12, 1, 10, 0)

INTENTS = KNOWN | {"emergency"}  # emergencies are found before the examples
SLOT_KEYS = {
    "emergency": {"kind"},
    "clock.until": {"date", "holiday"},
    "device.gesture": {"gesture", "device"},
    "device.volume": {"level", "change", "mute"},
    "device.brightness": {"level", "change"},
    "device.sleep": {"duration_s", "until"},
    "memory.remember": {"fact", "content"},
    "memory.recall": {"query"},
    "preference.quiet": {"start", "end"},
    "reminder.set": {"what", "when", "recurrence"},
    "timer.set": {"duration_s", "name"},
    "info.offline": {"topic"},
    "care.rule": {"who", "kind", "sensor", "by", "room", "above", "below"},
}
KINDS = {"fall", "chest_pain", "breathing", "stroke", "bleeding", "help"}
HOLIDAYS = {"christmas", "new_year", "easter", "spring_festival", "mid_autumn"}
GESTURES = set(
    "bow care celebrate cheer comfort explain invite jump laugh listen nod question recommend"
    " remind sad shake_head summary surprise think wait warn wave dance look".split()
)
RULE_KINDS = {"missing", "threshold", "event"}
WEEKDAYS = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
EVERY = {"day", "weekday", "week", "hours"}
FIELDS = {
    "text": str,
    "lang": str,
    "intent": str,
    "slots": dict,
    "now": str,
    "audio": bool,
    "note": str,
}
REQUIRED = {"text", "lang", "intent"}
ISO_MINUTE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")
HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
CJK = re.compile(r"[\u3400-\u9fff]")

MIN_LINES = 340
MIN_PER_INTENT = 12
MIN_EMERGENCY = 50
MIN_CHITCHAT = 40
MIN_HARD_NEGATIVES = 45


def _lines() -> list[dict]:
    return [
        json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _norm(text: str) -> str:
    """Lower case, no punctuation, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in text)
    return " ".join(text.split())


def _iso(value: object) -> datetime:
    assert isinstance(value, str) and ISO_MINUTE.match(value), value
    return datetime.fromisoformat(value)


def _level(value: object) -> None:
    assert isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100, value


def _one_of(slots: dict, keys: set[str]) -> str:
    present = keys & slots.keys()
    assert len(present) == 1, f"exactly one of {sorted(keys)}: {slots}"
    return present.pop()


def _check_slots(intent: str, slots: dict, now: datetime) -> None:
    assert slots, "an empty slots object: leave it out instead"
    assert intent in SLOT_KEYS, f"{intent} has no slots"
    assert slots.keys() <= SLOT_KEYS[intent], f"unknown slot keys {set(slots) - SLOT_KEYS[intent]}"
    if intent == "emergency":
        assert slots["kind"] in KINDS
    elif intent == "clock.until":
        if _one_of(slots, {"date", "holiday"}) == "date":
            day = datetime.strptime(slots["date"], "%Y-%m-%d")
            assert day.date() > now.date(), "a date to count down to lies ahead"
        else:
            assert slots["holiday"] in HOLIDAYS
    elif intent == "device.gesture":
        assert slots["gesture"] in GESTURES
    elif intent in ("device.volume", "device.brightness"):
        key = _one_of(slots, SLOT_KEYS[intent])
        if key == "level":
            _level(slots["level"])
        elif key == "change":
            assert slots["change"] in ("up", "down")
        else:
            assert isinstance(slots["mute"], bool)
    elif intent == "device.sleep":
        if _one_of(slots, {"duration_s", "until"}) == "duration_s":
            assert isinstance(slots["duration_s"], int) and slots["duration_s"] > 0
        else:
            assert _iso(slots["until"]) > now
    elif intent == "memory.remember" and "fact" in slots:
        fact = slots["fact"]
        assert isinstance(fact, dict) and set(fact) == {"subject", "predicate", "object"}
        assert all(isinstance(v, str) and v.strip() for v in fact.values())
    elif intent == "preference.quiet":
        assert set(slots) == {"start", "end"}
        assert HHMM.match(slots["start"]) and HHMM.match(slots["end"]), slots
    elif intent == "reminder.set":
        assert isinstance(slots.get("what"), str) and slots["what"].strip()
        assert not re.match(r"(?i)(to|remind me)\b", slots["what"]), slots["what"]
        if _one_of(slots, {"when", "recurrence"}) == "when":
            assert _iso(slots["when"]) > now, "a one-off reminder lies ahead"
        else:
            rec = slots["recurrence"]
            assert isinstance(rec, dict) and rec.keys() <= {"every", "at", "days"}
            assert rec["every"] in EVERY and HHMM.match(rec["at"])
            if rec["every"] == "week":
                assert rec["days"] and set(rec["days"]) <= WEEKDAYS
            else:
                assert "days" not in rec
    elif intent == "care.rule":
        assert slots["kind"] in RULE_KINDS and isinstance(slots["sensor"], str)
        if slots["kind"] == "missing" and "by" in slots:
            assert HHMM.match(slots["by"]), slots
        for side in ("above", "below"):
            limits = slots.get(side, {})
            assert all(isinstance(v, int | float) for v in limits.values()), slots
            assert slots["kind"] == "threshold" or not limits, slots
    elif intent == "timer.set":
        assert isinstance(slots["duration_s"], int) and slots["duration_s"] > 0
        if "name" in slots:
            assert isinstance(slots["name"], str) and slots["name"].strip()


def test_every_line_is_well_formed() -> None:
    for number, line in enumerate(_lines(), 1):
        where = f"line {number}: {line}"
        assert REQUIRED <= line.keys() <= FIELDS.keys(), where
        for key, kind in FIELDS.items():
            if key in line:
                assert isinstance(line[key], kind), where
        assert line["text"].strip(), where
        assert line["intent"] in INTENTS, where
        assert line["lang"] == ("zh" if CJK.search(line["text"]) else "en"), where
        now = _iso(line["now"]) if "now" in line else DEFAULT_NOW
        note = line.get("note", "")
        if note.startswith("ambiguous"):
            assert "slots" not in line, where
        if "slots" in line:
            try:
                _check_slots(line["intent"], line["slots"], now)
            except (AssertionError, KeyError, ValueError, TypeError) as e:
                pytest.fail(f"{where}: {e!r}")


def test_counts() -> None:
    lines = _lines()
    assert len(lines) >= MIN_LINES
    per_intent = Counter(line["intent"] for line in lines)
    assert set(per_intent) == INTENTS
    for intent, n in per_intent.items():
        assert n >= MIN_PER_INTENT, (intent, n)
    assert per_intent["emergency"] >= MIN_EMERGENCY
    assert per_intent["chitchat"] >= MIN_CHITCHAT
    langs = Counter(line["lang"] for line in lines)
    assert 0.62 <= langs["en"] / len(lines) <= 0.78, langs
    for lang in ("en", "zh"):
        these = [line for line in lines if line["lang"] == lang]
        assert {line["intent"] for line in these} == INTENTS, lang
        kinds = {
            line["slots"]["kind"]
            for line in these
            if line["intent"] == "emergency" and "slots" in line
        }
        assert kinds == KINDS, (lang, kinds)


def test_hard_negatives() -> None:
    hard = [line for line in _lines() if line.get("note", "").startswith("hard negative")]
    assert len(hard) >= MIN_HARD_NEGATIVES
    assert all(line["intent"] != "emergency" for line in hard)
    assert {line["lang"] for line in hard} == {"en", "zh"}


def test_unseen_by_the_router() -> None:
    examples = {
        _norm(p) for d in DECLARED.values() for phrases in d.examples.values() for p in phrases
    }
    texts = [_norm(line["text"]) for line in _lines()]
    assert not [t for t in texts if t in examples]
    assert len(texts) == len(set(texts)), [t for t, n in Counter(texts).items() if n > 1]
