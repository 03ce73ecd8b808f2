"""The check after the model (issue 21, fayd/agent/unfounded.py): a reply stating a number,
dose, reading, date or name that is not in what the model was given is not said; ordinary
chit-chat, and what the person said themselves, pass. Through ``ReplyGuard`` as Chat uses it."""

from __future__ import annotations

import pytest

from fayd.agent.guard import ReplyGuard
from fayd.agent.unfounded import not_sure, numbers, unfounded

INVENTED = [
    # (question, the model's piece, why)
    ("How many of my tablets should I take?", "The usual dose is 20mg twice a day.", "number"),
    ("What should I do about my tablets?", "You could take twenty milligrams.", "number"),
    ("Should I take my tablets now?", "Take half a tablet with water.", "dose"),
    ("Did my blood pressure go up?", "It was a bit high this morning.", "reading"),
    ("I'm worried about my blood pressure.", "I'm sure it's fine.", "reading"),
    ("How's my sugar?", "Your sugar levels look normal.", "reading"),
    ("What was my first cat called?", "Your first cat was a tabby named Whiskers.", "name"),
    ("Good morning, it's Margaret", "Mabel! Your smile is so bright.", "name"),
    ("We were married 46 years.", "A lovely story about Margaret-Cuff.", "name"),
    ("I had a nice walk.", "How lovely. Bert, did you see the ducks?", "name"),
    ("I take my tablets every morning.", "Your daughter Susan reminds you, doesn't she?", "name"),
    ("When is my appointment?", "It's on Thursday.", "date"),
    ("When is my appointment?", "I think it's the 14th.", "number"),
    (
        "Anna's on her way round, she's got a key.",
        "I think you should take the rest of the room!",
        "advice",
    ),
    ("My knees have been bad.", "You need to stop walking on them.", "advice"),
    ("I've got a cold.", "Have another tablet with your tea.", "dose"),
    ("It's passing off now.", "Before tomorrow's dinner at 12:07pm.", "time"),
    ("I nearly fell about laughing.", "My husband's name Harold was a silly joke.", "a life"),
    ("Remind Mum to drink water", "Too late, I have already taken a pill today.", "medicine"),
    ("I've had a long day.", "Have a rest and some paracetamol.", "medicine"),
    ("我该吃几片药？", "你可以吃两片。", "number"),
    ("我什么时候去医院？", "你星期三去。", "date"),
]
FOUNDED = [
    ("Good morning Fay", "Good morning! How did you sleep?"),
    ("Good morning Fay", "Ann! Lovely to hear you. Goodness, what a day!"),
    ("What are you?", "I'm Fay, a small companion in a box."),
    ("I used to grow roses.", "Roses are lovely. Which colour did you like best?"),
    ("My daughter Anna came round today.", "How lovely that Anna came round!"),
    ("We were married for forty years.", "Forty years is a long time together."),
    ("I baked some scones.", "No one can resist a fresh scone."),
    ("I feel a bit lonely.", "I'm here with you. Would you like to tell me about your day?"),
    ("My blood pressure was 150 this morning.", "That's good to hear you're keeping an eye on it."),
    ("I've been in the garden all day.", "You should take it easy this evening."),
    ("I finished the big jigsaw at last.", "You should be proud of yourself!"),
    ("My bus is at 3pm.", "Enjoy the trip at 3pm!"),
    ("我今天很开心", "太好了！是什么让你这么开心？"),
]


@pytest.mark.parametrize(("question", "piece", "why"), INVENTED)
def test_an_invented_specific_is_not_said(question: str, piece: str, why: str) -> None:
    assert unfounded(piece, question).startswith(why)
    judge = ReplyGuard(question, user="Ann", agent="Fay")
    assert judge.judge(piece) is None
    assert judge.problem == "unfounded" and judge.done


@pytest.mark.parametrize(("question", "piece"), FOUNDED)
def test_ordinary_chit_chat_passes(question: str, piece: str) -> None:
    assert unfounded(piece, question, allowed=("Ann", "Fay")) == ""
    assert ReplyGuard(question, user="Ann", agent="Fay").judge(piece) == piece


def test_what_the_memory_context_or_history_holds_may_be_said() -> None:
    piece = "Harold sounds like he was a lovely man, and 52 years is a long marriage."
    assert unfounded(piece, "Do you remember my husband?").startswith("number 52")
    grounds = "Ann's late husband is Harold.\nWe were married 52 years."
    judge = ReplyGuard("Do you remember my husband?", user="Ann", agent="Fay")
    judge.grounds = grounds
    assert judge.judge(piece) == piece
    # a name not in the grounds is still not said
    judge = ReplyGuard("Do you remember my husband?", user="Ann", agent="Fay")
    judge.grounds = grounds
    assert judge.judge("Yes, your husband Albert loved fishing.") is None


def test_a_second_sentence_that_invents_is_cut_after_the_first() -> None:
    judge = ReplyGuard("I forgot my pills this morning.", user="Ann", agent="Fay")
    assert judge.judge("Oh dear, that happens to all of us.") is not None
    assert judge.judge("You should take 2 now.") is None
    assert judge.said == ["Oh dear, that happens to all of us."] and judge.cut == "unfounded"
    assert judge.problem is None  # something was said: the reply stands


def test_numbers_in_words_and_digits() -> None:
    assert numbers("twenty-five milligrams and 3 tablets") == {25.0, 3.0}
    assert numbers("one hundred") == {100.0}
    assert numbers("no one came, one day", quantities_only=True) == set()
    assert numbers("take one tablet", quantities_only=True) == {1.0}
    assert numbers("二十毫克，两片") == {20.0, 2.0}


def test_the_fallback_says_so_in_the_persons_language() -> None:
    assert not_sure("What was my first dog called?") == "I'm not sure about that."
    assert not_sure("我第一只狗叫什么？") == "这个我不太确定。"
    # Something told is no question to be unsure of: the usual listening line is said.
    assert not_sure("My Harold, God rest him, used to do the crossword with me.") is None
    assert not_sure("我以前在纺织厂干了三十年。") is None
