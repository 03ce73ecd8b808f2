"""Reminders without the daemon: the next occurrence across DST changes and zones, bad
input refused with nothing stored, and the scheduler on a real SQLite file with a clock the
test moves (late fires said once, clock jumps, broken rows)."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from fayd.reminders import BadReminder, ReminderBook, Rule, Scheduler, next_occurrence, queue
from fayd.reminders.rules import BadRule
from fayd.reminders.say import late
from fayd.store import Store
from fayd.testing.clock import SimClock

LONDON = ZoneInfo("Europe/London")


def fires(rule: Rule, first: datetime, start: datetime, count: int, tz=LONDON) -> list[datetime]:
    out, after = [], start
    for _ in range(count):
        nxt = next_occurrence(rule, first, after, tz)
        assert nxt is not None
        out.append(nxt)
        after = nxt
    return out


def local(times: list[datetime], tz=LONDON) -> list[str]:
    return [t.astimezone(tz).strftime("%a %d %b %H:%M %Z") for t in times]


def test_daily_keeps_its_wall_clock_time_across_both_dst_changes() -> None:
    rule = Rule("day", at=dtime(8, 0))
    start = datetime(2027, 3, 26, 12, tzinfo=UTC)
    got = local(fires(rule, start, start, 4))
    assert got == [
        "Sat 27 Mar 08:00 GMT",
        "Sun 28 Mar 08:00 BST",  # the change was at 01:00 that night
        "Mon 29 Mar 08:00 BST",
        "Tue 30 Mar 08:00 BST",
    ]
    start = datetime(2027, 10, 29, 12, tzinfo=UTC)
    assert local(fires(rule, start, start, 3)) == [
        "Sat 30 Oct 08:00 BST",
        "Sun 31 Oct 08:00 GMT",
        "Mon 01 Nov 08:00 GMT",
    ]


def test_a_time_in_the_skipped_or_repeated_hour_fires_once() -> None:
    rule = Rule("day", at=dtime(1, 30))
    start = datetime(2027, 3, 27, 12, tzinfo=UTC)
    # 01:30 does not exist on 28 March: fired once, an hour on (02:30 BST), not skipped.
    assert local(fires(rule, start, start, 2)) == ["Sun 28 Mar 02:30 BST", "Mon 29 Mar 01:30 BST"]
    start = datetime(2027, 10, 30, 12, tzinfo=UTC)
    # 01:30 happens twice on 31 October: fired at the first, not again an hour later.
    got = fires(rule, start, start, 2)
    assert local(got) == ["Sun 31 Oct 01:30 BST", "Mon 01 Nov 01:30 GMT"]
    assert got[1] - got[0] == timedelta(hours=25)


def test_weekdays_weekly_days_and_hours_in_a_window() -> None:
    tue = datetime(2026, 12, 1, 10, tzinfo=UTC)  # a Tuesday
    got = local(fires(Rule("weekday", at=dtime(8)), tue, tue, 4))
    assert got == [
        "Wed 02 Dec 08:00 GMT",
        "Thu 03 Dec 08:00 GMT",
        "Fri 04 Dec 08:00 GMT",
        "Mon 07 Dec 08:00 GMT",
    ]
    got = local(fires(Rule("week", at=dtime(17), days=("sun", "wed")), tue, tue, 3))
    assert got == ["Wed 02 Dec 17:00 GMT", "Sun 06 Dec 17:00 GMT", "Wed 09 Dec 17:00 GMT"]
    # "every week" with no day: the weekday it was set on.
    assert local(fires(Rule("week", at=dtime(9)), tue, tue, 2)) == [
        "Tue 08 Dec 09:00 GMT",
        "Tue 15 Dec 09:00 GMT",
    ]
    window = Rule("hours", hours=4, between=(dtime(8), dtime(20)))
    got = local(fires(window, tue, tue, 5))
    assert got == [
        "Tue 01 Dec 12:00 GMT",
        "Tue 01 Dec 16:00 GMT",
        "Tue 01 Dec 20:00 GMT",
        "Wed 02 Dec 08:00 GMT",
        "Wed 02 Dec 12:00 GMT",
    ]
    # Elapsed hours, DST or not.
    first = datetime(2027, 3, 27, 23, tzinfo=UTC)
    got = fires(Rule("hours", hours=6), first, first - timedelta(minutes=1), 3)
    assert [b - a for a, b in itertools.pairwise(got)] == [timedelta(hours=6)] * 2


def test_another_zone() -> None:
    shanghai = ZoneInfo("Asia/Shanghai")
    start = datetime(2026, 12, 1, 10, tzinfo=UTC)  # 18:00 in Shanghai
    [at] = fires(Rule("day", at=dtime(8)), start, start, 1, shanghai)
    assert at == datetime(2026, 12, 2, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"every": "fortnight"}, "rule.every"),
        ({"every": "day"}, "rule.at"),
        ({"every": "day", "at": "25:00"}, "rule.at"),
        ({"every": "week", "at": "08:00", "days": ["funday"]}, "rule.days"),
        ({"every": "hours", "hours": 0}, "rule.hours"),
        ({"every": "hours", "hours": 2, "between": ["20:00", "08:00"]}, "rule.between"),
    ],
)
def test_a_bad_rule_names_its_field(data: dict, field: str) -> None:
    with pytest.raises(BadRule, match=field):
        Rule.of(data)


NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


class Setup:
    def __init__(self, tmp: Path) -> None:
        self.store = Store(tmp / "fayd.db")
        self.clock = SimClock(NOW)
        self.said: list[dict] = []
        self.scheduler = Scheduler(
            self.store, self.clock, self._deliver, queue.Settings(ask_again_s=600, tries=2)
        )
        self.book = ReminderBook(self.store, self.clock, "Europe/London", self.scheduler.wake)

    async def _deliver(self, item: dict) -> None:
        self.said.append(item)

    def rows(self, sql: str) -> list:
        return self.store.call(lambda db: db.execute(sql).fetchall())


@pytest.fixture
def setup(tmp_path: Path):
    found = Setup(tmp_path)
    yield found
    found.store.close()


async def test_bad_input_is_refused_and_nothing_is_stored(setup: Setup) -> None:
    book = setup.book
    with pytest.raises(BadReminder, match="already passed"):
        await book.add("ann", "call Jim", at=NOW - timedelta(minutes=1))
    with pytest.raises(BadReminder, match="text"):
        await book.add("ann", "  ", at=NOW + timedelta(hours=1))
    with pytest.raises(BadReminder, match="kind"):
        await book.add("ann", "x", at=NOW + timedelta(hours=1), kind="alarm")
    with pytest.raises(BadReminder, match="needs a time"):
        await book.add("ann", "x")
    assert setup.rows("SELECT count(*) FROM reminders") == [(0,)]


async def test_tomorrows_reminders_include_a_daily_one_that_also_rings_today(
    setup: Setup,
) -> None:
    book = setup.book  # 10:00 on Tuesday 1 December, London
    await book.add("ann", "take your pills", rule=Rule("day", at=dtime(20)))  # today 20:00 too
    await book.add("ann", "bins out", at=NOW + timedelta(days=1, hours=-2))  # 08:00 tomorrow
    await book.add("ann", "call Jim", at=NOW + timedelta(hours=3))  # today only
    await book.add("ann", "dentist", at=NOW + timedelta(days=2))  # Thursday
    await book.add("ann", "on Sundays", rule=Rule("week", at=dtime(9), days=("sun",)))
    rows = await book.tomorrow("ann")
    assert [(r["text"], r["next_at"]) for r in rows] == [
        ("bins out", (NOW + timedelta(days=1, hours=-2)).timestamp()),
        ("take your pills", (NOW + timedelta(days=1, hours=10)).timestamp()),
    ]


async def test_fires_at_its_minute_once_and_late_once_after_downtime(setup: Setup) -> None:
    book, clock = setup.book, setup.clock
    await book.add("ann", "call your son", at=NOW + timedelta(hours=2))
    await book.add("ann", "take your pills", rule=Rule("day", at=dtime(8)))
    assert await setup.scheduler.round() == 0
    clock.set(NOW + timedelta(hours=2))  # 12:00
    assert await setup.scheduler.round() == 1
    assert [s["text"] for s in setup.said] == ["A reminder: call your son."]
    assert await setup.scheduler.round() == 0  # not twice
    # fayd was "down" for three days: the daily pill reminder fires once, late, and says so.
    clock.set(datetime(2026, 12, 5, 10, 0, tzinfo=UTC))
    assert await setup.scheduler.round() == 1
    missed = setup.said[-1]
    due = datetime.fromtimestamp(missed["due_at"], LONDON)
    assert due == datetime(2026, 12, 5, 8, 0, tzinfo=LONDON)  # the last one missed
    said = late(missed["text"], "reminder", due, clock.now().astimezone(LONDON), "en")
    assert said == "This was due at 08:00, two hours ago: take your pills."
    # The clock jumps back a day (NTP): nothing fires again.
    clock.set(datetime(2026, 12, 4, 10, 0, tzinfo=UTC))
    assert await setup.scheduler.round() == 0
    [(next_at,)] = setup.rows("SELECT next_at FROM reminders WHERE state = 'active'")
    assert datetime.fromtimestamp(next_at, UTC) == datetime(2026, 12, 6, 8, 0, tzinfo=UTC)


async def test_a_broken_row_is_counted_and_skipped(setup: Setup) -> None:
    await setup.book.add("ann", "one", at=NOW + timedelta(minutes=5))
    await setup.book.add("ann", "two", at=NOW + timedelta(minutes=5))
    setup.store.call(
        lambda db: db.execute("UPDATE reminders SET rule = '{oops' WHERE text = 'one'")
    )
    setup.clock.advance(minutes=5)
    assert await setup.scheduler.round() == 1
    assert [s["text"] for s in setup.said] == ["A reminder: two."]
    assert setup.scheduler.status()["broken"] == 1
    assert setup.rows("SELECT state FROM reminders ORDER BY id") == [("broken",), ("done",)]


async def test_medication_asked_again_then_a_care_event(setup: Setup) -> None:
    await setup.book.add("ann", "take your pills", at=NOW + timedelta(minutes=1), kind="medication")
    setup.clock.advance(minutes=1)
    await setup.scheduler.round()
    assert setup.said[-1]["text"] == "It's time to take your pills. Did you take them?"
    assert setup.said[-1]["checkin_id"] is not None
    setup.clock.advance(minutes=10)
    await setup.scheduler.round()
    assert setup.said[-1]["text"] == "Just checking: did you take your pills?"
    setup.clock.advance(minutes=10)
    await setup.scheduler.round()
    [(sensor, device)] = setup.rows("SELECT sensor, device FROM device_events")
    assert (sensor, device) == ("unconfirmed_medication", "fayd")
    assert setup.scheduler.status()["unconfirmed"] == 1


async def test_the_loop_sleeps_until_the_next_due_and_wakes_on_a_change(setup: Setup) -> None:
    task = asyncio.create_task(setup.scheduler.run())
    try:
        await asyncio.sleep(0.05)
        await setup.book.add("ann", "eggs", at=NOW + timedelta(minutes=3), kind="timer", name="egg")
        await asyncio.sleep(0.05)
        assert setup.said == []
        setup.clock.advance(minutes=3)
        for _ in range(100):
            if setup.said:
                break
            await asyncio.sleep(0.01)
        assert [s["text"] for s in setup.said] == ["Your egg timer is done."]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_snooze_brings_the_last_fired_back_and_leaves_the_rule(setup: Setup) -> None:
    book, clock = setup.book, setup.clock
    await book.add("ann", "take your pills", rule=Rule("day", at=dtime(11, 0)))
    clock.set(NOW.replace(hour=11))
    assert await setup.scheduler.round() == 1
    last = await book.last_fired("ann")
    assert last is not None
    until = await book.snooze(last["id"], 600)
    assert until == NOW.replace(hour=11, minute=10)
    clock.advance(minutes=9)
    assert await setup.scheduler.round() == 0
    clock.advance(minutes=1)
    assert await setup.scheduler.round() == 1
    [row] = await book.list("ann")
    # Tomorrow's occurrence is where it was.
    assert datetime.fromtimestamp(row["next_at"], UTC) == datetime(2026, 12, 2, 11, tzinfo=UTC)


def test_the_morning_greeting_says_the_day_and_its_plan() -> None:
    from fayd.reminders.say import greeting

    now = datetime(2026, 12, 2, 8, 0, tzinfo=LONDON)
    plan = [(now.replace(hour=10), "phone the chemist"), (now.replace(hour=17), "call your son")]
    assert greeting("ann", now, plan, "en") == (
        "Good morning, Ann! It's Wednesday 2 December."
        " Today: at 10:00, phone the chemist; at 17:00, call your son."
    )
    assert greeting("ann", now, [], "en").endswith("Nothing is planned for today.")
    assert greeting("王芳", now, [], "zh") == "早上好，王芳！今天是12月2日，星期三。今天没有安排。"


async def test_snooze_is_for_reminders_not_timers(setup: Setup) -> None:
    book, clock = setup.book, setup.clock
    await book.add("ann", "check the oven", at=NOW + timedelta(minutes=1))
    await book.add("ann", "eggs", at=NOW + timedelta(minutes=1, seconds=3), kind="timer")
    clock.advance(minutes=2)
    assert await setup.scheduler.round() == 2
    last = await book.last_fired("ann")
    assert last is not None and last["text"] == "check the oven"


async def test_hours_in_a_window_start_at_the_next_slot(setup: Setup) -> None:
    setup.clock.set(datetime(2026, 12, 1, 19, 1, tzinfo=UTC))
    window = Rule("hours", hours=2, between=(dtime(9), dtime(21)))
    row = await setup.book.add("ann", "drink some water", rule=window)
    assert datetime.fromtimestamp(row["next_at"], UTC) == datetime(2026, 12, 1, 21, tzinfo=UTC)
    row = await setup.book.add("ann", "stretch", rule=Rule("hours", hours=2))
    assert datetime.fromtimestamp(row["next_at"], UTC) == datetime(2026, 12, 1, 21, 1, tzinfo=UTC)
