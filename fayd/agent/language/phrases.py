"""Word lists fayd's patterns share, read once from ``lists.toml``: the sentence templates'
lists and rules (per language, for hassil) and the words of its own regular expressions
(``words``: the people a caregiver looks after, …), so a word is added in one place."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from fayd.agent.language.text import language

LISTS_FILE = Path(__file__).with_name("lists.toml")
LISTS: dict[str, Any] = tomllib.loads(LISTS_FILE.read_text(encoding="utf-8"))


def alternation(words: list[str]) -> str:
    """``a|b|c`` for a regular expression, longest first (妈妈 before 妈), escaped."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


#: The days of the week and the months, lower case, Monday and January first.
WEEKDAYS: tuple[str, ...] = tuple(LISTS["words"]["weekdays"])
MONTHS: tuple[str, ...] = tuple(LISTS["words"]["months"])
#: What people call what they take ("pills", "medication", "insulin"), for a pattern's group:
#: ``rf"\b({MEDICINE})\b"``.
MEDICINE = alternation(LISTS["words"]["medicine"])
#: How people address fayd at either end of a sentence ("thank you, dear").
ADDRESS: frozenset[str] = frozenset(LISTS["words"]["address"])
#: What a caregiver calls the person they look after ("mum") → the words for them.
ELDER: dict[str, list[str]] = LISTS["words"]["elder"]
#: Each of those words → what it means ("mummy" → "mum", 奶奶 → "grandma").
ELDER_CALLED = {word: kin for kin, words in ELDER.items() for word in words}
#: The English and the Chinese words as a regular expression's group.
FAMILY = f"({alternation([w for w in ELDER_CALLED if language(w) == 'en'])})"
FAMILY_ZH = f"({alternation([w for w in ELDER_CALLED if language(w) == 'zh'])})"
#: "say "help" and I'll raise the alarm." per language: how to raise the alarm, ending a reply.
SAY_HELP: dict[str, str] = LISTS["words"]["say_help"]
