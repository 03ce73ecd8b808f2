"""The dialogue recall set (benchmarks/data/recall_dialogues.py) is what its docstring says:
deterministic, its evidence real, its dates right, its questions worded away from the turns.
No model: the set alone."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from datetime import date

import pytest

from benchmarks.data.dialogue_dates import phrase, resolve
from benchmarks.data.recall_dialogues import KINDS, Dialogues, build, human_date, overlap


@pytest.fixture(scope="module")
def dev() -> Dialogues:
    return build(7)


def test_the_same_seed_gives_the_same_set(dev: Dialogues) -> None:
    again = build(7)
    assert [t.content for t in again.turns] == [t.content for t in dev.turns]
    assert [(q.query, q.evidence, q.answer) for q in again.questions] == [
        (q.query, q.evidence, q.answer) for q in dev.questions
    ]
    fewer = build(7, 2)  # --pairs 2: the first two pairs of the same set
    assert [t.content for t in fewer.turns] == [t.content for t in dev.turns[: len(fewer.turns)]]
    other = build(8)
    assert [t.content for t in other.turns] != [t.content for t in dev.turns]


def test_sizes_kinds_and_languages(dev: Dialogues) -> None:
    kinds = Counter(q.kind for q in dev.questions)
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= 40, kinds
    assert len(dev.questions) >= 350
    assert {q.lang for q in dev.questions} == {"en", "zh"}
    assert any(re.search("[\u4e00-\u9fff]", t.content) for t in dev.turns)
    for pair, dates in dev.sessions.items():
        assert 15 <= len(dates) <= 19, pair
        assert 100 <= (dates[-1] - dates[0]).days <= 250, pair  # about 4 to 8 months
        per = Counter(t.session for t in dev.turns if t.pair == pair)
        assert min(per.values()) >= 25, pair


def test_two_speakers_take_turns(dev: Dialogues) -> None:
    for (pair, session), turns in _sessions(dev).items():
        speakers = [t.speaker for t in turns]
        assert len(set(speakers)) == 2, (pair, session)
        assert all(a != b for a, b in itertools.pairwise(speakers)), (pair, session)
        assert all(t.content.startswith(t.speaker) for t in turns)


def test_small_talk_is_not_one_line_repeated(dev: Dialogues) -> None:
    """Greetings and goodbyes recur (people have habits); the rest of the chatter mostly
    does not, so the set tests memory, not de-duplication."""
    chat = [(t.pair, t.text) for t in dev.turns if not t.fact]
    assert len(set(chat)) >= 0.75 * len(chat)


def test_evidence_exists_and_multihop_spans_sessions(dev: Dialogues) -> None:
    turns = {t.id: t for t in dev.turns}
    assert len(turns) == len(dev.turns)
    for q in dev.questions:
        assert q.evidence and all(e in turns for e in q.evidence), q.id
        assert all(turns[e].pair == q.pair and turns[e].fact for e in q.evidence), q.id
        assert all(turns[e].speaker == q.about for e in q.evidence), q.id
        if q.kind in ("multihop", "inference"):
            assert len({turns[e].session for e in q.evidence}) >= 2, q.id


def test_update_evidence_is_the_latest_statement(dev: Dialogues) -> None:
    turns = {t.id: t for t in dev.turns}
    for q in (q for q in dev.questions if q.kind == "update"):
        (latest,) = q.evidence
        plan = turns[latest].fact.rsplit(".", 1)[0]  # "u.job.1" → "u.job"
        same = [t for t in dev.turns if t.pair == q.pair and t.speaker == q.about
                and t.fact and t.fact.startswith(plan + ".")]  # fmt: skip
        assert same[-1].id == latest and len(same) >= 2, q.id


def test_temporal_gold_dates_follow_from_the_session_dates(dev: Dialogues) -> None:
    """Every date in a gold answer, read back from the words of its turn and the date
    of the session it was said in."""
    turns = {t.id: t for t in dev.turns}
    checked = 0
    for q in (q for q in dev.questions if q.kind == "temporal"):
        assert q.dates, q.id
        for e, gold in zip(q.evidence, q.dates, strict=True):
            t = turns[e]
            said_on = dev.sessions[t.pair][t.session]
            found = {resolve(w, said_on, q.lang) for w in _date_words(t.text, q.lang)}
            assert date.fromisoformat(gold) in found, (q.id, t.text, said_on, gold)
            checked += 1
        # the date is the answer, or the question gives it ("What did Tom do on 10 March?")
        written = human_date(date.fromisoformat(q.dates[-1]), q.lang)
        assert q.dates[-1] in q.answer or written in q.query, q.id
    assert checked >= 60


def test_relative_phrases_round_trip() -> None:
    said = date(2025, 3, 12)  # a Wednesday
    for lang in ("en", "zh"):
        for days in range(-20, 21):
            event = date.fromordinal(said.toordinal() + days)
            assert resolve(phrase(event, said, lang), said, lang) == event, (lang, days)
    assert phrase(date(2025, 3, 8), said, "zh") == "上周六"
    assert phrase(date(2025, 3, 8), said, "en") == "last Saturday"


def test_questions_are_worded_away_from_their_turns(dev: Dialogues) -> None:
    """The share of a question's content words in its evidence turns (names of people and
    places count): low on average, and few questions close to their turns' words."""
    text = {t.id: t.content for t in dev.turns}
    shares = {q.id: overlap(q, text) for q in dev.questions}
    for kind in KINDS:
        mine = [shares[q.id] for q in dev.questions if q.kind == kind]
        assert sum(mine) / len(mine) <= 0.25, (kind, sum(mine) / len(mine))
    close = [q.query for q in dev.questions if shares[q.id] > 0.5]  # "When is Tom's birthday?"
    assert len(close) <= 0.1 * len(dev.questions), close


def _sessions(dev: Dialogues) -> dict:
    out: dict = {}
    for t in dev.turns:
        out.setdefault((t.pair, t.session), []).append(t)
    return out


_EN_DATE = re.compile(
    r"the day before yesterday|yesterday|today|tomorrow|(?:on|this|last|next) [A-Z][a-z]+day"
    r"|the [A-Z][a-z]+day before last|on the \d+[a-z]{2} of [A-Z][a-z]+"
)
_ZH_DATE = re.compile(
    r"前天|昨天|今天|明天|后天|(?:上上周|上周|这周|下周)[一二三四五六日]|\d+月\d+号"
)


def _date_words(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return _ZH_DATE.findall(text)
    return _EN_DATE.findall(text[:1].lower() + text[1:])  # "Yesterday we…" starts a sentence
