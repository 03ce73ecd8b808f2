"""What people mention is kept (issue 21, item 2): ordinary statements about a person's life
become jiyi facts with validity windows, read in code from their own words only; a newer one
supersedes the old; the model's reply is never a fact about them; recall answers from the
facts. Real SQLite store, real MiniLM embedder, the real router and skills."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fayd.agent.chat import Chat
from fayd.agent.features import all_skills
from fayd.agent.prefs import Preferences
from fayd.agent.skills.registry import Context
from fayd.agent.turn import Turn
from fayd.agent.understanding import Understanding
from fayd.config import AgentConfig, LlmConfig
from fayd.devices.actions import DeviceActions
from fayd.devices.registry import DeviceRegistry
from fayd.memory import Facts, Memory, mentioned
from fayd.memory.extract import Item, drop_unfounded
from fayd.memory.hygiene import users_side
from fayd.store import Store

from .conftest import Frames

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # a Tuesday
SAID = (NOW - timedelta(days=3)).timestamp()  # the Saturday before
NOT_TOLD = "You haven't told me that yet. If you tell me, I'll remember it."


def triples(text: str) -> list[tuple[str, str, str]]:
    return [(m.subject, m.predicate, m.object) for m in mentioned.mentions(text)]


# --- statements → facts (no model, phrasings beyond the issue's) -----------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("my late husband Harold used to do the garden", ("husband", "name", "Harold")),
        ("Harold was my husband, God rest him.", ("husband", "name", "Harold")),
        ("My hubby's name was Frank", ("husband", "name", "Frank")),
        ("Dr Patel is my GP", ("doctor", "name", "Dr Patel")),
        ("my doctor's called Dr. Okafor", ("doctor", "name", "Dr Okafor")),
        (
            "My eldest granddaughter Sophie rang me last night",
            ("Sophie", "relation", "granddaughter"),
        ),
        ("We had a lovely little cat named tiddles years ago.", ("Tiddles", "relation", "cat")),
        ("our Jenny's little one is called Poppy", ("Jenny's little one", "name", "Poppy")),
        ("my friend from church is called Maureen", ("friend from church", "name", "Maureen")),
        (
            "My hearing aid is in the drawer by the bed",
            ("hearing aid", "place", "in the drawer by the bed"),
        ),
        (
            "I left my purse in the front bedroom, I think",
            ("purse", "place", "in the front bedroom"),
        ),
        ("Every Thursday I go to the library.", ("library", "go to", "every Thursday")),
        ("I see the chiropodist every six weeks", ("chiropodist", "see", "every six weeks")),
        ("I have a bath every night", ("bath", "have", "every night")),
        ("I really enjoy the crossword", ("the crossword", "like", "enjoy")),
        ("I can't stand marmite", ("marmite", "like", "dislike")),
        ("我家小狗叫旺财", ("旺财", "relation", "狗")),
        ("小红是我女儿", ("小红", "relation", "女儿")),
        ("我的医生是王医生", ("医生", "name", "王医生")),
        ("我把钥匙放在抽屉里了", ("钥匙", "place", "抽屉里")),
        ("我每个星期二去老年活动中心", ("老年活动中心", "去", "每个星期二")),
        ("我最喜欢喝龙井茶", ("喝龙井茶", "like", "like")),
        # a name before, the role after ("he's my …"); a possessive is not the name
        (
            "Our Tom's coming Saturday, he's my grandson, Anna's lad.",
            ("Tom", "relation", "grandson"),
        ),
        ("Sue popped in earlier, she's my neighbour.", ("Sue", "relation", "neighbour")),
        (
            "Dr Okafor's ever so nice, she always makes time for me.",
            ("doctor", "name", "Dr Okafor"),
        ),
        (
            "Where did I put my glasses... oh here they are, on the windowsill in the front room.",
            ("glasses", "place", "on the windowsill in the front room"),
        ),
        ("我孙子小军在北京上大学，可有出息了。", ("小军", "relation", "孙子")),
        ("我老伴秀兰走了三年了。", ("老伴", "name", "秀兰")),
        ("下午三点半提醒我去接妞妞放学，她是我外孙女。", ("妞妞", "relation", "外孙女")),
        (
            "Actually I've moved my glasses, they're in the bedside drawer now.",
            ("glasses", "place", "in the bedside drawer"),
        ),
        ("钥匙我搁在鞋柜上了，免得又满屋子找。", ("钥匙", "place", "鞋柜上")),
    ],
)
def test_a_statement_in_passing_becomes_a_fact(said: str, expected: tuple[str, str, str]) -> None:
    assert triples(said) == [expected]


@pytest.mark.parametrize(
    "said",
    [
        "I'm on the mend now",
        "my hip is in agony",
        "the kettle is on",
        "I love you Fay",
        "I'd like a cup of tea",
        "is my grandson Tom coming?",
        "where did I put my glasses?",
        "if my glasses were on the table I'd see them",
        "I was a girl called Maggie back then",
        "I met a man called Bob at the shop",
        "my daughter's doctor is Dr Evans",  # her doctor, not the speaker's
        "my husband's brother Fred came round",
        "my son is Catholic",
        "我孙子叫什么名字",
        "我的眼镜在哪",
        "我在家",
        "我老伴叫我吃饭",
    ],
)
def test_questions_idioms_and_other_peoples_things_are_not_facts(said: str) -> None:
    assert triples(said) == []


# --- written, superseded, never from the reply ----------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "fayd.db")
    yield s
    s.close()


@pytest.fixture
def memory(store: Store, embedder) -> Memory:
    return Memory(store, embedder)


@pytest.mark.models
def test_a_newer_statement_closes_the_old_window(memory: Memory) -> None:
    mentioned.note(memory, "ann", "the keys are in the coat pocket", now=SAID)
    mentioned.note(memory, "ann", "Oh, the keys are on the hall table now.", now=SAID + 3600)
    facts = Facts(memory)
    [now_valid] = facts.as_of(NOW.timestamp(), "ann", subject="keys", predicate="place")
    assert now_valid.object == "on the hall table" and now_valid.trust == "human_asserted"
    old, new = facts.history("keys", "place", "ann")
    assert (old.object, old.valid_to, old.closed_by) == ("in the coat pocket", SAID + 3600, new.id)
    # A second grandson does not end the first; a new doctor ends the old one.
    mentioned.note(memory, "ann", "my grandson Tom is starting university", now=SAID)
    mentioned.note(memory, "ann", "My other grandson Jack came for tea", now=SAID + 60)
    mentioned.note(memory, "ann", "Dr Patel is my GP", now=SAID)
    mentioned.note(memory, "ann", "my new doctor is Dr Evans", now=SAID + 60)
    valid = facts.as_of(NOW.timestamp(), "ann")
    assert {f.subject for f in valid if f.predicate == "relation"} == {"Tom", "Jack"}
    assert [f.object for f in valid if f.subject == "doctor"] == ["Dr Evans"]
    # Chinese the same way; another person's facts are their own.
    mentioned.note(memory, "mei", "我的眼镜在桌子上", now=SAID)
    mentioned.note(memory, "mei", "我的眼镜在床头柜上", now=SAID + 60)
    [glasses] = facts.as_of(NOW.timestamp(), "mei", subject="眼镜")
    assert glasses.object == "床头柜上"
    assert not facts.as_of(NOW.timestamp(), "mei", subject="keys")


class Scripted:
    """A language model that says one fixed reply (the reply of the issue)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def stream_chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Iterator[str]:
        yield self.reply

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        return self.reply

    def user_turn(self) -> Any:
        import contextlib

        return contextlib.nullcontext()


@pytest.mark.models
async def test_the_models_reply_is_never_a_fact_about_the_person(store, memory) -> None:
    reply = "I'll remember that my daughter Anna has her own tablets!"
    chat = Chat(
        Scripted(reply), store, AgentConfig(extract_every_turns=0, memory_tokens=0), LlmConfig(),
        memory,
    )  # fmt: skip
    turn = Turn(user="ann", device="d1", question="I take my blood pressure tablets every morning")
    async for _ in chat.reply(turn):
        pass
    await chat.idle()
    valid = Facts(memory).as_of(username="ann")
    assert [(f.subject, f.predicate, f.object) for f in valid] == [
        ("blood pressure tablets", "take", "every morning")
    ]
    assert not any("Anna" in f.text() or "daughter" in f.text() for f in valid)
    # The background extraction grounds its notes in the person's words only: the model's
    # name and kin word are dropped even where most of the note's words were hers.
    turns = [(turn.question, reply)]
    notes = [
        Item("user_persona", "Ann takes her daughter Anna's tablets every morning."),
        Item("user_persona", "Anna has her own tablets."),
        Item("user_persona", "Takes blood pressure tablets every morning."),
    ]
    kept, dropped = drop_unfounded(notes, turns, "ann", "Fay")
    assert [i.text for i in kept] == ["Takes blood pressure tablets every morning."]
    # The first was grounded by its share of words (0.67): its new name drops it.
    assert [d["reason"] for d in dropped] == ["invented (Anna)", "ungrounded (0.33)"]
    # Portraits and reflections read the person's side of a remembered exchange only.
    assert users_side(f"ann：{turn.question}\nFay：{reply}", "Fay") == f"ann：{turn.question}"


# --- recall answers from the facts -----------------------------------------------------------


class House:
    def __init__(self, store: Store, router, memory: Memory) -> None:
        frames = Frames()
        self.memory = memory
        self.understanding = Understanding(
            router,
            all_skills(),
            DeviceActions(DeviceRegistry(store, frames), frames, lambda _: None),
            memory,
            Preferences(store),
            UTC,
            clock=lambda: NOW,
        )

    def told(self, *sentences: str, user: str = "ann") -> None:
        for s in sentences:
            mentioned.note(self.memory, user, s, now=SAID)

    async def recall(self, question: str, user: str = "ann") -> str:
        """The recall skill's answer (the routing to it is the router's: tested there)."""
        lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in question) else "en"
        ctx = Context(user, "k1", lang, NOW, None, self.memory, None)  # type: ignore[arg-type]
        return (await all_skills().run("recall", {"query": question}, ctx)).say

    async def ask(self, text: str, user: str = "ann") -> tuple[str, str]:
        decision = self.understanding.decide(text, user, "k1")
        outcome = await self.understanding.act(decision, text, user, "k1")
        return decision.intent, outcome.say if outcome else ""


@pytest.fixture
def house(store: Store, router, memory: Memory) -> House:
    return House(store, router, memory)


@pytest.mark.models
async def test_recall_answers_from_what_was_mentioned(house: House) -> None:
    assert (await house.recall("Do you remember my husband's name?")).startswith(
        "You haven't told me that yet"
    )
    house.told(
        "my late husband Harold used to do the garden",
        "Dr Patel is my GP",
        "our Tom is starting university, he's my grandson",
        "my grandson Tom is starting university",
        "I had a dog called Biscuit when I was a girl",
        "my reading glasses are on the kitchen windowsill",
        "I've put the spare key under the plant pot",
        "I take my blood pressure tablets every morning",
        "I go to the lunch club on Tuesdays",
        "I love a cup of Earl Grey",
        "our Jenny's little one is called Poppy",
    )
    expected = {
        "Do you remember my husband's name?": "Your husband's name is Harold.",
        "what was my hubby called again?": "Your husband's name is Harold.",
        "who's my doctor?": "Your doctor is Dr Patel.",
        "what's the name of my GP?": "Your doctor is Dr Patel.",
        "who is my GP these days": "Your doctor is Dr Patel.",
        "which doctor do I see?": "Your doctor is Dr Patel.",
        "what day is the lunch club?": "You told me you go to the lunch club on Tuesdays.",
        "what's my grandson called?": "Your grandson's name is Tom.",
        "what was the name of my first dog?": "Your dog's name is Biscuit.",
        "where did I put my glasses?": (
            "You told me on Saturday that your reading glasses are on the kitchen windowsill."
        ),
        "where's the spare key?": (
            "You told me on Saturday that your spare key is under the plant pot."
        ),
        "when do I take my blood pressure tablets?": (
            "You told me you take your blood pressure tablets every morning."
        ),
        "when is the lunch club?": "You told me you go to the lunch club on Tuesdays.",
        "what do I like?": "You told me you love a cup of Earl Grey.",
        "do I like earl grey?": "You told me you love a cup of Earl Grey.",
        "what's Jenny's little one called?": "Jenny's little one's name is Poppy.",
        "who's my dentist?": NOT_TOLD,
        "what's my niece called?": NOT_TOLD,
        # asked as it was told, or with a tag that asks nothing more
        "Who's my doctor, remind me?": "Your doctor is Dr Patel.",
        "What did I tell you my grandson's called?": "Your grandson's name is Tom.",
        "Where did I say my reading glasses were?": (
            "You told me on Saturday that your reading glasses are on the kitchen windowsill."
        ),
    }
    for question, answer in expected.items():
        assert await house.recall(question) == answer, question


@pytest.mark.models
async def test_recall_in_chinese_and_several_of_one_kin(house: House) -> None:
    house.told("我老伴叫老王", "我的眼镜在桌子上", "我孙子叫小明", "小刚也是我孙子", user="mei")
    assert await house.recall("我老伴叫什么", "mei") == "你的老伴叫老王。"
    assert await house.recall("我老公叫什么名字", "mei") == "你的老公叫老王。"
    assert await house.recall("我的眼镜放哪了", "mei") == "你星期六跟我说，眼镜在桌子上。"
    assert await house.recall("我孙子叫什么", "mei") == "你跟我说过你的孙子：小明和小刚。"
    assert (await house.recall("我女儿叫什么", "mei")).startswith("这个你还没告诉过我")
    house.told("下午三点半提醒我去接妞妞放学，她是我外孙女。", user="mei")
    assert "妞妞" in await house.recall("我外孙女叫什么来着？", "mei")
    house.told("my grandson Tom is starting university", "My other grandson Jack came for tea")
    assert await house.recall("what are my grandsons called?") == (
        "You've told me of your grandsons Tom and Jack."
    )


@pytest.mark.models
async def test_a_statement_that_reaches_recall_is_kept_and_said_back(house: House) -> None:
    said = await house.recall("my doctor's called Dr Evans")
    assert said == "I'll remember that your doctor is Dr Evans."
    assert await house.recall("who's my doctor?") == "Your doctor is Dr Evans."


@pytest.mark.models
async def test_the_doctor_question_reaches_recall_not_a_phone_call(house: House) -> None:
    house.told("my doctor's called Dr Evans")
    for question in ("who's my doctor?", "what's my doctor's name?", "who is my GP"):
        intent, said = await house.ask(question)
        assert "no doctor" not in said and said == "Your doctor is Dr Evans.", (question, intent)


@pytest.mark.models
async def test_a_fact_said_to_any_skill_is_kept(store, memory) -> None:
    """The chat keeps what the person mentions whichever way the turn went (a skill's turn
    is recorded through ``Chat.record``)."""
    chat = Chat(
        None, store, AgentConfig(extract_every_turns=0, memory_tokens=0), LlmConfig(), memory
    )
    turn = Turn(user="ann", device="d1", question="Good morning! My glasses are in the bathroom.")
    turn.sentences.append("Good morning!")
    await chat.record(turn, {})
    await chat.idle()
    [fact] = Facts(memory).as_of(username="ann", subject="glasses")
    assert (fact.object, fact.source) == ("in the bathroom", "mentioned")
    await asyncio.sleep(0)


@pytest.mark.models
async def test_a_chinese_question_is_not_answered_with_a_sentence_that_shares_one_character(
    house: House,
) -> None:
    # Conversation nodes, as the chat keeps them: the user's side first.
    for said in ("我家楼下小卖部的老板人挺好，还给我送了袋橘子。", "那昨天的血压呢？"):
        house.memory.remember(f"mei：{said}\nFay：我在听。", "mei", "observation", "conversation")
    assert (await house.recall("我孙子叫什么来着？人老了，记性不行了。", "mei")).startswith(
        "这个你还没告诉过我"
    )
    assert (await house.recall("我今天吃药了没有？", "mei")).startswith("这个你还没告诉过我")
    # The sentence with most in common, not one that shares only 以前 ("before").
    for said in ("我以前在纺织厂干了三十年，三班倒。", "我老伴以前做的红烧肉，那叫一个香。"):
        house.memory.remember(f"mei：{said}\nFay：我在听。", "mei", "observation", "conversation")
    said = await house.recall("我以前在哪个厂上班的？", "mei")
    assert said == "你跟我说过：我以前在纺织厂干了三十年，三班倒。"  # one full stop
