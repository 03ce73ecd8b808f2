"""How well the router recognises small talk (fayd/agent/smalltalk/kinds.py), which
gets a written answer instead of the model's: every line of a set routed as text, through
the whole router (so a request inside small talk goes to its skill, as it should).

    .venv/bin/python benchmarks/smalltalk.py [--data FILE] [--misses]

Each line: ``{"text": …, "lang": "en"|"zh", "topic": a topic of smalltalk.ORDER or "none"}``.
Prints one JSON object: lines, topic_accuracy (small-talk lines whose topic was found
right; feeling unwell said of an ache, being unwell or a bad night counts as right when the
``symptom`` skill takes it), caught (small-talk lines given a written answer at all),
false_catches (of the "none" lines, those given a written answer anyway, a symptom's too),
and the same by language.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from fayd.agent.understand.router import Decision

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.intents import load, router

DATA = Path(__file__).parent / "data" / "smalltalk_holdout.jsonl"
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


#: Small-talk kinds that feeling unwell now takes when the words say so (the ``symptom``
#: skill: a written answer too, kept for the care digest, help offered).
UNWELL = frozenset({"ache", "unwell", "tired"})


def topic_of(decision: Decision) -> str:
    if decision.via == "symptom":
        return "symptom"
    return decision.slots.get("topic", "none") if decision.via == "smalltalk" else "none"


def right(got: str, want: str) -> bool:
    return got == want or (got == "symptom" and want in UNWELL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--misses", action="store_true", help="also print what went wrong")
    args = parser.parse_args()
    lines, r = load(args.data), router()
    result: dict[str, float | int] = {"lines": len(lines)}
    for lang in ("all", "en", "zh"):
        some = [x for x in lines if lang in ("all", x["lang"])]
        talk = [x for x in some if x["topic"] != "none"]
        none = [x for x in some if x["topic"] == "none"]
        got = {id(x): topic_of(r.route(x["text"], NOW)) for x in some}
        suffix = "" if lang == "all" else f"_{lang}"
        result[f"topic_accuracy{suffix}"] = _share(
            sum(right(got[id(x)], x["topic"]) for x in talk), talk
        )
        result[f"caught{suffix}"] = _share(sum(got[id(x)] != "none" for x in talk), talk)
        result[f"false_catches{suffix}"] = _share(sum(got[id(x)] != "none" for x in none), none)
        if args.misses and lang == "all":
            for x in some:
                if not right(got[id(x)], x["topic"]):
                    miss = {"text": x["text"], "want": x["topic"], "got": got[id(x)]}
                    print(json.dumps(miss, ensure_ascii=False), file=sys.stderr)
    print(json.dumps(result))


def _share(n: int, of: list) -> float:
    return round(n / max(1, len(of)), 3)


if __name__ == "__main__":
    main()
