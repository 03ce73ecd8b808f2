"""The chit-chat guardrails as pure code: the loop detector on crafted token streams
(English and Chinese, split at any point), prompt-format fragments, echoes, and the bounds."""

from __future__ import annotations

import random

import pytest

from fayd.agent import guard
from fayd.agent.guard import Bounds, LoopDetector, ReplyGuard
from fayd.memory import hygiene

#: The reply that took over every turn of one user (issue 12): a sentence said again and again.
SORRY = "I'm so sorry… I promise you that. "
NORMAL = (
    "That sounds like a lovely morning. I remember you said the garden was full of roses, "
    "and I hope the sun stays out for you. Would you like to tell me more about it?"
)


def deltas(text: str, seed: int) -> list[str]:
    """``text`` cut at random points, as a model streams it (words split across deltas)."""
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, 6)
        out.append(text[i : i + n])
        i += n
    return out


def stopped_at(stream: list[str], detector: LoopDetector) -> int | None:
    """Characters streamed when the detector said stop (None: never)."""
    seen = 0
    for delta in stream:
        seen += len(delta)
        if detector.feed(delta):
            return seen
    return None


@pytest.mark.parametrize("seed", range(5))
def test_a_looping_stream_is_stopped_at_the_third_time(seed: int) -> None:
    text = SORRY * 20
    at = stopped_at(deltas(text, seed), LoopDetector())
    assert at is not None
    # Stopped in the third round (4 words a third time), long before the token limit.
    assert len(SORRY) * 2 < at <= len(SORRY) * 3 + 6


@pytest.mark.parametrize("seed", range(3))
def test_a_block_said_three_times_in_a_row_is_a_loop(seed: int) -> None:
    text = "Oh dear, I'm so sorry, I'm so sorry, I'm so sorry, I'm so sorry, I'm so sorry"
    at = stopped_at(deltas(text, seed), LoopDetector())
    assert at is not None and at < len(text) - 10


@pytest.mark.parametrize("seed", range(3))
def test_chinese_loops_are_found_by_characters(seed: int) -> None:
    text = "我很抱歉，我向你保证。" * 10
    at = stopped_at(deltas(text, seed), LoopDetector())
    assert at is not None and at <= len("我很抱歉，我向你保证。") * 3
    calm = "今天早上我去公园散步了，看见很多花开了。你喜欢什么花呢？我最喜欢桂花的香味。"
    assert stopped_at(deltas(calm, seed), LoopDetector()) is None


@pytest.mark.parametrize("seed", range(3))
def test_natural_replies_are_no_loops(seed: int) -> None:
    for text in (
        NORMAL,
        "No, no, no, don't worry about it. It is very, very kind of you to ask.",
        "Thank you. Thank you for telling me, that means a lot to me.",
    ):
        assert stopped_at(deltas(text, seed), LoopDetector()) is None, text


def test_a_word_cut_across_deltas_is_not_counted_early() -> None:
    detector = LoopDetector(n=2, times=2)
    # "go on" twice would be a loop of 2-grams; "go on" + "go onward" is not.
    assert not detector.feed("go on go on")
    detector = LoopDetector(n=2, times=2)
    assert not detector.feed("go on go on")  # the second "on" may go on: held back
    assert not detector.feed("ward home")


def test_a_sentence_of_an_earlier_reply_said_again_is_a_repeat() -> None:
    detector = LoopDetector(earlier=["Hello Ann. I promise you that I am here."])
    assert detector.repeats("I promise you that I am here.")
    assert not detector.repeats("Thank you.")  # short sentences may recur
    assert not detector.repeats("The garden looks lovely today.")
    assert detector.repeats("the garden looks LOVELY today!")  # now it was said


# --- prompt format ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("- [2026/12/01 10:28:31] User: I like tea", "stamp"),
        ("[2026-12-01 10:28] Ann went out", "stamp"),
        ("User: what about you?", "speaker"),
        ("Sure. Assistant: I can help.", "speaker"),
        ("Ann: tell me more", "speaker"),
        ("<|im_start|>assistant", "template"),
        ("The user's favorite hobby is [user_persona_name].", "placeholder"),
        ("Hello {name}, how are you?", "placeholder"),
        ("Dear [Your Name], thank you", "placeholder"),
        ("user_persona: likes tea", "category"),
    ],
)
def test_prompt_format_is_recognised(text: str, why: str) -> None:
    assert hygiene.artifact(text, ("Ann", "Fay")) == why


@pytest.mark.parametrize(
    "text",
    [
        NORMAL,
        "I told my daughter: come at five.",
        "It is 7 o'clock? I can't see a clock from here.",
        "我很好，谢谢你！你今天过得怎么样？",
    ],
)
def test_words_are_not_prompt_format(text: str) -> None:
    assert hygiene.artifact(text, ("Ann", "Fay")) is None


def test_stop_strings_cover_the_next_turn_and_memory_lines() -> None:
    stops = guard.stop_strings("Ann", "Fay")
    assert {"\nAnn:", "\nFay:", "\nUser:", "\n- [", "<|im_start|>"} <= set(stops)


# --- echoes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "piece"),
    [
        ("Do you like music?", "Do you like music?"),
        ("Do you like music?", "Do you like music too?"),
        ("I feel lonely today.", "I feel lonely today too."),
        ("What did you have for breakfast?", "What did you have for breakfast, Ann?"),
        ("I went to the market this morning and bought apples.", "I went to the market,"),
        ("你今天好吗？", "你今天好吗？"),
    ],
)
def test_echoes(question: str, piece: str) -> None:
    assert guard.echo_ratio(question, piece) >= guard.ECHO_RATIO
    judge = ReplyGuard(question)
    assert judge.judge(piece) is None and judge.problem == "echo" and judge.done


@pytest.mark.parametrize(
    ("question", "piece"),
    [
        ("Do you like music?", "I love music, especially old songs."),
        ("I miss my husband.", "I'm sorry you miss your husband."),
        ("I feel lonely today.", "I'm here with you; would you like to talk?"),
    ],
)
def test_answers_are_no_echoes(question: str, piece: str) -> None:
    assert guard.echo_ratio(question, piece) < guard.ECHO_RATIO
    assert ReplyGuard(question).judge(piece) == piece


def test_a_greeting_returned_is_no_echo() -> None:
    assert ReplyGuard("Good morning Fay.", user="Ann").judge("Good morning, Ann!")
    # The model mirrors the name it was greeted by: not the user's, so it is dropped.
    assert (
        ReplyGuard("Good morning Fay.", user="Ann").judge("Good morning, Fay.") == "Good morning."
    )


def test_a_template_filled_again_is_a_repeat() -> None:
    earlier = [
        "No, no! You're not supposed to be sleeping well, and you're not supposed to, right?"
    ]
    detector = LoopDetector(earlier)
    assert detector.repeats(
        "You're not supposed to be eating porridge, and you're not supposed to, right?"
    )
    assert not detector.repeats("Porridge with honey sounds like a warm start to the day.")
    detector = LoopDetector(["I'm so glad you enjoyed it, I'll make a sandwich for you tomorrow."])
    assert detector.repeats("I'll make a sandwich for you tomorrow!")  # a clause lifted whole
    assert LoopDetector(["You're not getting it, I'm sorry."]).repeats("You're not getting it,")


def test_a_paraphrase_is_an_echo_when_the_embedder_says_so() -> None:
    judge = ReplyGuard("Do you enjoy listening to music?")
    assert judge.doubtful("Do you like music?")
    assert judge.judge("Do you like music?", cosine=0.88) is None and judge.problem == "echo"
    # A statement must come closer to be a paraphrase rather than an answer.
    judge = ReplyGuard("Do you like flowers?")
    assert judge.judge("Yes, I like flowers very much.", cosine=0.907)


# --- the reply's bounds ----------------------------------------------------------------------


def test_two_sentences_end_the_reply() -> None:
    judge = ReplyGuard("How was your day?", Bounds(sentences=2, words=35))
    assert judge.judge("It was quiet,") == "It was quiet,"  # a first clause: no sentence
    assert not judge.done
    assert judge.judge("and the sun came out.") and not judge.done
    assert judge.judge("I read a book.") and judge.cut == "sentences" and judge.problem is None
    assert judge.judge("And then more.") is None


def test_the_word_bound_stops_the_stream_and_keeps_a_whole_first_clause() -> None:
    judge = ReplyGuard("Tell me something.", Bounds(sentences=2, words=10))
    run_on = "I was thinking about the garden, the roses and the apple tree and the old"
    stop = False
    for delta in deltas(run_on, 1):
        stop = judge.feed(delta)
        if stop:
            break
    assert stop and judge.cut == "words" and judge.problem is None
    assert judge.tail(run_on) == "I was thinking about the garden"  # cut at its comma
    assert judge.said == ["I was thinking about the garden"]


def test_over_the_word_bound_a_half_second_sentence_is_not_said() -> None:
    judge = ReplyGuard("Tell me something.", Bounds(sentences=3, words=8))
    assert judge.judge("The roses are out.") == "The roses are out."
    judge.feed("The roses are out. And the apple tree is full of")
    assert judge.done and judge.tail("And the apple tree is full of") is None


def test_a_leaked_turn_stops_the_reply_after_what_was_said() -> None:
    judge = ReplyGuard("I had tea.", user="Ann")
    assert judge.judge("That sounds nice.") == "That sounds nice."
    assert judge.judge("Ann: and biscuits") is None
    assert judge.cut == "format" and judge.problem is None  # something good was said


def test_fay_does_not_call_the_user_by_her_own_name() -> None:
    assert ReplyGuard("I feel sad.").judge("I'm sorry, Fay. ") == "I'm sorry."
    assert ReplyGuard("Hi").judge("Fay, you're a lovely person!") == "You're a lovely person!"
    assert ReplyGuard("Who are you?").judge("I'm Fay, your companion.") == (
        "I'm Fay, your companion."
    )


def test_the_models_own_label_is_dropped() -> None:
    assert ReplyGuard("Hello!").judge("Fay: Hello, how are you today?") == (
        "Hello, how are you today?"
    )


def test_invented_specifics_are_not_said() -> None:
    for text in ("Call me at 555-123-4567.", "It's 21 degrees outside.", "Visit www.example.com"):
        judge = ReplyGuard("Hi")
        assert judge.judge(text) is None and judge.problem == "fact", text
    for text in ("The war years, 1939-1945, were hard.", "I was born in 1941.", "At 10.30 then."):
        assert not guard.invented(text), text
    assert guard.invented("It's not sunny today, but tomorrow will be better.", "Hello")
    assert not guard.invented("Rain can be cosy with a cup of tea.", "It's raining again.")


def test_fallback_lines_are_short_and_in_the_question_language() -> None:
    assert guard.fallback("hello", 0) != guard.fallback("hello", 1)
    assert guard.fallback("你好吗", 0) in guard.FALLBACKS["zh"]
    assert all(len(line.split()) <= 6 for line in guard.FALLBACKS["en"])


def test_unkind_words_are_never_said() -> None:
    # Said by the bundled model, tried as a new user (issue 12).
    for text in (
        "I'm sorry. I don't know what you're going on about.",
        "I can't help you with that.",
        "I'm not here to listen to that.",
        "You're being silly.",
    ):
        judge = ReplyGuard("My knees ache.")
        assert judge.judge(text) is None and judge.problem == "unkind", text
    for text in ("I don't know, but I'd love to hear more.", "Don't be silly about the weather."):
        assert ReplyGuard("Hi").judge(text), text


def test_stock_phrases_are_not_said() -> None:
    judge = ReplyGuard("What do you think about roses?")
    assert judge.judge("I'm sorry for any confusion.") is None and judge.problem == "filler"
    judge = ReplyGuard("Roses?")
    assert (
        judge.judge("Roses are lovely.")
        and judge.judge("I'll be happy to explain further.") is None
    )
    # The conversation told from outside, heard after "Thank you, that's all".
    judge = ReplyGuard("Thank you, that's all")
    assert judge.judge("The user thanked you for your assistance.") is None
    assert judge.problem == "filler"
    # A piece that introduces what never follows (the model's summaries and letters).
    judge = ReplyGuard("He was a postman, you know.")
    assert judge.judge("Here is the original:") is None and judge.problem == "filler"


def test_an_apology_for_nothing_is_not_said() -> None:
    judge = ReplyGuard("What do you think about roses?")
    assert judge.judge("Oh dear, I'm sorry about that.") is None and judge.problem == "filler"
    assert ReplyGuard("My knees ache today.").judge("I'm sorry, that sounds sore.")
    assert ReplyGuard("I lost my keys again.").judge("Oh dear, I'm sorry.")
    judge = ReplyGuard("My grandson is starting university next week")
    assert judge.judge("Oh no, my dear. A university!") is None and judge.problem == "filler"
    judge = ReplyGuard("I watched a film about the war yesterday")
    assert judge.judge("The war, oh the war!") and judge.judge("I'm sorry you've gone.") is None
    assert judge.cut == "filler"  # what was said stands; the reply ends there
