"""Times, dates, durations and recurrences as people say them (fayd.agent.clock.times).
Pure Python: no model, no I/O."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from fayd.agent.clock.times import (
    Ambiguous,
    Duration,
    Impossible,
    Rule,
    When,
    answer_ambiguous,
    parse_duration,
    parse_when,
    slot_json,
    time_spans,
)

LONDON = ZoneInfo("Europe/London")
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=LONDON)  # a Tuesday, as in the evaluation data


def at(iso: str, tz: ZoneInfo = LONDON) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=tz)


def said(text: str, lang: str = "en", now: datetime = NOW):
    """What parse_when makes of text, in one comparable value: slot_json for a time, a
    duration or a recurrence; "ask a|b" for Ambiguous; "no: reason" for Impossible."""
    found = parse_when(text, now, lang)
    if found is None:
        return None
    slot, (start, end) = found
    assert 0 <= start < end <= len(text)
    if isinstance(slot, When):
        assert slot.at.tzinfo is not None
        assert slot.at.utcoffset() == slot.at.tzinfo.utcoffset(slot.at)
    if isinstance(slot, Ambiguous):
        return "ask " + "|".join(slot_json(c) for c in slot.candidates)
    if isinstance(slot, Impossible):
        return "no: " + slot.reason
    return slot_json(slot)


EN = [
    # Clock times with no date: the next one ahead; 6-11 unmarked are asked about.
    ("8", "ask 2026-12-02T08:00|2026-12-01T20:00"),
    ("eight", "ask 2026-12-02T08:00|2026-12-01T20:00"),
    ("8 o'clock", "ask 2026-12-02T08:00|2026-12-01T20:00"),
    ("10.30", "ask 2026-12-01T10:30|2026-12-01T22:30"),
    ("1030", "ask 2026-12-01T10:30|2026-12-01T22:30"),
    ("10:30", "ask 2026-12-01T10:30|2026-12-01T22:30"),
    ("half past ten", "ask 2026-12-01T10:30|2026-12-01T22:30"),
    ("quarter to nine", "ask 2026-12-02T08:45|2026-12-01T20:45"),
    ("eight thirty", "ask 2026-12-02T08:30|2026-12-01T20:30"),
    ("half eight", "ask 2026-12-02T08:30|2026-12-01T20:30"),
    ("at eight oh five", "ask 2026-12-02T08:05|2026-12-01T20:05"),
    ("noon", "2026-12-01T12:00"),
    ("midnight", "2026-12-02T00:00"),
    ("8 am", "2026-12-02T08:00"),
    ("8pm", "2026-12-01T20:00"),
    ("8 p.m.", "2026-12-01T20:00"),
    ("at 20:00", "2026-12-01T20:00"),
    ("at 08:00", "2026-12-02T08:00"),
    ("wake me at 0700", "2026-12-02T07:00"),
    ("8 in the evening", "2026-12-01T20:00"),
    ("twenty past eight in the evening", "2026-12-01T20:20"),
    ("at five", "2026-12-01T17:00"),
    ("ten to six", "2026-12-01T17:50"),
    ("quarter past 3", "2026-12-01T15:15"),
    ("at 12", "2026-12-01T12:00"),
    # A day said.
    ("at eight tomorrow morning", "2026-12-02T08:00"),
    ("8 a.m. tomorrow", "2026-12-02T08:00"),
    ("tomorrow at 8", "2026-12-02T08:00"),
    ("today at 8", "2026-12-01T20:00"),
    ("today at 11", "2026-12-01T11:00"),  # the sooner, by day; 23:00 is no one's guess
    ("today at half ten", "ask 2026-12-01T10:30|2026-12-01T22:30"),
    ("at half eleven", "2026-12-01T11:30"),
    ("on Sunday at five", "2026-12-06T17:00"),
    ("on Tuesday at 8", "2026-12-01T20:00"),
    ("on Tuesday at 9 am", "2026-12-08T09:00"),
    ("next Tuesday", "2026-12-08T09:00"),
    ("next Tuesday at 3 pm", "2026-12-08T15:00"),
    ("on the 14th", "2026-12-14T09:00"),
    ("on the 31st", "2026-12-31T09:00"),
    ("on the 3rd of May", "2027-05-03T09:00"),
    ("May 3rd", "2027-05-03T09:00"),
    ("the third of may 2027 at 10 am", "2027-05-03T10:00"),
    ("tonight", "2026-12-01T20:00"),
    ("at 9 tonight", "2026-12-01T21:00"),
    ("tonight at 1", "2026-12-02T01:00"),
    ("this afternoon", "2026-12-01T15:00"),
    ("this evening", "2026-12-01T19:00"),
    ("tomorrow at midnight", "2026-12-03T00:00"),
    ("the day after tomorrow at noon", "2026-12-03T12:00"),
    ("in the morning", "2026-12-02T08:00"),
    # Relative.
    ("in 15 minutes", "2026-12-01T10:15"),
    ("in an hour", "2026-12-01T11:00"),
    ("in half an hour", "2026-12-01T10:30"),
    ("in two and a half hours", "2026-12-01T12:30"),
    ("in an hour and 15 minutes", "2026-12-01T11:15"),
    ("in a quarter of an hour", "2026-12-01T10:15"),
    ("call my daughter in twenty minutes", "2026-12-01T10:20"),
    ("in 2 days", "2026-12-03T10:00"),
    ("in 2 days at 8", "2026-12-03T08:00"),
    # Durations (timers, sleep).
    ("set a timer for 15 minutes", 900),
    ("sleep for an hour and a half", 5400),
    # Rules.
    ("every weekday at 8", {"every": "weekday", "at": "08:00"}),
    ("every day at seven", {"every": "day", "at": "07:00"}),
    ("every morning at 7", {"every": "day", "at": "07:00"}),
    ("every evening", {"every": "day", "at": "19:00"}),
    ("daily at 9", {"every": "day", "at": "09:00"}),
    ("every Monday and Thursday at 10", {"every": "week", "at": "10:00", "days": ["mon", "thu"]}),
    ("on mondays and thursdays at 10", {"every": "week", "at": "10:00", "days": ["mon", "thu"]}),
    ("every weekend at 10", {"every": "week", "at": "10:00", "days": ["sat", "sun"]}),
    ("monday to friday at 7", {"every": "weekday", "at": "07:00"}),
    ("every Monday", {"every": "week", "days": ["mon"]}),
    (
        "every 2 hours between 8 and 20",
        {"every": "hours", "hours": 2, "between": ["08:00", "20:00"]},
    ),
    (
        "from 8 am to 8 pm every 3 hours",
        {"every": "hours", "hours": 3, "between": ["08:00", "20:00"]},
    ),
    ("every hour", {"every": "hours", "hours": 1}),
    # Impossible.
    ("25 o'clock", "no: There is no 25 o'clock."),
    ("at 25", "no: There is no 25 o'clock."),
    ("at 10:75", "no: There is no 10:75."),
    ("13 pm", "no: There is no 13 pm."),
    ("on the 30th of February", "no: There is no 30 February."),
    ("February 30th", "no: There is no 30 February."),
    ("on the 32nd", "no: No month has a day 32."),
    ("today at 8 am", "no: That time has already passed."),
    ("this morning at 9", "no: That time has already passed."),
    ("yesterday at 5", "no: That time has already passed."),
    # No time at all: a number is no time without "at", "by" … ("take 2 pills").
    ("remind me to take 2 pills", None),
    ("good morning", None),
    ("what time is it", None),
    ("turn the volume to 40", None),
    ("every 30 minutes", None),  # no minute recurrences: not a 30-minute timer either
]

ZH = [
    ("明天早上八点", "2026-12-02T08:00"),
    ("下午三点半", "2026-12-01T15:30"),
    ("十五分钟后", "2026-12-01T10:15"),
    ("半个小时后", "2026-12-01T10:30"),
    ("一个半小时后", "2026-12-01T11:30"),
    ("两个半小时后", "2026-12-01T12:30"),
    ("一刻钟后", "2026-12-01T10:15"),
    ("过十分钟提醒我", "2026-12-01T10:10"),
    ("三天后", "2026-12-04T10:00"),
    ("周日下午五点", "2026-12-06T17:00"),
    ("星期天下午五点", "2026-12-06T17:00"),
    ("礼拜天上午十点", "2026-12-06T10:00"),
    ("下周二上午九点", "2026-12-08T09:00"),
    ("晚上九点", "2026-12-01T21:00"),
    ("今晚八点", "2026-12-01T20:00"),
    ("明早七点", "2026-12-02T07:00"),
    ("晚上十二点", "2026-12-02T00:00"),
    ("凌晨三点", "2026-12-02T03:00"),
    ("中午一点", "2026-12-01T13:00"),
    ("后天中午", "2026-12-03T12:00"),
    ("三月五号", "2027-03-05T09:00"),
    ("十四号下午两点", "2026-12-14T14:00"),
    ("二〇二七年五月三日", "2027-05-03T09:00"),
    ("十点一刻", "ask 2026-12-01T10:15|2026-12-01T22:15"),
    ("八点四十五", "ask 2026-12-02T08:45|2026-12-01T20:45"),
    ("我八点要吃药", "ask 2026-12-02T08:00|2026-12-01T20:00"),
    ("八点差一刻", "ask 2026-12-02T07:45|2026-12-01T19:45"),
    ("三点", "2026-12-01T15:00"),
    ("两点零五", "2026-12-01T14:05"),
    ("二十点", "2026-12-01T20:00"),
    ("下午15点", "2026-12-01T15:00"),
    ("８点半", "ask 2026-12-02T08:30|2026-12-01T20:30"),
    ("明天早上八点提醒我吃药", "2026-12-02T08:00"),
    ("定一个十五分钟的闹钟", 900),
    ("休息一个小时", 3600),
    ("每天早上七点", {"every": "day", "at": "07:00"}),
    ("每晚九点", {"every": "day", "at": "21:00"}),
    ("每周一和周四上午十点", {"every": "week", "at": "10:00", "days": ["mon", "thu"]}),
    ("每个工作日早上八点", {"every": "weekday", "at": "08:00"}),
    ("周一到周五早上七点", {"every": "weekday", "at": "07:00"}),
    ("每周末上午十点", {"every": "week", "at": "10:00", "days": ["sat", "sun"]}),
    (
        "每两个小时从早上八点到晚上八点",
        {"every": "hours", "hours": 2, "between": ["08:00", "20:00"]},
    ),
    ("二十五点", "no: 一天里没有二十五点。"),
    ("十点七十五分", "no: 没有十点七十五分这个时间。"),
    ("二月三十号", "no: 二月没有三十号。"),
    ("上午十五点", "no: 没有上午十五点。"),
    ("昨天下午三点", "no: 这个时间已经过去了。"),
    ("今天早上八点", "no: 这个时间已经过去了。"),
    ("大声一点", None),
    ("说慢一点", None),
    ("我女儿叫小红", None),
    ("每隔十五分钟", None),
]


@pytest.mark.parametrize(("text", "expected"), EN)
def test_english(text, expected):
    assert said(text) == expected


@pytest.mark.parametrize(("text", "expected"), ZH)
def test_chinese(text, expected):
    assert said(text, "zh") == expected


@pytest.mark.parametrize(
    ("text", "lang", "now", "expected"),
    [
        # "at eight" said early in the morning: both readings are within 24 hours: ask.
        ("at eight", "en", "2026-12-01T06:00", "ask 2026-12-01T08:00|2026-12-01T20:00"),
        ("at eight", "en", "2026-12-01T21:00", "ask 2026-12-02T08:00|2026-12-02T20:00"),
        # Marked: never asked.
        ("at 8 pm", "en", "2026-12-01T21:00", "2026-12-02T20:00"),
        ("晚上八点", "zh", "2026-12-01T21:00", "2026-12-02T20:00"),
        # A period that has begun: the next whole hour.
        ("this afternoon", "en", "2026-12-01T16:10", "2026-12-01T17:00"),
        ("this afternoon", "en", "2026-12-01T18:30", "no: That time has already passed."),
        # Today's weekday when the time has passed: next week.
        ("on Tuesday at 9 am", "en", "2026-12-01T09:30", "2026-12-08T09:00"),
        # A date with no year that has passed this year: next year.
        ("May 3rd at 10 am", "en", "2026-05-03T11:00", "2027-05-03T10:00"),
        ("on the 29th of February", "en", "2027-12-01T10:00", "2028-02-29T09:00"),
        (
            "on the 29th of February",
            "en",
            "2026-03-01T10:00",
            "no: There is no 29 February in 2027.",
        ),
    ],
)
def test_depends_on_now(text, lang, now, expected):
    assert said(text, lang, at(now)) == expected


def test_ambiguous_questions_in_the_sentences_language():
    slot, _ = parse_when("remind me at eight", NOW)
    assert slot.question == "Eight in the morning or in the evening?"
    assert [c.at for c in slot.candidates] == [at("2026-12-02T08:00"), at("2026-12-01T20:00")]
    slot, _ = parse_when("八点提醒我", NOW, "zh")
    assert slot.question == "是早上八点还是晚上八点？"
    assert parse_when("10:30", NOW)[0].question == "Half past ten in the morning or in the evening?"
    assert parse_when("十点半", NOW, "zh")[0].question == "是上午十点半还是晚上十点半？"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("in the evening", "2026-12-01T20:00"),
        ("the evening please", "2026-12-01T20:00"),
        ("morning", "2026-12-02T08:00"),
        ("8 pm", "2026-12-01T20:00"),
        ("20:00", "2026-12-01T20:00"),
        ("at 8 in the morning", "2026-12-02T08:00"),
        ("the first one", "2026-12-02T08:00"),
        ("the second", "2026-12-01T20:00"),
        ("9 pm", "2026-12-01T21:00"),  # another time said in full
        ("eight", "again"),
        ("yes", None),
        ("", None),
    ],
)
def test_answer_ambiguous_english(answer, expected):
    pending = parse_when("at eight", NOW)[0]
    got = answer_ambiguous(pending, answer, NOW)
    if expected == "again":
        assert got == pending
    else:
        assert (slot_json(got) if got else None) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("晚上", "2026-12-01T20:00"),
        ("早上", "2026-12-02T08:00"),
        ("上午吧", "2026-12-02T08:00"),
        ("晚上八点", "2026-12-01T20:00"),
        ("第一个", "2026-12-02T08:00"),
        ("第二个", "2026-12-01T20:00"),
        ("好的", None),
    ],
)
def test_answer_ambiguous_chinese(answer, expected):
    pending = parse_when("八点", NOW, "zh")[0]
    got = answer_ambiguous(pending, answer, NOW, "zh")
    assert (slot_json(got) if got else None) == expected


@pytest.mark.parametrize(
    ("text", "lang", "span"),
    [
        ("remind me to take my pills at eight", "en", "at eight"),
        ("remind me to take my pills at eight tomorrow morning", "en", "at eight tomorrow morning"),
        ("set a timer for 15 minutes", "en", "for 15 minutes"),
        ("be quiet until 3 o'clock", "en", "until 3 o'clock"),
        ("every weekday at 8 remind me to take my pills", "en", "every weekday at 8"),
        ("wake me up on Sunday at 5 pm please", "en", "on Sunday at 5 pm"),
        ("Remind Me At EIGHT", "en", "At EIGHT"),
        ("明天早上八点提醒我吃药", "zh", "明天早上八点"),
        ("提醒我在下午三点半吃药", "zh", "在下午三点半"),
        ("十五分钟后叫我", "zh", "十五分钟后"),
    ],
)
def test_spans(text, lang, span):
    _, (start, end) = parse_when(text, NOW, lang)
    assert text[start:end] == span


def test_pieces_said_apart_are_one_time():
    text = "remind me tomorrow to call Anna at 3"
    assert said(text) == "2026-12-02T15:00"
    assert [text[a:b] for a, b in time_spans(text)] == ["tomorrow", "at 3"]


@pytest.mark.parametrize(
    ("text", "lang", "seconds"),
    [
        ("15 minutes", "en", 900),
        ("an hour and a half", "en", 5400),
        ("two and a half hours", "en", 9000),
        ("1 hour 30 minutes", "en", 5400),
        ("90 seconds", "en", 90),
        ("in 15 minutes", "en", 900),
        ("half an hour", "en", 1800),
        ("十五分钟", "zh", 900),
        ("半个小时", "zh", 1800),
        ("一个半小时", "zh", 5400),
        ("一刻钟", "zh", 900),
        ("十五分钟后", "zh", 900),
        ("no time here", "en", None),
        ("今天天气怎么样", "zh", None),
    ],
)
def test_parse_duration(text, lang, seconds):
    expected = Duration(seconds) if seconds is not None else None
    assert parse_duration(text, lang) == expected


def test_dst_spring_forward_london():
    # 2027-03-28: clocks go from 01:00 GMT to 02:00 BST.
    now = at("2027-03-27T22:00")
    slot, _ = parse_when("tomorrow at 8 am", now)
    assert slot.at == at("2027-03-28T08:00")
    assert slot.at.utcoffset() == timedelta(hours=1)
    # Twelve hours of elapsed time: 22:00 GMT + 12 h = 10:00 UTC = 11:00 BST.
    slot, _ = parse_when("in 12 hours", now)
    assert slot_json(slot) == "2027-03-28T11:00"


def test_dst_fall_back_london():
    # 2026-10-25: clocks go from 02:00 BST back to 01:00 GMT.
    now = at("2026-10-24T22:00")
    slot, _ = parse_when("明天早上八点", now, "zh")
    assert slot_json(slot) == "2026-10-25T08:00"
    assert slot.at.utcoffset() == timedelta(0)
    assert slot_json(parse_when("in 12 hours", now)[0]) == "2026-10-25T09:00"


def test_other_zone():
    shanghai = ZoneInfo("Asia/Shanghai")
    slot, _ = parse_when("下午三点", datetime(2026, 12, 1, 10, 0, tzinfo=shanghai), "zh")
    assert slot.at == datetime(2026, 12, 1, 15, 0, tzinfo=shanghai)


def test_recurrence_values():
    slot, _ = parse_when("every Monday and Thursday at 10", NOW)
    assert slot == Rule("week", at=time(10, 0), days=("mon", "thu"))
    slot, _ = parse_when("every 2 hours between 8 and 20", NOW)
    assert slot == Rule("hours", hours=2, between=(time(8), time(20)))


def test_slot_json():
    assert slot_json(When(at("2026-12-02T08:05"))) == "2026-12-02T08:05"
    assert slot_json(Duration(900)) == 900
    assert slot_json(Rule("weekday", at=time(8))) == {"every": "weekday", "at": "08:00"}
    assert slot_json(Rule("week", days=("mon",))) == {"every": "week", "days": ["mon"]}
    assert slot_json(Rule("day")) == {"every": "day"}
    assert slot_json(Impossible("There is no 25 o'clock.")) is None
    assert slot_json(Ambiguous("?", (When(NOW),))) is None


HOSTILE = [
    "",
    " ",
    "\udfff",
    "\ud800 at 8 \udfff",
    "🙂🙂 ⏰ 🙂",
    "⏰ at 8 🙂",
    "\x00\x00\x00",
    "a" * 100_000,
    "at 8 " * 20_000,
    "八点" * 50_000,
    "1" * 100_000,
    "in " + "9" * 100_000 + " days",
    "in 999999 weeks",
    "at 99999",
    "every 0 hours",
    "零点零零零零零",
    "𝟖 pm",
    "\u200b8\u200bpm",
    "in in in in in in",
    "每" * 10_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hostile_input(text, lang):
    found = parse_when(text, NOW, lang)
    if found is not None:
        slot, (start, end) = found
        assert 0 <= start < end <= len(text)
        assert isinstance(slot, When | Rule | Duration | Ambiguous | Impossible)
    duration = parse_duration(text, lang)
    assert duration is None or duration.seconds > 0
    pending = parse_when("at eight", NOW)[0]
    answer = answer_ambiguous(pending, text, NOW, lang)
    assert answer is None or answer == pending or isinstance(answer, When)
