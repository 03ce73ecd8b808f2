"""How a moment is said after "until" (fayd.agent.skills.words.moment): as people say it
("6:21 this evening", "8 o'clock tomorrow morning"), never "until today at ... in the
evening" or "until on Sunday"."""

from __future__ import annotations

from datetime import datetime

import pytest

from fayd.agent.skills.words import moment

AFTERNOON = datetime(2026, 12, 1, 15, 0)  # a Tuesday


@pytest.mark.parametrize(
    ("at", "now", "said"),
    [
        (datetime(2026, 12, 1, 18, 21), AFTERNOON, "6:21 this evening"),
        (datetime(2026, 12, 1, 15, 30), AFTERNOON, "half past 3 this afternoon"),
        (datetime(2026, 12, 1, 23, 0), AFTERNOON, "11 o'clock tonight"),
        (datetime(2026, 12, 2, 0, 0), AFTERNOON, "midnight tonight"),
        (datetime(2026, 12, 2, 2, 0), AFTERNOON, "2 o'clock tonight"),
        (datetime(2026, 12, 2, 8, 0), AFTERNOON, "8 o'clock tomorrow morning"),
        (datetime(2026, 12, 2, 12, 0), AFTERNOON, "noon tomorrow"),
        (datetime(2026, 12, 2, 22, 0), AFTERNOON, "10 o'clock tomorrow night"),
        (datetime(2026, 12, 6, 5, 0), AFTERNOON, "Sunday 6th December at 5 o'clock in the morning"),
        (datetime(2026, 12, 1, 4, 0), datetime(2026, 12, 1, 1, 0), "4 o'clock this morning"),
        (datetime(2026, 12, 1, 10, 0), datetime(2026, 12, 1, 7, 0), "10 o'clock this morning"),
    ],
)
def test_a_moment_as_said(at: datetime, now: datetime, said: str) -> None:
    assert moment(at, now, "en") == said


def test_in_chinese_the_day_then_the_time() -> None:
    assert moment(datetime(2026, 12, 2, 8, 0), AFTERNOON, "zh").startswith("明天")


def test_a_told_sentence_mid_sentence() -> None:
    from fayd.agent.skills.words import mid_sentence, turned_round

    said = mid_sentence(turned_round("My daughter Anna is coming on Sunday"))
    assert f"You told me {said}." == "You told me your daughter Anna is coming on Sunday."
    assert mid_sentence("Anna is coming") == "Anna is coming"
    assert mid_sentence("I will see Anna") == "I will see Anna"
