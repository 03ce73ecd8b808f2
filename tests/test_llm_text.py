"""ThinkFilter and SentenceSplitter: streaming text clean-up, fed in every chunking."""

from __future__ import annotations

import pytest

from fayd.llm.text import SentenceSplitter, ThinkFilter, word_count


def chunkings(text: str):
    """Whole, per character, and in fixed-size pieces that cut tags and words anywhere."""
    yield [text]
    yield list(text)
    for size in (2, 3, 5, 7):
        yield [text[i : i + size] for i in range(0, len(text), size)]


def run_think(text: str, **kw) -> list[str]:
    outs = []
    for pieces in chunkings(text):
        f = ThinkFilter(**kw)
        outs.append("".join(f.feed(p) for p in pieces) + f.flush())
    return outs


def run_split(text: str, **kw) -> list[list[str]]:
    outs = []
    for pieces in chunkings(text):
        s = SentenceSplitter(**kw)
        got: list[str] = []
        for p in pieces:
            got += s.feed(p)
        tail = s.flush()
        outs.append(got + ([tail] if tail else []))
    return outs


# --- ThinkFilter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "visible"),
    [
        ("Hello there.", "Hello there."),
        ("<think>plan the answer</think>Hi!", "Hi!"),
        ("<think>\nstep 1\nstep 2\n</think>\n\nThe answer is 4.", "The answer is 4."),
        ("Before <think>hidden</think>after", "Before after"),
        ("A<think>x</think>B<think>y</think>C", "ABC"),
        ("Keep this. <think>never closed, cut off by max_tokens", "Keep this. "),
        ("a < b and c <th not a tag", "a < b and c <th not a tag"),
        ("ends with a partial tag <thi", "ends with a partial tag <thi"),
        ("ends with <", "ends with <"),
        ("stray </think>closing tag", "stray closing tag"),
        ("<think></think>empty block", "empty block"),
        ("x <think>a < b </thinking> still inside</think>y", "x y"),
        ("", ""),
    ],
)
def test_think_filter(text, visible):
    assert run_think(text) == [visible] * len(run_think(text))


def test_think_filter_starting_inside_a_block():
    # Templates that open <think> in the prompt: the reply starts in the reasoning.
    assert set(run_think("reasoning here</think>Answer.", inside=True)) == {"Answer."}


def test_think_filter_releases_text_as_soon_as_it_is_safe():
    f = ThinkFilter()
    assert f.feed("Hello <") == "Hello "
    assert f.feed("b>") == "<b>"
    assert f.feed(" <thin") == " "
    assert f.feed("k>secret</th") == ""
    assert f.feed("ink>Bye") == "Bye"
    assert f.flush() == ""


# --- SentenceSplitter ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Hello there. How are you? I am fine!", ["Hello there.", "How are you?", "I am fine!"]),
        (
            "Pi is 3.14 today. It was 1,000 years ago.",
            ["Pi is 3.14 today.", "It was 1,000 years ago."],
        ),
        (
            "Mr. Smith met Dr. Jones at St. Mary's. They talked.",
            ["Mr. Smith met Dr. Jones at St. Mary's.", "They talked."],
        ),
        (
            "Bring fruit, e.g. apples, i.e. red ones, etc. and more. Done now.",
            ["Bring fruit, e.g. apples, i.e. red ones, etc. and more.", "Done now."],
        ),
        (
            "We meet at 5 p.m. tomorrow. See you there.",
            ["We meet at 5 p.m. tomorrow.", "See you there."],
        ),
        (
            'He said "stop right there." Then he left.',
            ['He said "stop right there."', "Then he left."],
        ),
        ("(This is an aside.) Back to the point.", ["(This is an aside.)", "Back to the point."]),
        ("Really?! That is great... Tell me more.", ["Really?! That is great...", "Tell me more."]),
        ("First part; second part.", ["First part;", "second part."]),
        (
            "Visit fayd.local for more info. Thanks a lot.",
            ["Visit fayd.local for more info.", "Thanks a lot."],
        ),
        (
            "J. R. R. Tolkien wrote it. Read it soon.",
            ["J. R. R. Tolkien wrote it.", "Read it soon."],
        ),
        ("No trailing mark here", ["No trailing mark here"]),
        ("Line one is here\nLine two is here", ["Line one is here", "Line two is here"]),
        (
            "Paragraph one ends.\n\n\nParagraph two ends.",
            ["Paragraph one ends.", "Paragraph two ends."],
        ),
        (
            "今天天气很好。我们去公园吧！你觉得呢？",
            ["今天天气很好。", "我们去公园吧！", "你觉得呢？"],
        ),
        ("他说：“我们走吧。”然后走了。", ["他说：“我们走吧。”", "然后走了。"]),
        ("第一点；第二点…", ["第一点；", "第二点…"]),
        ("Price is 3.50 dollars. Ok then.", ["Price is 3.50 dollars.", "Ok then."]),
        ("It ends with a number 42.", ["It ends with a number 42."]),
        ("Room No. 5 is free. No. I said no.", ["Room No. 5 is free.", "No. I said no."]),
        ("See fig. 2 below. The end.", ["See fig. 2 below.", "The end."]),
    ],
)
def test_sentences(text, sentences):
    for got in run_split(text):
        assert got == sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Yes. I can do that for you.", ["Yes. I can do that for you."]),
        ("Sure!\nHere is the plan.", ["Sure! Here is the plan."]),
        ("Well... I think so. Maybe not.", ["Well... I think so.", "Maybe not."]),
        ("1. Buy milk\n2. Eggs\n", ["1. Buy milk", "2. Eggs"]),
        ("- \nitem", ["- item"]),
        ("好。我们走吧。", ["好。我们走吧。"]),
        ("好。Let us go now.", ["好。 Let us go now."]),
        ("All good here. Ok.", ["All good here.", "Ok."]),  # a tiny tail is still spoken
        ("Ok.", ["Ok."]),
        ("안녕하세요. 반가워요 정말.", ["안녕하세요. 반가워요 정말."]),
    ],
)
def test_tiny_fragments_merge_forward(text, sentences):
    for got in run_split(text):
        assert got == sentences


def test_min_words_can_be_disabled():
    assert run_split("Yes. No. Maybe.", min_words=0)[0] == ["Yes.", "No.", "Maybe."]


def test_sentence_is_released_when_the_next_character_confirms_it():
    s = SentenceSplitter()
    assert s.feed("The value is 3.") == []  # "3." might be "3.14"
    assert s.feed("14 exactly.") == []
    assert s.feed(" Next") == ["The value is 3.14 exactly."]
    assert s.flush() == "Next"
    assert s.flush() is None


def test_cjk_sentence_waits_only_for_a_possible_closing_quote():
    s = SentenceSplitter()
    assert s.feed("我们走吧。") == []
    assert s.feed("”") == []
    assert s.feed("好") == ["我们走吧。”"]


def test_long_run_on_sentence_is_cut_at_a_comma():
    clause = "and then we walked a little further down the road"
    text = ", ".join([clause] * 8) + "."
    for got in run_split(text, max_chars=120):
        assert len(got) > 1
        assert all(len(s) <= 120 for s in got)
        assert " ".join(got) == text
        assert all(s.endswith((",", ".")) for s in got)


def test_long_cut_never_splits_a_thousands_separator():
    text = "We counted " + "1,000 and " * 20 + "more."
    for got in run_split(text, max_chars=60):
        assert " ".join(got) == text
        assert not any(s.endswith("1,") for s in got)


def test_blank_input():
    s = SentenceSplitter()
    assert s.feed("   \n\n  ") == []
    assert s.flush() is None


@pytest.mark.parametrize(
    ("text", "n"),
    [("Hello there", 2), ("Yes.", 1), ("- **", 0), ("你好", 2), ("I have 3 cats", 4), ("", 0)],
)
def test_word_count(text, n):
    assert word_count(text) == n


def test_public_names():
    import fayd.llm

    for name in fayd.llm.__all__:
        assert getattr(fayd.llm, name) is not None


def _split_all(splitter, text: str, step: int = 3) -> list[str]:
    out = []
    for i in range(0, len(text), step):
        out += splitter.feed(text[i : i + step])
    rest = splitter.flush()
    return out + ([rest] if rest else [])


def test_first_clause_starts_speech_early_then_whole_sentences() -> None:
    from fayd.llm.text import SentenceSplitter

    text = "The weather today is mostly sunny, with a few clouds. I hope, you know, it stays."
    assert _split_all(SentenceSplitter(first_clause_words=4), text) == [
        "The weather today is mostly sunny,",
        "with a few clouds.",
        "I hope, you know, it stays.",
    ]
    # A clause shorter than the limit is not cut; numbers with commas are not clauses.
    assert _split_all(
        SentenceSplitter(first_clause_words=4), "Yes, 1,000 people came. Ok then."
    ) == [
        "Yes, 1,000 people came.",
        "Ok then.",
    ]
    assert _split_all(
        SentenceSplitter(first_clause_words=2), "今天天气很好，阳光明媚。你好吗？", 1
    ) == [
        "今天天气很好，",
        "阳光明媚。",
        "你好吗？",
    ]
    assert (
        _split_all(SentenceSplitter(), text)[0]
        == "The weather today is mostly sunny, with a few clouds."
    )
