"""Bad care rules and caregivers: one clear error naming the field, and nothing stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fayd.care import CareError, admin
from fayd.care import records as rec
from fayd.care.ladder import understood
from fayd.testing.care import Clock, Household, Posts, at, engine


@pytest.fixture
def house(tmp_path: Path) -> Iterator[Household]:
    h = Household(tmp_path)
    h.device("cuff-1", "mum")
    h.device("hall-1", "mum")
    yield h
    h.close()


@pytest.fixture
def eng(house: Household) -> Any:
    return engine(house, Clock(at(1, "08:00")))


async def anna(eng: Any) -> None:
    await admin.handle(eng, "caregivers.add", {"name": "anna", "urls": [Posts.url_of("anna")]})


def rule(**changes: Any) -> dict[str, Any]:
    return {
        "name": "bp-high",
        "user": "mum",
        "kind": "threshold",
        "spec": {"sensor": "bp", "above": {"sys": 150, "dia": 95}},
        "ladder": ["anna"],
        **changes,
    }


BAD = [
    ({"user": "grandpa"}, "user: no household member 'grandpa' (known: mum)"),
    ({"kind": "weather"}, "kind: must be one of threshold, missing, inactivity, event, device"),
    ({"spec": {"sensor": "bpp", "above": {"sys": 150}}}, "spec.sensor: no sensor 'bpp'"),
    (
        {"spec": {"sensor": "bp", "above": {"sys": 400}}},
        "spec.above.sys: bp sys is never above 300",
    ),
    (
        {"spec": {"sensor": "spo2", "below": {"value": 20}}},
        "spec.below.value: spo2 value is never below 50",
    ),
    ({"spec": {"sensor": "bp"}}, "spec: a threshold needs 'above' or 'below'"),
    (
        {"kind": "missing", "spec": {"sensor": "bp", "by": "09:00", "since": "10:00"}},
        "spec.since: 10:00 is not before 09:00",
    ),
    (
        {"kind": "missing", "spec": {"sensor": "bp", "by": "9 o'clock"}},
        'spec.by: "9 o\'clock" is not a time of day',
    ),
    (
        {"kind": "inactivity", "spec": {"minutes": 600, "between": ["08:00", "12:00"]}},
        "spec.minutes: 600 min does not fit in 08:00-12:00",
    ),
    (
        {"kind": "event", "spec": {"sensor": "door", "between": ["22:00", "22:00"]}},
        "spec.between: the window 22:00-22:00 is empty",
    ),
    (
        {"kind": "device", "spec": {"device": "cuff-9", "silent_min": 60}},
        "spec.device: no device 'cuff-9' (devices: cuff-1, hall-1)",
    ),
    ({"ladder": ["zoe"]}, "ladder[0]: no caregiver 'zoe' (caregivers: anna)"),
    ({"ladder": [], "checkin": False}, "ladder: nobody would be told"),
    ({"severity": "apocalyptic"}, "severity: must be one of critical, warning, info"),
]


@pytest.mark.parametrize(("changes", "error"), BAD)
async def test_a_bad_rule_is_refused_whole_with_the_field_named(
    eng: Any, changes: dict[str, Any], error: str
) -> None:
    await anna(eng)
    with pytest.raises(CareError) as caught:
        await admin.handle(eng, "rules.add", rule(**changes))
    assert str(caught.value).startswith(error), str(caught.value)
    assert await eng.store.run(rec.rules) == []


async def test_overlapping_rules_are_refused(eng: Any) -> None:
    await anna(eng)
    await admin.handle(eng, "rules.add", rule())
    with pytest.raises(CareError, match="overlaps rule 'bp-high': both watch bp for mum"):
        await admin.handle(
            eng, "rules.add", rule(name="bp-2", spec={"sensor": "bp", "above": {"sys": 160}})
        )
    with pytest.raises(CareError, match="name: there is a rule 'bp-high' already"):
        await admin.handle(eng, "rules.add", rule())
    # Not overlapping: low blood pressure, and someone else's.
    await admin.handle(
        eng, "rules.add", rule(name="bp-low", spec={"sensor": "bp", "below": {"sys": 90}})
    )
    # (mum-help: with mum's first rule, her calls for help go to its caregivers too)
    names = [r.name for r in await eng.store.run(rec.rules)]
    assert names == ["bp-high", "mum-help", "bp-low"]


async def test_a_caregiver_url_apprise_cannot_use_is_refused_and_nothing_kept(eng: Any) -> None:
    body = {"name": "anna", "urls": [Posts.url_of("anna"), "carrier-pigeon://loft"]}
    with pytest.raises(CareError, match=r"urls\[1\]: Apprise cannot use 'carrier-pigeon'"):
        await admin.handle(eng, "caregivers.add", body)
    assert await eng.store.run(rec.caregivers) == {}
    with pytest.raises(CareError, match="urls: at least one Apprise URL"):
        await admin.handle(eng, "caregivers.add", {"name": "anna", "urls": []})


async def test_a_caregiver_on_a_ladder_cannot_be_removed(eng: Any) -> None:
    await anna(eng)
    await admin.handle(eng, "rules.add", rule())
    with pytest.raises(CareError, match=r"anna is on the ladder of rule\(s\) bp-high"):
        await admin.handle(eng, "caregivers.remove", {"name": "anna"})
    with pytest.raises(LookupError, match="no care alert 'care-1'"):
        await admin.handle(eng, "alerts.ack", {"id": "care-1", "by": "anna"})


@pytest.mark.parametrize(
    ("answer", "meaning"),
    [
        ("I'm fine", "fine"),
        ("yes, all right thanks", "fine"),
        ("我没事", "fine"),
        ("no", "trouble"),
        ("help me", "trouble"),
        ("I fell", "trouble"),
        ("what?", "trouble"),
        (None, "silence"),
        ("", "silence"),
    ],
)
def test_check_in_answers(answer: str | None, meaning: str) -> None:
    assert understood(answer) == meaning


async def test_a_persons_first_rule_sends_their_calls_for_help_to_its_caregivers(
    eng: Any,
) -> None:
    await anna(eng)
    names = lambda: eng.store.run(rec.rules)  # noqa: E731
    # A check-in alone tells nobody: no call-for-help rule comes with it.
    done = await admin.handle(eng, "rules.add", rule(ladder=[], checkin=True))
    assert done["also"] is None
    await admin.handle(eng, "rules.remove", {"name": "bp-high"})
    done = await admin.handle(eng, "rules.add", rule(ladder=[["anna", 300]]))
    assert done["also"] == {
        "name": "mum-help",
        "user": "mum",
        "kind": "event",
        "text": "mum: emergency; critical; anna (5 min)",
    }
    eng.wake()
    await eng.step()
    assert eng.will_tell("mum")  # "I've fallen" now says "I'm letting your family know"
    # Removed, it stays removed: only a person's first rule brings it.
    await admin.handle(eng, "rules.remove", {"name": "mum-help"})
    done = await admin.handle(
        eng, "rules.add", rule(name="bp-low", spec={"sensor": "bp", "below": {"sys": 90}})
    )
    assert done["also"] is None
    assert [r.name for r in await names()] == ["bp-high", "bp-low"]
