"""Our time rules (fayd.agent.clock.times) against well-kept parsers from PyPI, on the
evaluation set's reminder times, timer durations and recurrences
(benchmarks/data/intents_eval.jsonl): is there a library we could use instead?

    .venv/bin/pip install dateparser timefhuman parsedatetime jionlp   # not fayd's deps
    .venv/bin/python benchmarks/time_parsers.py [--misses]

Prints one JSON object: per parser, how many one-off times it gets to the minute (English
and Chinese), durations to the second, recurrences at all. A parser that is not installed
is reported as such. Each is given the sentence and "now" (the line's, else the default),
and the time it finds is compared in the household's zone; a date-only answer is a miss.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.intents import DATA, DEFAULT_NOW, load
from fayd.agent.clock.times import Duration, When, parse_duration, parse_when

Parse = Callable[[str, datetime, str], datetime | None]


def ours(text: str, now: datetime, lang: str) -> datetime | None:
    found = parse_when(text, now, lang)
    return found[0].at if found and isinstance(found[0], When) else None


def ours_duration(text: str, lang: str) -> int | None:
    found = parse_duration(text, lang)
    return found.seconds if isinstance(found, Duration) else None


def dateparser_time(text: str, now: datetime, lang: str) -> datetime | None:
    from dateparser.search import search_dates

    settings = {
        "RELATIVE_BASE": now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    found = search_dates(text, languages=[lang], settings=settings)
    return found[-1][1].replace(tzinfo=now.tzinfo) if found else None


def timefhuman_time(text: str, now: datetime, lang: str) -> datetime | None:
    from timefhuman import tfhConfig, timefhuman

    found = timefhuman(text, config=tfhConfig(now=now.replace(tzinfo=None)))
    found = [f for f in found if isinstance(f, datetime)]
    return found[0].replace(tzinfo=now.tzinfo) if found else None


def parsedatetime_time(text: str, now: datetime, lang: str) -> datetime | None:
    import parsedatetime

    when, how = parsedatetime.Calendar().parseDT(text, sourceTime=now.replace(tzinfo=None))
    return when.replace(tzinfo=now.tzinfo) if how else None


def jionlp_time(text: str, now: datetime, lang: str) -> datetime | None:
    import jionlp

    found = jionlp.parse_time(text, time_base=now.replace(tzinfo=None).timestamp())
    point = found.get("time", [None])[0] if isinstance(found, dict) else None
    return datetime.fromisoformat(point).replace(tzinfo=now.tzinfo) if point else None


PARSERS: dict[str, tuple[Parse, set[str]]] = {
    "fayd": (ours, {"en", "zh"}),
    "dateparser": (dateparser_time, {"en", "zh"}),
    "timefhuman": (timefhuman_time, {"en"}),
    "parsedatetime": (parsedatetime_time, {"en"}),
    "jionlp": (jionlp_time, {"zh"}),
}


def _now(line: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(line.get("now", DEFAULT_NOW)).replace(tzinfo=UTC)


def _safe(parse: Parse, text: str, now: datetime, lang: str) -> datetime | str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse(text, now, lang)
    except ImportError:
        return "not installed"
    except Exception:  # a library's own failure is a miss, not the benchmark's
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    lines = load(DATA)
    times = [x for x in lines if "when" in x.get("slots", {})]
    durations = [x for x in lines if "duration_s" in x.get("slots", {})]
    rules = [x for x in lines if "recurrence" in x.get("slots", {})]
    out: dict[str, Any] = {"times": len(times), "durations": len(durations)}
    out["recurrences"] = len(rules)
    misses: dict[str, list[str]] = {}
    for name, (parse, langs) in PARSERS.items():
        score: dict[str, Any] = {}
        for lang in ("en", "zh"):
            mine = [x for x in times if x["lang"] == lang]
            if lang not in langs or not mine:
                continue
            right = 0
            for x in mine:
                got = _safe(parse, x["text"], _now(x), lang)
                if got == "not installed":
                    score = {"installed": False}
                    break
                want = datetime.fromisoformat(x["slots"]["when"]).replace(tzinfo=UTC)
                if isinstance(got, datetime) and abs(got - want) < timedelta(seconds=30):
                    right += 1
                else:
                    misses.setdefault(name, []).append(f"{x['text']} → {got} (want {want})")
            else:
                score[f"times_{lang}"] = f"{right}/{len(mine)}"
                continue
            break
        out[name] = score
    out["fayd"]["durations"] = (
        f"{sum(ours_duration(x['text'], x['lang']) == x['slots']['duration_s'] for x in durations)}"
        f"/{len(durations)}"
    )
    print(json.dumps(out))
    if args.misses:
        print(json.dumps(misses, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
