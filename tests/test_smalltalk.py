"""Small talk a 135M model must not be left to: the topics found in English and Chinese,
"not" turning a feeling round, requests still reaching their skills, and the written answers
through the real router and skills (real MiniLM embedder, SQLite store and memory)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fayd.agent.language.text import normalize
from fayd.agent.smalltalk.answers import REMEMBERED, SAY
from fayd.agent.smalltalk.kinds import ORDER, small_talk
from fayd.agent.smalltalk.told import FOLLOWED
from fayd.store import Store
from tests.test_skills import House


@pytest.mark.parametrize(
    ("said", "topic", "who"),
    [
        ("My husband passed away last spring.", "grief", "husband"),
        ("I lost my wife two years ago", "grief", "wife"),
        ("老伴去年走了", "grief", "老伴"),
        ("I miss my daughter, she lives in Australia", "missing", "daughter"),
        ("I'm feeling a bit down today", "low", None),
        ("I'm so lonely these days", "lonely", None),
        ("我今天有点孤单", "lonely", None),
        ("I'm worried about my hospital appointment", "worried", None),
        ("My knees are aching this morning", "ache", None),
        ("我腰疼", "ache", None),
        ("I had porridge for breakfast", "food", None),
        ("My son rang this morning", "family", "son"),
        ("When I was young I lived by the sea", "memory", None),
        ("My Harold used to do the crossword every morning", "memory", None),
        ("Forty-six years we were married, and never a cross word. Well, hardly.", "memory", None),
        ("Hello Fay", "greeting", None),
        ("Good morning!", "greeting", None),
        ("Good morning, it's Margaret", "greeting", None),
        ("What shall I have for lunch?", "meal_idea", None),
        ("I had soup for lunch", "food", None),
        ("中午吃什么好呢", "meal_idea", None),
        ("Hello, it's me, Margaret", "greeting", None),
        ("How are you today?", "how_are_you", None),
        ("I'm off to bed, good night", "goodnight", None),
        ("晚安", "goodnight", None),
        ("You're very kind", "thanks_kind", None),
        ("I feel sad, tell me a joke", "joke", None),  # asked for: the joke wins
        ("Tell me something cheerful", "joke", None),
        ("cheer me up, Fay", "joke", None),
        ("Tell me a story", "story", None),
        ("I've lost my glasses again", "lost_thing", None),  # not a loss to mourn
        ("I can't find my keys", "lost_thing", None),
        ("我的眼镜找不到了", "lost_thing", None),
        ("It's my birthday today", "birthday", None),
        ("I'm 84 today", "birthday", None),
        ("今天是我生日", "birthday", None),
        ("I don't feel very well", "unwell", None),
        ("I feel a bit poorly today", "unwell", None),
        ("我有点不舒服", "unwell", None),
        ("I'm sick of this rain, it's getting me down", "low", None),  # not unwell
        ("给我讲个故事吧", "story", None),
        ("My son told me Jim passed away", "grief", None),  # not about the son
        ("My old friend Margaret died on Sunday", "grief", "friend"),
        ("I'm not sleeping well, I'm worn out", "tired", None),
        ("我今天特别高兴", "happy", None),  # 特别 is no 别
        ("Our old dog had to be put to sleep yesterday", "grief", None),
        ("Margaret died peacefully on Sunday", "grief", None),
        ("I'm missing our kid something rotten", "missing", "kid"),
        ("some days I don't speak to a living soul", "lonely", None),
        ("闺女刚给我打电话了", "family", "闺女"),  # she rang: no request to ring her
        ("Do you ever get tired?", "about_me", None),  # a question to fayd, not tiredness
        ("What do you think about roses?", "opinion", None),
        ("Do you like music?", "opinion", None),
        ("What's your favourite flower?", "opinion", None),
        ("你觉得月季花怎么样", "opinion", None),
    ],
)
def test_small_talk_is_recognised(said: str, topic: str, who: str | None) -> None:
    found = small_talk(normalize(said))
    assert found is not None and found["topic"] == topic, found
    assert found.get("who") == who


@pytest.mark.parametrize(
    "said",
    [
        "I'm not lonely at all",
        "I'm not feeling sad",
        "I don't feel down today",
        "我不累",
        "what time is it",
        "the garden looks nice",
        "I had a look at the paper",
        "my husband is in the garden",
        "my phone died last night",
        "I nearly died laughing",
        "I'm bored, can you put the radio on",  # the request matters more
        "play Goodnight Irene",
        "the batteries in the remote have died",  # things die without anyone being lost
        "the geraniums have all died off in the frost",
        "my friend Joan says she's lonely",  # someone else's feeling
        "Mrs Patel next door is worried about her son",
        "my knees are fine today",
        "the kettle's knackered",
        "隔壁老王家老伴儿最近挺孤单的",
        "what do you think I should do about the boiler",  # advice, not a taste
        "你觉得我该怎么办",
    ],
)
def test_other_words_are_no_small_talk(said: str) -> None:
    assert small_talk(normalize(said)) is None


def test_every_topic_has_answers_in_both_languages() -> None:
    assert set(SAY) == set(ORDER) | set(FOLLOWED.values())
    for topic, (english, chinese) in SAY.items():
        assert len(english) >= 2 and chinese, topic
        # Short, but a story asked for is a story (a few sentences).
        most = 60 if topic == "story" else 25
        assert all(len(line.split()) <= most for line in english), topic
    assert set(REMEMBERED) < set(SAY)


@pytest.fixture
async def house(tmp_path: Path, router, embedder):
    store = Store(tmp_path / "fayd.db")
    yield await House(store, router, embedder).start()
    await asyncio.sleep(0.05)  # the background memory writes
    store.close()


@pytest.mark.models
async def test_a_loss_gets_a_kind_answer_and_is_remembered(house: House) -> None:
    decision, said = await house.ask("My husband passed away last spring.")
    assert (decision.intent, decision.via) == ("chitchat", "smalltalk")
    assert said.say.startswith("I'm so sorry about your husband.")
    assert "how is" not in said.say.lower() and said.importance == REMEMBERED["grief"]
    _, again = await house.ask("I lost my husband last year")
    assert again.say != said.say  # answers are taken in turn, not the same words each time
    _, hello = await house.ask("Hello Fay")
    assert hello.say.startswith("Hello") and hello.importance is None


@pytest.mark.models
async def test_a_request_in_small_talk_still_reaches_its_skill(house: House) -> None:
    decision, said = await house.ask("I'm a bit lonely, what time is it?")
    assert decision.intent == "clock.time" and said.say.startswith("It's 10 o'clock")
    decision, said = await house.ask("我今天有点孤单")
    assert decision.via == "smalltalk" and "陪" in said.say


@pytest.mark.models
@pytest.mark.parametrize(
    ("said", "intent", "via"),
    [
        ("How are you?", "chitchat", "smalltalk"),  # not qa's "who are you"
        ("You always cheer me up", "chitchat", "smalltalk"),  # not the robot's cheer
        # fayd stays awake; a bad night is felt unwell: kept for the care digest
        ("I couldn't get off to sleep till three", "wellbeing.symptom", "symptom"),
        ("你今天怎么样啊", "chitchat", "smalltalk"),
        ("I'm a bit lonely, what time is it?", "clock.time", "cue"),
    ],
)
def test_the_router_takes_small_talk_for_what_it_is(
    router,
    said: str,
    intent: str,
    via: str,
) -> None:

    decision = router.route(said, datetime(2026, 12, 1, 10, tzinfo=UTC))
    assert (decision.intent, decision.via) == (intent, via), decision


@pytest.mark.models
def test_small_talk_the_patterns_miss_is_found_by_meaning(router) -> None:
    now = datetime(2026, 12, 1, 10, tzinfo=UTC)
    decision = router.route("How ya going?", now)
    assert decision.via == "smalltalk" and decision.slots["topic"] == "how_are_you"
    assert decision.score < 1.0  # the nearest example, not a pattern
    # Close to an example, but a request: left to the rest of fayd.
    assert router.route("I'm lonely, can you ring my daughter", now).via != "smalltalk"


@pytest.mark.models
async def test_what_is_told_after_a_loss_is_listened_to(house: House) -> None:
    await house.ask("My husband passed away last spring.")
    decision, said = await house.ask("His name was Tom, he loved his garden")
    assert decision.intent == "chitchat" and decision.via != "smalltalk"  # the router's
    assert said.say == "Thank you for telling me about him. I can tell how much he meant to you."
    assert said.importance == REMEMBERED["told_more"]
    _, said = await house.ask("Tom had a very loud laugh")
    assert said is not None and "listening" in said.say
    _, said = await house.ask("Tom always whistled at breakfast")
    assert said is None  # two turns listened to; then the model talks again
    # A question after a loss is answered, not listened to.
    await house.ask("I lost my wife last year")
    decision, said = await house.ask("What do you think she would say?")
    assert said is None


@pytest.mark.models
async def test_questions_about_fay_herself_are_answered_honestly(house: House) -> None:
    decision, said = await house.ask("What did you have for breakfast?")
    assert decision.slots["topic"] == "about_me" and "computer" in said.say


@pytest.mark.models
async def test_a_visit_to_come_is_looked_forward_to_not_asked_about(house: House) -> None:
    """ "My son is visiting on Friday" was answered "What did you and your son talk about?"."""
    for said in (
        "My daughter Anna is coming on Sunday",
        "my son is visiting on Friday",
        "my grandson's coming for tea tomorrow",
    ):
        decision, answer = await house.ask(said)
        assert decision.slots.get("coming") is True, said
        assert "did you" not in answer.say and "forward" in answer.say + "together", answer.say
    decision, answer = await house.ask("My daughter came to see me yesterday")
    assert "coming" not in decision.slots and "forward" not in answer.say


@pytest.mark.models
async def test_who_is_coming_is_asked_of_memory_not_the_calendar(house: House) -> None:
    """ "Who is coming on Sunday?" was answered "Today is Tuesday 1st December 2026."."""
    decision, answer = await house.ask("Who is coming on Sunday?")
    assert decision.intent == "memory.recall", decision
    decision, answer = await house.ask("What's happening on Sunday?")
    assert decision.intent == "memory.recall", decision
    decision, answer = await house.ask("What day is it today?")
    assert decision.intent == "clock.date" and answer.say.startswith("Today is")
