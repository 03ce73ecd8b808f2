"""Long dialogues between two people over months, with questions on them: a recall set
written unlike ``recall_world.py`` (that one is a user talking to Fay).

``build(seed, pairs)`` returns the same set for the same seed (no network, no model): pairs
of friends (English, and Mandarin in ``dialogue_zh``), each 15-19 dated sessions over 4-8
months, 25-40 turns a session, the two speaking in turn (``"Name: words"``, both sides
stored, as in the public long-conversation benchmarks). Facts come up among small talk and
near-misses (the same people, pets and places without the fact); topics come back changed
(a new job, a move, a renamed dog, a cancelled plan); dates are said relative to the
session ("last Saturday", "上周六") and resolved to absolute dates in the gold answers.

Question kinds: ``single`` (one turn), ``temporal`` (a date, or "the weekend after her
birthday": the date turns), ``multihop`` (two turns from different sessions, each needed),
``inference`` (turns that support a judgement: "would she enjoy a hike?") and ``update``
(the latest of a changing fact: the latest statement only). Questions are paraphrased away
from the turns' words (tests/test_recall_dialogues_data.py bounds the overlap).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from types import ModuleType

from benchmarks.data import dialogue_en, dialogue_zh
from benchmarks.data.dialogue_dates import EN_MONTHS, phrase
from benchmarks.data.recall_dialogues_types import Plan
from fayd.store.lexical import CJK_STOP, STOPWORDS

KINDS = ("single", "temporal", "multihop", "inference", "update")
#: Pairs in the default set: four English, two Mandarin.
PAIRS = 6


@dataclass
class Turn:
    id: str  # "en1s03t17": pair, session, turn
    pair: str
    session: int
    speaker: str
    datetime: str  # Fay's "YYYY/MM/DD HH:MM:SS"
    text: str
    fact: str | None = None

    @property
    def content(self) -> str:
        """The stored text: the speaker's name, then the words."""
        return f"{self.speaker}{'：' if self.pair.startswith('zh') else ': '}{self.text}"


@dataclass
class Question:
    id: str
    pair: str
    lang: str
    kind: str
    about: str
    query: str
    evidence: list[str] = field(default_factory=list)
    answer: str = ""
    dates: list[str] = field(default_factory=list)  # ISO dates of the evidence events


@dataclass
class Dialogues:
    turns: list[Turn]
    questions: list[Question]
    sessions: dict[str, list[date]]  # pair → its session dates


def build(seed: int = 7, pairs: int = PAIRS) -> Dialogues:
    """The set; with fewer ``pairs``, the first pairs of the same set (quick runs)."""
    rng = random.Random(seed)
    langs = _spread(pairs)
    used: dict[str, set[str]] = {}
    turns: list[Turn] = []
    questions: list[Question] = []
    sessions: dict[str, list[date]] = {}
    counters: dict[str, int] = {}
    for mod in langs:
        counters[mod.LANG] = counters.get(mod.LANG, 0) + 1
        pair_id = f"{mod.LANG}{counters[mod.LANG]}"
        # every pair is its own memory: only the speakers' names stay unique in a language
        names = used.setdefault(mod.LANG, set())
        people = mod.people(rng, set(names))
        names.update(p["name"] for p in people)
        t, q, dates = _pair(pair_id, mod, people, rng)
        turns += t
        questions += q
        sessions[pair_id] = dates
    return Dialogues(turns, questions, sessions)


def _spread(n: int) -> tuple[ModuleType, ...]:
    """``n`` pairs, every third Mandarin from the second (two pairs have both languages)."""
    return tuple(dialogue_zh if i % 3 == 1 else dialogue_en for i in range(n))


def _session_dates(rng: random.Random) -> list[date]:
    day = date(2024, 1, 8) + timedelta(days=rng.randint(0, 420))
    out = [day]
    for _ in range(rng.randint(15, 19) - 1):
        day += timedelta(days=rng.randint(6, 13))
        out.append(day)
    return out


def _pair(pair_id: str, mod: ModuleType, people: list[dict], rng: random.Random):
    dates = _session_dates(rng)
    n = len(dates)
    # session → [(speaker index, text, fact key)]; questions wait for the turn ids
    said: list[list[tuple[int, str, str]]] = [[] for _ in range(n)]
    pending: list[tuple[int, Plan, list[tuple[int, int]], list[date]]] = []
    for who, me in enumerate(people):
        for plan in mod.plans(me, people[1 - who], rng):
            where, events = _place(plan, dates, rng)
            for i, (line, s) in enumerate(zip(plan.lines, where, strict=True)):
                text = line.text
                if events[i] is not None:
                    said_as = phrase(events[i], dates[s], mod.LANG)
                    if text.startswith("{when}"):  # "Last Saturday we…"
                        said_as = said_as[0].upper() + said_as[1:]
                    text = text.replace("{when}", said_as)
                said[s].append((who, text, f"{plan.key}.{i}"))
            pending.append((who, plan, [(s, i) for i, s in enumerate(where)], events))
    turns, where_is = _sessions(pair_id, mod, people, dates, said, rng)
    questions = []
    for who, plan, _lines, events in pending:
        for kind, query, ev, answer in plan.questions:
            evid = [where_is[f"{plan.key}.{i}", who] for i in ev]
            iso = [events[i].isoformat() for i in ev if events[i] is not None]
            fmt = {}
            for i, day in enumerate(events):
                if day is not None:  # {d0}: ISO date (answers), {h0}: as people write it
                    fmt[f"d{i}"], fmt[f"h{i}"] = day.isoformat(), human_date(day, mod.LANG)
            questions.append(
                Question(
                    id=f"{pair_id}q{len(questions):03d}",
                    pair=pair_id,
                    lang=mod.LANG,
                    kind=kind,
                    about=people[who]["name"],
                    query=query.format(**fmt),
                    evidence=evid,
                    answer=answer.format(**fmt),
                    dates=iso,
                )
            )
    return turns, questions, dates


def human_date(day: date, lang: str) -> str:
    if lang == "zh":
        return f"{day.month}月{day.day}日"
    return f"{day.day} {EN_MONTHS[day.month - 1]}"


def _place(plan: Plan, dates: list[date], rng: random.Random):
    """Each line's session (later lines in later sessions) and event date (or None)."""
    n = len(dates)
    where: list[int] = []
    events: list[date | None] = []
    for line in plan.lines:
        if line.after is not None:  # the first session after that weekend
            base = events[line.after]
            assert base is not None
            saturday = base + timedelta(days=(5 - base.weekday()) % 7 or 7)
            s = next(i for i, d in enumerate(dates) if d > saturday + timedelta(days=1))
            where.append(s)
            events.append(saturday)
            continue
        s = round(line.at * (n - 1)) + rng.randint(-1, 1)
        s = min(max(s, where[-1] + 1 if where else 0), n - 1)
        where.append(s)
        events.append(dates[s] + timedelta(days=line.offset) if line.offset is not None else None)
    if len(set(where)) < len(where) and len(where) > 1:
        raise ValueError(f"plan {plan.key}: two lines in one session (at too late)")
    return where, events


def _sessions(pair_id, mod, people, dates, said, rng):
    """Turns of every session: opener, the facts among small talk, a goodbye."""
    turns: list[Turn] = []
    where_is: dict[tuple[str, int], str] = {}
    names = [p["name"] for p in people]
    seen: set[str] = set()  # no small-talk line twice in a pair's months
    for s, day in enumerate(dates):
        start = datetime(day.year, day.month, day.day, rng.choice([9, 12, 18, 19, 20]), 0)
        first = s % 2
        blocks: list[tuple[bool, list[tuple[int, str, str | None]]]] = []
        for who, text, key in said[s]:
            blocks.append((False, [(who, text, key), (1 - who, mod.react(rng), None)]))
        target = rng.randint(25, 40)
        while sum(len(b) for _, b in blocks) < target - 4:
            who, a, b = _fresh(mod, people, rng, seen)  # who: whose life it is, or None
            either = who is None
            who = rng.randint(0, 1) if who is None else who
            blocks.append((either, [(who, a, None), (1 - who, b, None)]))
        rng.shuffle(blocks)
        hello, reply = rng.choice(mod.OPENERS)
        bye, bye_reply = rng.choice(mod.CLOSERS)
        seq = [(first, hello.format(you=names[1 - first]), None), (1 - first, reply, None)]
        for either, block in blocks:
            if block[0][0] == seq[-1][0]:
                if either:  # small talk anyone could start: the other one starts it
                    block = [(1 - w, text, key) for w, text, key in block]
                else:  # the other one asks first, so they alternate
                    seq.append((1 - block[0][0], mod.lead_in(rng), None))
            seq += block
        closer = 1 - seq[-1][0]
        seq += [(closer, bye, None), (1 - closer, bye_reply, None)]
        for t, (who, text, key) in enumerate(seq):
            at = start + timedelta(minutes=t)
            turn = Turn(
                f"{pair_id}s{s:02d}t{t:02d}", pair_id, s, names[who],
                at.strftime("%Y/%m/%d %H:%M:%S"), text, key,
            )  # fmt: skip
            turns.append(turn)
            if key:
                where_is[key, who] = turn.id
    return turns, where_is


def _fresh(mod: ModuleType, people: list[dict], rng: random.Random, seen: set[str]):
    """An exchange of small talk whose first line the pair has not said yet (if one can be
    found in a few draws)."""
    for _ in range(30):
        who, a, b = mod.small_talk(people, rng)
        if a not in seen:
            break
    seen.add(a)
    return who, a, b


_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile("[\u4e00-\u9fff]+")


def _terms(text: str, drop: str) -> set[str]:
    """Content words (4-letter stems) and Chinese bigrams, without the person's name."""
    text = text.lower().replace(drop.lower(), " ")
    words = {w[:4] for w in _WORD.findall(text) if w not in STOPWORDS and len(w) > 1}
    grams = {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}
    return words | (grams - CJK_STOP)


def overlap(q: Question, text: dict[str, str]) -> float:
    """The share of a question's content words found in its evidence turns (0: a pure
    paraphrase; names of other people and places count, as a search would see them)."""
    mine = _terms(q.query, q.about)
    theirs = set().union(*(_terms(text[e], q.about) for e in q.evidence))
    return len(mine & theirs) / len(mine) if mine else 0.0
