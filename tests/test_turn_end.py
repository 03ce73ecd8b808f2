"""Semantic endpointing's judgement (fayd.agent.turn_end): what speech recognition wrote at
a pause, with the real router's decision on it. The texts are Whisper's own on utterances
cut at a slow speaker's pause (benchmarks/endpointing.py's set)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fayd.agent.turn_end import Verdict, judge

pytestmark = pytest.mark.models

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)

DONE = [
    "What time is it?",
    "Set a timer for 10 minutes.",
    "Did I take my medicine this morning?",
    "Thank you very much.",
    "Turn on the kitchen light please.",
    "I feel a bit dizzy.",
    "Good night.",
    "Remind me to call my daughter at 5 o'clock this afternoon.",
    "Help!",
    "I've fallen and I can't get up...",  # an emergency never waits, whatever follows
    "现在几点了",
    "明天早上8点提醒我吃药",
    "谢谢你",
]
MORE = [
    "Set a timer for-",  # Whisper's dash: a word cut off
    "I would like to...",
    "Tell me about",  # no full stop: the voice did not fall
    "Well.",
    "And then...",
    "So",
    "If it gets cold.",
    "Remind me tomorrow morning.",  # to do what?
    "Set a timer for it.",  # for how long?
    "Please remind me to-",
    "I made some soup for lunch, but...",
    "我想",
    "嗯",
    "我今天去了公园，然后",
]
UNSURE = [
    "I made some soup for lunch.",
    "My son is coming.",
    "Can you tell me?",
    "I would like to hear a story about the sea.",
    "十分钟以后",  # a guessed timer: the words for it may still be coming
    "我的眼镜",
    "",
]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [(t, Verdict.DONE) for t in DONE]
    + [(t, Verdict.MORE) for t in MORE]
    + [(t, Verdict.UNSURE) for t in UNSURE],
)
def test_the_words_so_far_say_whether_the_speaker_is_done(router, text, verdict) -> None:
    assert judge(text, router.route(text, NOW)) is verdict


def test_without_a_router_only_the_words_decide() -> None:
    assert judge("Set a timer for-", None) is Verdict.MORE
    assert judge("What time is it?", None) is Verdict.UNSURE  # nothing says it is understood


@pytest.mark.parametrize(
    "text", ["\udcff", "🙂🙂", "x" * 10_000, "999999999999999999999?", "？", "...", "and"]
)
def test_hostile_text_gets_a_verdict(router, text) -> None:
    assert judge(text, router.route(text, NOW)) in Verdict
