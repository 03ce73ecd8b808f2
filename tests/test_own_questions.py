"""fayd's own questions are answered in code (issue 21, build 3): after a fall ("Are you hurt
anywhere?"), a check-in ("Is all well?", "Did you take them?") or a confirmation, the next
words are read against the question — hurt / not hurt, fine / not fine, yes / no / later —
in English and Chinese, and never left to the model. Words that are no answer go on as
usual; words that name another emergency are the router's.

Most phrasings here are not the issue's (the readers are general patterns, not a list)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fayd.agent.care.after_emergency import reply
from fayd.agent.care.answers import hurt, since_alarm, wellbeing, yes_no
from fayd.agent.care.wellbeing import _tell_family
from fayd.agent.features import all_skills
from fayd.agent.prefs import Preferences
from fayd.agent.understand.router import Router
from fayd.agent.understanding import Understanding
from fayd.devices.actions import DeviceActions
from fayd.devices.registry import DeviceRegistry
from fayd.memory import Memory
from fayd.protocol import Alert, Hello
from fayd.service import checkins
from fayd.store import Store
from fayd.testing.clock import SimClock

from .conftest import Frames

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)

# --- the readers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        # not hurt
        ("No, I'm not hurt, just a bit shaken", "not_hurt"),
        ("no", "not_hurt"),
        ("Nope, only my pride", "not_hurt"),
        ("I don't think I'm hurt", "not_hurt"),
        ("Nothing's broken, I'm alright", "not_hurt"),
        ("Not a scratch on me", "not_hurt"),
        ("No harm done, dear", "not_hurt"),
        ("I landed on my bottom but I'm fine", "not_hurt"),
        ("I'm all in one piece", "not_hurt"),
        ("Oh I'm alright love, just had a fright", "not_hurt"),
        ("没受伤，就是吓了一跳", "not_hurt"),
        ("我没事", "not_hurt"),
        ("好像没伤着", "not_hurt"),
        ("不疼", "not_hurt"),
        # hurt
        ("My hip hurts, I can't move it", "hurt"),
        ("yes, my wrist", "hurt"),
        ("a bit", "hurt"),
        ("my back's killing me", "hurt"),
        ("I think I've twisted my ankle", "hurt"),
        ("Just bruised I think", "hurt"),
        ("It's my shoulder", "hurt"),
        ("I got up but my knee is sore", "hurt"),
        ("No, but I banged my elbow on the way down", "hurt"),
        (
            "Well I was reaching for the kettle and my foot caught the rug and down I went,"
            " my wrist is sore",
            "hurt",
        ),
        ("腿很疼，动不了", "hurt"),
        ("膝盖有点痛", "hurt"),
        ("手腕好像扭到了", "hurt"),
        # can't get up
        ("I can't get up", "stuck"),
        ("I'm still down here on the carpet", "stuck"),
        ("I'm too weak to stand", "stuck"),
        ("躺在地上起不来", "stuck"),
        # up again
        ("I'm fine now, I got up", "up"),
        ("I've managed to get myself back up", "up"),
        ("I'm back in my chair now", "up"),
        ("I'm up on my feet now, don't fuss", "up"),
        ("我自己爬起来了", "up"),
        # unclear
        ("I don't know, I feel funny", "unsure"),
        ("I couldn't say", "unsure"),
        ("不知道", "unsure"),
        # no answer: the turn goes on as usual
        ("what time is it?", None),
        ("can you call my daughter", None),
        ("how long will they be?", None),
        ("turn the light on", None),
        ("现在几点了", None),
        # another emergency: the router's (its own advice and alert)
        ("I'm bleeding from my head", None),
        ("I can't breathe", None),
        ("my chest is so tight", None),
    ],
)
def test_after_a_fall_hurt_or_not(said: str, answer: str | None) -> None:
    assert hurt(said) == answer


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("I'm right as rain", "fine"),
        ("not too bad", "fine"),
        ("I'm fine, thank you", "fine"),
        ("Can't complain", "fine"),
        ("mustn't grumble", "fine"),
        ("I'm tickety-boo", "fine"),
        ("Everything's fine here", "fine"),
        ("pretty good thanks", "fine"),
        ("I'm okay, don't worry about me", "fine"),
        ("Absolutely fine, thanks", "fine"),
        ("Yeah, all fine", "fine"),
        ("never better", "fine"),
        ("还好", "fine"),
        ("挺好的", "fine"),
        ("我没事", "fine"),
        ("我很好，放心吧", "fine"),
        ("还不错", "fine"),
        ("还行吧", "fine"),
        ("not really", "not_fine"),
        ("I don't feel great", "not_fine"),
        ("Not great, to be honest", "not_fine"),
        ("I've been better", "not_fine"),
        ("I'm a bit under the weather", "not_fine"),
        ("I'm feeling a bit rough today", "not_fine"),
        ("fine, but my knee hurts", "not_fine"),
        ("I'm not alright", "not_fine"),
        ("no", "not_fine"),
        ("no, I'm not", "not_fine"),
        ("I'm a bit dizzy", "not_fine"),
        ("不太好", "not_fine"),
        ("不怎么好", "not_fine"),
        ("身体不太舒服", "not_fine"),
        ("有点头晕", "not_fine"),
        ("ask me later", "later"),
        ("等一下", "later"),
        ("what time is it?", None),
        ("Can you put the kettle on", None),
        ("I've fallen", None),  # the router raises it
    ],
)
def test_is_all_well_fine_or_not(said: str, answer: str | None) -> None:
    assert wellbeing(said) == answer


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Yes I have", "yes"),
        ("Yep, with my breakfast", "yes"),
        ("Took them an hour ago", "yes"),
        ("I've had them", "yes"),
        ("that I did", "yes"),
        ("yes love, all taken", "yes"),
        ("I did, yes", "yes"),
        ("已经吃过了", "yes"),
        ("吃了吃了", "yes"),
        ("Not as yet", "no"),
        ("Oh dear, I haven't", "no"),
        ("not really", "no"),
        ("I'm afraid not", "no"),
        ("it slipped my mind", "no"),
        ("还没吃呢", "no"),
        ("Not yet, in a minute", "later"),
        ("Ask me again in half an hour", "later"),
        ("hang on a minute", "later"),
        ("过一会儿再吃", "later"),
        ("Did I? I can't remember", None),
        ("what's on the telly tonight", None),
        ("No, I've fallen over", None),  # the router raises it
    ],
)
def test_did_you_take_them_yes_no_later(said: str, answer: str | None) -> None:
    assert yes_no(said) == answer


def test_the_replies_say_only_what_is_true_of_the_alarm() -> None:
    for answer in ("not_hurt", "hurt", "stuck", "up", "unsure", "better", "worse", "said"):
        for zh in (False, True):
            alone, told = reply(answer, False, zh), reply(answer, True, zh)
            for said in (alone, told):  # nobody can call the alarm off by talking
                assert "cancel" not in said and "取消" not in said
            assert "no one to call" not in told and "没有可以联系的人" not in told
    assert reply("up", True, False) == (
        "I'm glad you're up. Sit down and rest for a while. Your family has still been told,"
        " so they may call you."
    )
    assert "ambulance" in reply("hurt", False, False)


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("It's alright, it was only crumbs, I've opened the back door.", "better"),
        ("False alarm, the pan just got too hot.", "better"),
        ("It's easing off a bit now I'm sitting down.", "better"),
        ("好点了，刚才是急的，坐下歇了会儿。", "better"),
        ("没事了，虚惊一场", "better"),
        ("It's getting worse, it's going down my arm.", "worse"),
        ("越来越疼了", "worse"),
        ("I don't know, it came on all of a sudden.", "said"),
        ("I was just standing at the sink doing the pots.", "said"),
        ("刚才在厨房洗碗的时候", "said"),
        ("What time is it?", None),  # a question of their own: the router's
        ("Can you turn the radio off", None),
        ("Now I've fallen over as well", None),  # a new emergency: raised anew
    ],
)
def test_after_another_emergency_better_worse_or_told(said: str, answer: str | None) -> None:
    assert since_alarm(said) == answer


# --- through the understanding: real router, skills, store, devices -----------------------


class House:
    def __init__(self, store: Store, router: Router, embedder, caregiver: bool) -> None:
        self.frames = Frames()
        self.alerts: list[Alert] = []

        def raise_alert(alert: Alert) -> bool:  # the household's, as fayd.service wires it
            self.alerts.append(alert)
            return caregiver  # a care rule sends this person's calls to a caregiver

        self.registry = DeviceRegistry(store, self.frames)
        self.clock = SimClock(NOW)
        self.understanding = Understanding(
            router,
            all_skills(),
            DeviceActions(self.registry, self.frames, raise_alert),
            Memory(store, embedder),
            Preferences(store),
            UTC,
            clock=lambda: self.clock.now(),
        )

    async def start(self) -> House:
        hello = Hello("kitchen-1", ("mic", "speaker"), user="ann")
        await self.registry.hello(self.registry.state(hello.device), hello)
        return self

    async def ask(self, text: str):
        decision = self.understanding.decide(text, "ann", "kitchen-1")
        return decision, await self.understanding.act(decision, text, "ann", "kitchen-1")


@pytest.fixture
async def homes(tmp_path: Path, router, embedder):
    stores: list[Store] = []

    async def home(caregiver: bool) -> House:
        stores.append(Store(tmp_path / f"fayd-{len(stores)}.db"))
        return await House(stores[-1], router, embedder, caregiver).start()

    yield home
    await asyncio.sleep(0.05)
    for store in stores:
        store.close()


@pytest.mark.models
async def test_after_a_fall_the_answer_gets_written_words_not_the_models(homes) -> None:
    house = await homes(caregiver=False)
    decision, said = await house.ask("I've had a fall in the hallway")
    assert decision.intent == "emergency" and said.say.endswith("Are you hurt anywhere?")
    [alert] = house.alerts
    # Something else first: answered as usual, the question stays open.
    decision, said = await house.ask("what time is it?")
    assert decision.intent == "clock.time" and said.say == "It's 10 o'clock in the morning."
    decision, said = await house.ask("No, not hurt, just shaken")
    assert (decision.intent, decision.via) == ("answer", "expected")
    assert said.say == (
        "I'm glad you're not hurt. Stay where you're comfortable, and get up slowly, only when"
        " you feel ready. I have no one to call for you yet, so if you can, phone for help."
    )
    assert said.importance == 10 and said.detail["alert"] == alert.id
    assert said.detail["after_emergency"] == "not_hurt"
    # Answered once: the same words now are a new turn, not an answer.
    decision, _ = await house.ask("No, not hurt, just shaken")
    assert decision.intent != "answer"
    assert len(house.alerts) == 1  # nothing raised again


@pytest.mark.models
async def test_hurt_up_and_another_emergency_after_a_fall(homes) -> None:
    house = await homes(caregiver=True)
    await house.ask("I've fallen over in the kitchen")
    decision, said = await house.ask("My hip hurts, I can't move it")
    assert decision.intent == "answer" and said.detail["after_emergency"] == "hurt"
    assert said.say.startswith("I'm sorry it hurts. Keep as still as you can")
    assert "Your family is being told" in said.say and "no one to call" not in said.say
    # Up again: the alarm is not called off, and that is said.
    await house.ask("help, I've gone down again")
    decision, said = await house.ask("I'm fine now, I got up")
    assert said.say == (
        "I'm glad you're up. Sit down and rest for a while. Your family has still been told,"
        " so they may call you."
    )
    # Another emergency after the question: the router's, with its own advice and alert.
    await house.ask("I've taken a tumble")
    decision, said = await house.ask("I can't breathe properly")
    assert decision.intent == "emergency" and decision.slots["kind"] == "breathing"
    assert len(house.alerts) == 4


@pytest.mark.models
async def test_after_a_fall_in_chinese(homes) -> None:
    house = await homes(caregiver=False)
    decision, said = await house.ask("我摔倒了")
    assert decision.intent == "emergency" and said.say.endswith("你哪里受伤了吗？")
    decision, said = await house.ask("没受伤，就是吓了一跳")
    assert decision.intent == "answer"
    assert said.say == (
        "没受伤就好。先在舒服的地方待着，觉得可以了再慢慢起来。"
        "我还没有可以联系的人，如果可以，请打电话求助。"
    )


@pytest.mark.models
async def test_after_smoke_or_chest_pain_the_next_words_get_written_words(homes) -> None:
    house = await homes(caregiver=True)
    decision, _ = await house.ask("There's smoke pouring out the toaster and the alarm's going")
    assert decision.intent == "emergency"
    # A request of its own is the router's, and the question stays open.
    decision, said = await house.ask("what time is it?")
    assert decision.intent == "clock.time"
    decision, said = await house.ask("It's alright, it was only crumbs, I've opened the door.")
    assert (decision.intent, decision.via) == ("answer", "expected")
    assert said.say == (
        "I'm glad to hear that. Your family has still been told, so they may call to check on you."
    )
    assert said.importance == 10 and said.detail["after_emergency"] == "better"
    house = await homes(caregiver=False)
    await house.ask("我胸口闷得慌，喘不上气来。")
    decision, said = await house.ask("我也不知道，突然就这样了")
    assert decision.intent == "answer" and said.say.startswith("谢谢你告诉我。")
    assert said.say.endswith("我还没有可以联系的人，如果可以，请打电话求助。")
    assert len(house.alerts) == 1  # nothing raised again


# --- a care check-in's answer, as the ladder takes it ---------------------------------------


@pytest.mark.parametrize(
    ("said", "taken", "meaning"),
    [
        ("right as rain", True, "fine"),  # the ladder's own patterns called this trouble
        ("not too bad, thanks", True, "fine"),
        ("fine, but my knee hurts", True, "trouble"),
        ("ask me again later", True, "trouble"),  # not reassuring: the ladder goes on
        ("我没事", True, "fine"),
        ("我有点头晕", True, "trouble"),
        ("No, I've fallen over", False, "trouble"),  # the router's emergency, not an answer
        ("what time is it?", False, "trouble"),
        (None, False, "silence"),
    ],
)
def test_a_check_in_answer_is_read_by_the_agents_words(
    said: str | None, taken: bool, meaning: str
) -> None:
    assert (checkins._answer(said) is not None if said else False) is taken
    assert checkins.meaning(said) == meaning


@pytest.mark.parametrize(
    "said",
    [
        "I've had a funny turn, I had to grab hold of the sink.",  # news, not "I've" = yes
        "好点了，刚才是急的，坐下歇了会儿。",  # "a bit better", not 好 = yes
    ],
)
def test_news_of_their_own_is_no_yes(said: str) -> None:
    assert yes_no(said) is None


def test_yes_im_fine_to_the_offer_to_tell_the_family_tells_no_one() -> None:
    assert _tell_family("Yes, I'm fine, I'd just come up the stairs a bit quick.") == "no"
    assert _tell_family("是的，我没事") == "no"
    assert _tell_family("yes please") == "yes"
    assert _tell_family("是的，告诉她吧") == "yes"
