"""Action rules and Sentiment (seed 000): the shipped CSV, keyword matching with real Chinese
and English reply sentences, clear errors for a bad rules file, and the keyword Sentiment."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fayd.agent import expression
from fayd.agent.expression import (
    DEFAULT_RULES,
    HEADER,
    find_keywords,
    load_rules,
    match_action,
    sentiment,
)
from fayd.errors import ConfigError
from fayd.protocol import Action, Human, decode, encode

# --- the shipped table -------------------------------------------------------------------


def test_shipped_table_has_the_seed_header_and_at_least_20_rules() -> None:
    first_line = DEFAULT_RULES.read_text(encoding="utf-8").splitlines()[0]
    assert first_line == "code,behavior,affect,intensity,priority,sentimentHint,keywords"
    assert tuple(first_line.split(",")) == HEADER
    rules = load_rules()
    assert len(rules) >= 20
    codes = {r.action.code for r in rules.rules}
    for wanted in (
        "greeting.hello", "farewell.goodbye", "social.thanks", "guidance.invite",
        "dialogue.explain", "dialogue.think", "dialogue.agree", "dialogue.disagree",
        "social.comfort", "guidance.warn", "emotion.celebrate", "social.apology",
        "social.encourage", "emotion.surprise", "dialogue.question", "guidance.remind",
        "dialogue.listen", "emotion.laugh", "emotion.sad", "emotion.excited",
    ):  # fmt: skip
        assert wanted in codes
    for rule in rules.rules:  # every rule has English and Chinese keywords
        assert any(k.isascii() for k in rule.keywords), rule.action.code
        assert any(not k.isascii() for k in rule.keywords), rule.action.code


def test_shipped_table_is_package_data() -> None:
    # hatchling ships every file inside fayd/; the loader finds it next to the module.
    assert DEFAULT_RULES.parent == Path(expression.__file__).parent


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("这边请，跟我来。", "guidance.invite"),
        ("您好！很高兴见到您。", "greeting.hello"),
        ("欢迎回来，今天过得怎么样？", "greeting.welcome"),
        ("谢谢你陪我聊天。", "social.thanks"),
        ("小心，地上很滑，慢点走。", "guidance.warn"),
        ("不好意思，我没听清楚。", "social.apology"),
        ("别担心，会好起来的。", "social.comfort"),
        ("太好了，你的血压今天很正常！", "emotion.celebrate"),
        ("哈哈，这个笑话真好笑。", "emotion.laugh"),
        ("好的，我明天提醒你按时吃药。", "guidance.remind"),
        ("让我想想，这个问题有点难。", "dialogue.think"),
        ("再见，晚上早点休息。", "farewell.goodbye"),
        ("Hello there, nice to see you.", "greeting.hello"),
        ("Please come in and have a seat.", "guidance.invite"),
        ("Careful, the stove is still hot.", "guidance.warn"),
        ("Congratulations, you did it!", "emotion.celebrate"),
        ("I'm so sorry to hear that your cat is ill.", "emotion.sad"),
        ("Don’t worry, it will be fine.", "social.comfort"),
        ("Let me think about that for a moment.", "dialogue.think"),
        ("Goodbye, and take care!", "farewell.goodbye"),
        ("Keep going, you can do it!", "social.encourage"),
        ("In other words, the pills go after dinner.", "dialogue.explain"),
    ],
)
def test_real_sentences_get_the_expected_action(text: str, code: str) -> None:
    action = match_action(text)
    assert action is not None and action.code == code, (text, action)


def test_sentences_without_a_keyword_get_no_action() -> None:
    assert match_action("今天的天气预报说明天多云。") is None
    assert match_action("The train leaves at seven thirty.") is None
    assert match_action("") is None


def test_the_action_is_the_seed_example_and_rides_on_a_human_frame() -> None:
    action = match_action("这边请")
    assert action == Action("guidance.invite", "invite", "warm", 0.74, 82)
    frame = Human(key="audio", text="这边请", sentiment=sentiment("这边请"), action=action)
    assert decode("human", encode(frame)) == frame


def test_english_keywords_match_whole_words_only() -> None:
    # "no" must not fire on "know" or "now", nor "hi" on "this" / "history".
    assert match_action("I know this history well, now.") is None
    assert match_action("No, I don't think so.").code == "dialogue.disagree"  # type: ignore[union-attr]
    assert find_keywords("Say HI!", ["hi"]) == [(4, "hi")]


def test_overlaps_take_the_longest_keyword() -> None:
    # 不好意思 holds 不好; "nice to see you" (hello) holds "see you" (goodbye): longest wins.
    assert find_keywords("不好意思", ["不好", "不好意思"]) == [(0, "不好意思")]
    assert find_keywords("欢迎光临", ["欢迎", "欢迎光临"]) == [(0, "欢迎光临")]
    assert match_action("Nice to see you again.").code == "greeting.hello"  # type: ignore[union-attr]
    assert match_action("See you tomorrow.").code == "farewell.goodbye"  # type: ignore[union-attr]


def test_highest_priority_wins_then_more_keywords_then_first_found(tmp_path: Path) -> None:
    path = tmp_path / "rules.csv"
    path.write_text(
        ",".join(HEADER) + "\n"
        "a.low,nod,smile,0.5,10,,alpha|beta\n"
        "b.high,wave,warm,0.5,90,,gamma\n"
        "c.tie1,nod,smile,0.5,50,,delta\n"
        "d.tie2,nod,smile,0.5,50,,epsilon|zeta\n"
        "e.tie3,nod,smile,0.5,50,,eta\n",
        encoding="utf-8",
    )
    rules = load_rules(path)
    assert rules.match("alpha beta gamma").code == "b.high"  # type: ignore[union-attr]
    assert rules.match("delta epsilon zeta").code == "d.tie2"  # type: ignore[union-attr]
    assert rules.match("eta then delta").code == "e.tie3"  # type: ignore[union-attr]
    assert rules.match("delta then eta").code == "c.tie1"  # type: ignore[union-attr]
    assert match_action("delta", rules).code == "c.tie1"  # type: ignore[union-attr]


# --- the rules file: edits without code, and clear errors ----------------------------------


def write_rules(tmp_path: Path, *rows: str, header: str = ",".join(HEADER)) -> Path:
    path = tmp_path / "my_rules.csv"
    path.write_text("\n".join((header, *rows)) + "\n", encoding="utf-8")
    return path


def test_a_users_own_file_with_excel_bom_and_extra_column(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    with path.open("w", encoding="utf-8-sig", newline="") as f:  # Excel's "CSV UTF-8"
        out = csv.writer(f)
        out.writerow([*HEADER, "note"])
        out.writerow(["robot.dance", "dance", "excited", "0.9", "95", "1.5", "跳舞|dance", "x"])
        out.writerow([])
    rules = load_rules(path)
    assert rules.match("我们来跳舞吧").code == "robot.dance"  # type: ignore[union-attr]
    assert rules.rules[0].sentiment_hint == 1.5
    assert rules.rules[0].line == 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("a,nod,smile,lots,50,0,hi", r"my_rules\.csv:3: intensity must be a number, got 'lots'"),
        ("a,nod,smile,1.5,50,0,hi", r"my_rules\.csv:3: intensity must be between 0 and 1"),
        ("a,nod,smile,0.5,high,0,hi", r"my_rules\.csv:3: priority must be a number"),
        ("a,nod,smile,0.5,50,9,hi", r"my_rules\.csv:3: sentimentHint must be between -2 and 2"),
        ("a,nod,smile,0.5,50,0,", r"my_rules\.csv:3: keywords is empty"),
        ("a,nod,smile,0.5,50,0,|", r"my_rules\.csv:3: keywords has no keyword"),
        (",nod,smile,0.5,50,0,hi", r"my_rules\.csv:3: code is empty"),
        ("a,nod,smile,0.5,50,0,hi,ho", r"my_rules\.csv:3: more cells than columns"),
        ("ok.one,nod,smile,0.5,50,0,yo", r"my_rules\.csv:3: code 'ok.one' already on line 2"),
    ],
)
def test_a_bad_row_names_the_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    path = write_rules(tmp_path, "ok.one,nod,smile,0.5,50,0.2,fine", row)
    with pytest.raises(ConfigError, match=message):
        load_rules(path)


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"my_rules\.csv:1: header lacks sentimentHint"):
        load_rules(write_rules(tmp_path, header="code,behavior,affect,intensity,priority,keywords"))
    with pytest.raises(ConfigError, match="no action rules"):
        load_rules(write_rules(tmp_path))
    with pytest.raises(ConfigError, match="cannot read the action rules"):
        load_rules(tmp_path / "missing.csv")
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes((",".join(HEADER) + "\na,nod,smile,0.5,50,0,caf\xe9\n").encode("latin-1"))
    with pytest.raises(ConfigError, match="must be UTF-8"):
        load_rules(latin1)


# --- Sentiment ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天天气不错。", 1.0),  # positive: +1
        ("我今天很开心。", 2.0),  # very positive: +2
        ("我有点担心你的身体。", -1.0),  # negative: -1
        ("这种日子太痛苦了。", -2.0),  # very negative: -2
        ("这个消息太好了！", 2.0),  # 太好了 counts once as +2 (not also 好), ! +0.3, clamped
        ("你好？", 1.3),  # 好 +1, ？ +0.3
        ("好吧……", 0.7),  # 好 +1, … -0.3
        ("嗯。。", -0.3),  # 。。 -0.3
        ("我不开心。", -1.0),  # the negated form, not 开心 +2
        ("好像要下雨了。", 0.0),  # 好像 "seems" is neutral, not 好
        ("That is wonderful news!", 2.0),
        ("Thanks, that sounds good.", 2.0),  # two distinct +1 keywords
        ("I am not happy about this.", -1.0),  # not happy, not happy (+2)
        ("This is terrible and awful.", -2.0),  # -4 clamped
        ("Good good good", 1.0),  # a keyword counts once
        ("I know the way", 0.0),  # no "no" in "know"
        ("The bus leaves at nine.", 0.0),
        ("", 0.0),
    ],
)
def test_sentiment_of_real_sentences(text: str, expected: float) -> None:
    assert sentiment(text) == pytest.approx(expected)


def test_sentiment_punctuation_counts_once_each_and_both_widths() -> None:
    assert sentiment("真的吗？？？") == 0.3
    assert sentiment("really?!~") == 0.3
    assert sentiment("Hmm...") == -0.3
    assert sentiment("嗯…") == -0.3
    assert sentiment("What?... ") == 0.0


def test_sentiment_is_always_within_bounds() -> None:
    pile = "开心 太好了 完美 wonderful amazing!!! " * 20
    assert sentiment(pile) == 2.0
    assert sentiment("痛苦 绝望 崩溃 terrible awful... " * 20) == -2.0


def test_sentiment_ignores_the_rules_sentiment_hint() -> None:
    # The invite rule says sentimentHint 0.7, but the sentence has no sentiment keyword.
    rule = next(r for r in load_rules().rules if r.action.code == "guidance.invite")
    assert rule.sentiment_hint == 0.7
    assert sentiment("这边请") == 0.0


def test_sentiment_lists_are_disjoint() -> None:
    lists = [
        expression.VERY_POSITIVE,
        expression.POSITIVE,
        expression.NEGATIVE,
        expression.VERY_NEGATIVE,
        expression.NEUTRAL,
    ]
    seen: set[str] = set()
    for words in lists:
        assert not seen & set(words), seen & set(words)
        seen |= set(words)
