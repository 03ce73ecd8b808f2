"""The intents' declarations (fayd/agent/language/intents.toml) are what the router, the
skills and the docs use: every declared skill exists, every cue has its declaration, the
docs' table is made from them; and an intent declared with sentence templates (info.radio)
is found, its slot read and answered honestly, in English and Chinese, without the model."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fayd.agent.features import all_skills
from fayd.agent.language import declared
from fayd.agent.language.declared import DECLARED, SKILL_OF, table
from fayd.agent.understand import cues
from fayd.errors import ConfigError

from .test_honest import Home

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)


def test_every_declared_skill_exists_and_every_cue_is_declared() -> None:
    assert set(SKILL_OF.values()) <= all_skills().names
    assert set(cues.CUES) == set(cues.ORDER)  # a cue with no declaration would never be tried
    assert set(cues.ORDER) == {n for n, d in DECLARED.items() if "cue" in d.found_by}


def test_the_docs_table_of_intents_is_the_declarations() -> None:
    docs = (ROOT / "docs" / "understanding.md").read_text(encoding="utf-8")
    assert table() in docs, "docs/understanding.md: paste fayd.agent.language.declared.table()"


def test_a_declaration_that_contradicts_itself_is_refused() -> None:
    with pytest.raises(ConfigError, match="found_by"):
        declared._declared("x.y", {"found_by": ["guesswork"]})
    with pytest.raises(ConfigError, match="templates"):
        declared._declared("x.y", {"found_by": ["templates"]})


@pytest.mark.parametrize(
    ("said", "station"),
    [
        ("What's on the radio tonight?", None),
        ("Fay, what's on Radio Four this evening?", "Radio 4"),
        ("do you know what's on radio 4 now, love", "Radio 4"),
        ("Is there anything good on Classic FM?", "Classic FM"),
        ("what programme is on the world service", "the World Service"),
        ("What's on Radio 4 this afternoon, love?", "Radio 4"),
        ("is there anything good on the wireless", None),
        ("收音机现在放什么节目？", None),
        ("今晚电台有什么好节目", None),
    ],
)
def test_what_is_on_the_radio_is_found_by_its_templates(router, said: str, station) -> None:
    decision = router.route(said, NOW)
    assert (decision.intent, decision.via) == ("info.radio", "template")
    assert decision.slots.get("station") == station


@pytest.mark.parametrize(
    ("said", "intent"),
    [
        ("turn the radio on", "home.control"),  # a request to switch it, not a question
        ("what's on the telly tonight", "info.offline"),
        ("I heard a lovely song on the radio", "chitchat"),
    ],
)
def test_other_sentences_about_the_radio_are_not_it(router, said: str, intent: str) -> None:
    assert router.route(said, NOW).intent == intent


@pytest.fixture
async def home(tmp_path: Path, router, embedder):
    h = await Home(tmp_path, router, embedder).start()
    yield h
    h.house.close()


async def test_the_radio_is_answered_honestly_never_with_a_made_up_programme(home) -> None:
    said = await home.ask("What's on Radio 4 tonight?")
    assert said.startswith("I can't see what's on Radio 4: I'm not connected to the internet.")
    assert "radio" in (await home.ask("what's on the radio")).lower()
    assert (
        await home.ask("收音机现在放什么节目")
        == "我没有连接互联网，查不到收音机的节目。报纸上的节目表会有。"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_word_replies_tell_people_to_say_raises_the_alarm(lang: str) -> None:
    """Replies end with 'say "help" and I'll raise the alarm' (SAY_HELP, written once): the
    word they name must be one the emergency path hears, said on its own."""
    from fayd.agent.care.emergency import EmergencyDetector
    from fayd.agent.language.phrases import SAY_HELP
    from fayd.agent.language.text import normalize

    word = re.search(r"[\"“](.+?)[\"”]", SAY_HELP[lang]).group(1)
    found = EmergencyDetector(None).detect(normalize(word))
    assert found is not None and found.kind == "help", (word, found)
