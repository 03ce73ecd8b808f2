"""The router's parts (docs/understanding.md) on real data: qa.csv in Fay's format and its
refusals, the emergency words in English and Chinese with their harmless look-alikes, the
intents file's refusals, and the whole router with the real MiniLM embedder."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from fayd.agent.care.emergency import EmergencyDetector
from fayd.agent.features import all_skills
from fayd.agent.language.intents import load_examples
from fayd.agent.language.text import language, normalize
from fayd.agent.understand.qa import DEFAULT_QA, HouseholdQa, QaTable
from fayd.agent.understand.router import Router
from fayd.errors import ConfigError

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_text_is_normalized_the_same_typed_or_heard() -> None:
    assert normalize("  What’s the TIME?! ") == "what's the time"
    assert normalize("ＨＥＬＰ！") == "help"
    assert language("现在几点了") == "zh" and language("what time") == "en"


def test_the_shipped_qa_csv_loads_and_matches() -> None:
    qa = QaTable.load(DEFAULT_QA, all_skills().names)
    entry, score = qa.match(normalize("What's your name?"))
    assert score == 1.0 and "Fay" in entry.answer
    entry, score = qa.match(normalize("whats you name"))  # as ASR might write it
    assert 0.88 <= score < 1.0 and "Fay" in entry.answer
    assert qa.match(normalize("what's the name of that song")) is None
    entry, _ = qa.match("你叫什么名字")
    assert "Fay" in entry.answer


@pytest.mark.parametrize(
    "said", ["Thank you, dear", "thank you love", "Fay, thank you", "thanks then", "Thank you!"]
)
def test_a_qa_phrase_said_with_a_word_of_address_is_still_the_phrase(said: str) -> None:
    """The model answered "Thank you, dear" with "I'm glad of your comfort with Lily's name…"
    because "dear" kept it from qa.csv's "thank you"."""
    entry, score = QaTable.load(DEFAULT_QA, all_skills().names).match(normalize(said))
    assert entry.answer == "You're very welcome." and score == 1.0


@pytest.mark.parametrize("said", ["dear me", "oh dear", "love you", "fay"])
def test_words_of_address_alone_or_meant_otherwise_are_not_taken_for_thanks(said: str) -> None:
    found = QaTable.load(DEFAULT_QA, all_skills().names).match(normalize(said))
    assert found is None or "welcome" not in found[0].answer


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        ("hello,,rm -rf /\n", "fayd runs no shell commands"),
        ("hello\n", "at least the phrases and the answer"),
        (";;,an answer\n", "no phrase"),
        ("hello,,\n", "neither an answer nor a skill"),
        ("hello,hi,skill:fly_to_the_moon\n", "no skill 'fly_to_the_moon'"),
        ("hello,hi,skill:clock_time {not json}\n", "not JSON"),
        ("hello,hi,skill:clock_time [1]\n", "must be a JSON object"),
    ],
)
def test_a_bad_qa_row_is_refused_alone_with_file_and_line(
    tmp_path: Path, rows: str, error: str
) -> None:
    """The shipped file is strict (a wrong row is a bug of ours); a household's refuses the
    row, names it, and keeps the others and the shipped table."""
    path = tmp_path / "qa.csv"
    path.write_text("问题,答案,脚本\nwhat time,It is time.,\n" + rows, encoding="utf-8")
    with pytest.raises(ConfigError, match=error) as caught:
        QaTable.load(path, all_skills().names)
    assert f"{path}:3" in str(caught.value)
    table = QaTable.household(path, all_skills().names)
    assert len(table.problems) == 1 and table.problems[0].startswith(f"{path}:3: ")
    assert error in table.problems[0]
    assert table.match("what time")[0].answer == "It is time."
    assert table.match(normalize("What's your name?")) is not None  # the shipped rows too


def test_a_fay_qa_csv_with_scripts_keeps_its_answers_and_runs_nothing(tmp_path: Path) -> None:
    """Fay's third column is a script: fayd never runs one, and says the answer alone."""
    path = tmp_path / "qa.csv"
    path.write_text(
        "问题,答案,脚本\n"
        "开灯;把灯打开,好的，灯开了,python light.py on\n"
        "你叫什么名字,我叫小菲,\n"
        "what's your name,I'm Rosie.,\n",
        encoding="utf-8",
    )
    table = QaTable.household(path, all_skills().names)
    entry, _ = table.match("开灯")
    assert entry.answer == "好的，灯开了" and entry.skill is None and not table.problems
    assert table.match("你叫什么名字")[0].answer == "我叫小菲"  # theirs before the shipped
    assert table.match(normalize("What's your name?"))[0].answer == "I'm Rosie."


def test_an_edited_qa_csv_is_heard_without_a_restart(tmp_path: Path) -> None:
    import os

    path = tmp_path / "qa.csv"
    path.write_text("question,answer\nwho feeds the cat,Anna does.\n", encoding="utf-8")
    qa = HouseholdQa(path, all_skills().names)
    assert qa.match("who feeds the cat")[0].answer == "Anna does."
    path.write_text("question,answer\nwho feeds the cat,Bill does now.\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a new stamp even within the file system's time resolution
    assert qa.match("who feeds the cat")[0].answer == "Bill does now."
    path.write_bytes(b"\xff\xfe broken")  # unreadable: the last table stays
    os.utime(path, ns=(2, 2))
    assert qa.match("who feeds the cat")[0].answer == "Bill does now."


def test_a_qa_row_may_call_a_skill(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text('question,answer,skill\nlights please,,skill:set_brightness {"level": 80}\n')
    entry, _ = QaTable.load(path, all_skills().names).match("lights please")
    assert entry.skill == "set_brightness" and entry.args == {"level": 80}


EMERGENCIES = [
    ("I've fallen and I can't get up", "fall"),
    ("I fell asleep in the chair and now I can't get up", "fall"),
    ("Mum has had a fall in the bathroom", "fall"),
    ("I fell out of bed and I can't move", "fall"),  # not "fell out" with someone
    ("I've fallen out of bed", "fall"),
    ("I'm stuck in the bath", "fall"),
    ("I can't get out of the bath", "fall"),
    ("I've burnt my hand badly on the kettle", "burn"),
    ("the kitchen's on fire", "fire"),
    ("there's smoke in the kitchen", "fire"),
    ("I can smell gas", "gas"),
    ("I've taken too many of my tablets", "medicine"),
    ("I think I took my pills twice", "medicine"),
    ("I feel really faint", "help"),
    ("somebody is trying to break in", "help"),
    ("厨房着火了", "fire"),
    ("我闻到煤气味", "gas"),
    ("I'm lying on the kitchen floor", "fall"),
    ("my chest hurts", "chest_pain"),
    ("I've got a terrible pain in my chest", "chest_pain"),
    ("I can't breathe", "breathing"),
    ("my face is drooping and my arm feels numb", "stroke"),
    ("I cut myself and I'm bleeding badly", "bleeding"),
    ("help!", "help"),
    ("Please call an ambulance", "help"),
    ("help me please", "help"),
    ("我摔倒了，起不来", "fall"),
    ("胸口好疼", "chest_pain"),
    ("我喘不过气来", "breathing"),
    ("救命啊", "help"),
    ("快叫救护车", "help"),
    ("我妈晕过去了", "fall"),  # 过去了 here is fainting, not "it has passed"
]
HARMLESS = [
    "I fell for his jokes",
    "I fell out with my sister",
    "the vase fell over",
    "my glasses fell down the back of the sofa",
    "and then we went down to the seaside",
    "we went down the road to the shops",
    "I put the gas fire on",
    "I need to pay the gas bill",
    "we sat by the fire",
    "I'm stuck on the crossword",
    "I burnt the toast",
    "I took my pills this morning",
    "Help yourself to the biscuits",
    "Help me find my glasses",
    "can you help me with the crossword",
    "I stroked the cat this morning",
    "the price of eggs fell again",
    "I need help with my phone",
    "my heart goes out to them",
    "it's breathtaking out there",
    "我爱上了养花",
    "股票又跌了",
    "Oh I nearly fell about laughing, the cat's got her head stuck in the cereal box",
    "我刚才差点笑晕过去，那段相声太逗了",
]


@pytest.mark.parametrize(("said", "kind"), EMERGENCIES)
def test_emergencies_are_found_by_their_words(said: str, kind: str) -> None:
    found = EmergencyDetector().detect(normalize(said))
    assert found is not None and found.kind == kind and found.via == "words"


@pytest.mark.parametrize("said", HARMLESS)
def test_harmless_sayings_do_not_alarm(said: str) -> None:
    assert EmergencyDetector().detect(normalize(said)) is None


def test_an_unknown_intent_or_a_bad_table_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "intents.toml"
    bad.write_text('["weather.forecast"]\nen = ["will it rain"]\n')
    with pytest.raises(ConfigError, match=r"\[weather.forecast\] is not an intent"):
        load_examples([bad])
    bad.write_text('["clock.time"]\nen = ["", 3]\n')
    with pytest.raises(ConfigError, match=r"clock\.time\.en must be a list of phrases"):
        load_examples([bad])
    good = tmp_path / "more.toml"
    good.write_text('["clock.time"]\nen = ["tell me the hour please"]\n')
    assert "tell me the hour please" in load_examples([good])["clock.time"]


@pytest.mark.models
@pytest.mark.parametrize(
    ("said", "intent"),
    [
        ("Sorry love, could you tell me the time?", "clock.time"),
        ("what's the date today", "clock.date"),
        ("give us a wave", "device.gesture"),
        ("I can barely hear you", "device.volume"),
        ("stop", "stop"),
        ("别说了", "stop"),
        ("remember that my neighbour is called Jean", "memory.remember"),
        ("remind me to ring my sister at six this evening", "reminder.set"),
        ("is it going to rain this afternoon", "info.offline"),
        ("I had a lovely walk by the river today", "chitchat"),
        ("I've fallen over and I can't get up", "emergency"),
        ("What's your name?", "qa"),
        # a fact said in passing is kept and said back, not left to the model ("Might have
        # been on the floor in a bathroom.")
        ("My glasses are on the kitchen windowsill.", "memory.recall"),
        ("My late husband Harold was a postman, you know.", "memory.recall"),
        # told, not asked: kept, never "you haven't told me that" to someone telling it
        ("The plumber is coming on Tuesday morning", "memory.remember"),
        ("When is the plumber coming?", "memory.recall"),
        ("Hi Fay, it's Anna. How's Mum been today?", "care.day"),
        ("Did Mum have a fall today?", "care.day"),
        ("My head's been pounding since I woke up.", "wellbeing.symptom"),
        ("Who was the vicar at our wedding?", "honest.past"),
        ("Has Mum taken her tablets today?", "care.day"),  # her day says; the model would guess
        ("Morning Fay. Not a good night, me hip kept me awake.", "wellbeing.symptom"),
        ("I had a good night's sleep", "chitchat"),  # no "good night", no symptom
        ("No, I'm alright now, it's gone off.", "wellbeing.symptom"),  # better: glad words
        # a week of a companion's life (benchmarks/companion.py): each once went to the model
        ("My ankles have been swelling up something terrible.", "wellbeing.symptom"),
        ("我腿有点肿，一按一个坑。", "wellbeing.symptom"),
        ("I came over all wobbly getting out of the bath.", "wellbeing.symptom"),
        ("我这两天老忘事，刚说的话一转身就忘了。", "wellbeing.symptom"),
        (
            "I've not been eating much these last few days, nothing tastes of anything.",
            "wellbeing.symptom",
        ),
        ("How tall was my Harold?", "honest.past"),
        ("What did the doctor say about my water tablets?", "honest.past"),
        ("Is Sophie having a boy or a girl, did I say?", "honest.past"),
        ("我上个月体检查的胆固醇是多少？", "honest.past"),
        ("Is that higher than Monday's?", "honest.reading"),
        ("Tell me a bit about yourself, Fay.", "qa"),  # written, never the model's
        ("What was I told my oxygen was on Tuesday?", "honest.reading"),
        ("我那药一天吃两次还是一次？", "honest.advice"),
        ("我孙子叫啥来着？", "memory.recall"),
        ("我钥匙搁哪儿了？", "memory.recall"),
        ("天气预报说今天下雨不？", "info.offline"),
        ("给我放段京剧听听。", "info.cannot"),
        ("Oh cancel that bin one, our Tom says he'll do them.", "reminder.cancel"),
        (
            "Oh I'm in a right state, there's smoke pouring out the toaster and the alarm's going.",
            "emergency",
        ),
    ],
)
def test_the_router_decides_before_any_model(router: Router, said: str, intent: str) -> None:
    decision = router.route(said, NOW)
    assert decision.intent == intent, decision
    explained = decision.explain()
    assert set(explained) == {"intent", "via", "score", "runner_up", "runner_up_score", "ms"}
    assert decision.ms > 0


def test_a_near_match_keeps_the_question_word() -> None:
    qa = QaTable.load(DEFAULT_QA, all_skills().names)
    assert qa.match(normalize("How are you?")) is None  # one letter from "who are you"
    assert qa.match(normalize("where you live")) is not None  # a word left out is fine
    # fayd describing itself is written, never the model's ("two for women's clothes")
    for said in ("Tell me a bit about yourself, Fay.", "介绍一下你自己吧"):
        found = qa.match(normalize(said))
        assert found is not None and found[0].answer.startswith(("I'm Fay", "我是Fay")), said


@pytest.mark.models
@pytest.mark.parametrize(
    "said", ["Did I take my medicine already?", "did I lock the back door", "我今天吃药了吗"]
)
def test_what_the_person_did_is_asked_of_memory_never_the_model(router: Router, said: str) -> None:
    # Medicine: the check-ins' records first, then memory (fayd.agent.reminders.skill).
    medicine = "medicine" in said or "药" in said
    expected = "medication.taken" if medicine else "memory.recall"
    assert router.route(said, NOW).intent == expected


def test_sentences_are_joined_as_their_language_writes() -> None:
    from fayd.agent.language.text import join_sentences

    assert join_sentences(["你好！", "今天过得怎么样？"]) == "你好！今天过得怎么样？"
    assert join_sentences(["Hello!", "How are you?"]) == "Hello! How are you?"
    assert join_sentences(["Hello.", "", "Bye."]) == "Hello. Bye."
    assert join_sentences(["Well…", "I think so."]) == "Well… I think so."
    assert join_sentences(["好……", "我们走吧。"]) == "好……我们走吧。"
    # A reply stopped after a streamed first clause still ends as a sentence.
    assert join_sentences(["The crossword is a fun word game,"]) == (
        "The crossword is a fun word game."
    )
    assert join_sentences(["好啊，", "我们走吧，"]) == "好啊，我们走吧。"


@pytest.mark.parametrize(
    ("said", "lang"),
    [
        ("3点提醒我吃药", "zh"),
        ("明天8:30提醒我去医院", "zh"),
        ("remind me to ring 小红 at 3", "en"),  # a name in characters: still English
        ("what's 你好 in English?", "en"),
        ("what time is it", "en"),
    ],
)
def test_one_rule_says_which_language_a_sentence_is_in(said: str, lang: str) -> None:
    assert language(said) == lang


def test_an_english_request_naming_someone_in_characters_is_understood(router: Router) -> None:
    decision = router.route("remind me to ring 小红 at 3", NOW)
    assert (decision.intent, decision.lang) == ("reminder.set", "en")
    assert decision.slots["what"] == "ring 小红" and decision.slots["when"].at.hour == 15
