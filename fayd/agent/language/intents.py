"""Intents by nearest example: every example phrase of the declarations (``intents.toml``,
fayd.agent.language.declared) and of the user's own file (``agent.intents``) is embedded
once at start with the MiniLM model memory already
loaded; a question goes to the intent of its nearest example when that is close enough and
clearly closer than the best example of any other intent (a margin over the runner-up).

Chinese is compared by its characters instead: the shipped MiniLM's vocabulary is English
(a Chinese sentence is mostly ``[UNK]`` to it, so every one looks alike), so a Chinese
question's nearest example is the one sharing the most character pairs and characters
(TF-IDF-weighted cosine over unigrams and bigrams).

The user's file: one table per intent, a list of phrases per language::

    ["clock.time"]
    en = ["what time is it", "have you got the time"]
    zh = ["现在几点了"]
"""

from __future__ import annotations

import itertools
import math
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fayd.agent.language.declared import DECLARED, KNOWN
from fayd.agent.language.text import language, normalize
from fayd.embedding import EmbedderLike
from fayd.errors import ConfigError

#: The nearest example must be this close (cosine) …
MIN_SCORE = {"en": 0.6, "zh": 0.3}
#: … and this much closer than the best example of another intent.
MIN_MARGIN = {"en": 0.03, "zh": 0.02}


@dataclass(frozen=True)
class Guess:
    intent: str
    score: float
    runner_up: str
    runner_up_score: float
    lang: str = "en"

    @property
    def confident(self) -> bool:
        close = self.score >= MIN_SCORE[self.lang]
        return close and self.score - self.runner_up_score >= MIN_MARGIN[self.lang]


def _grams(text: str) -> Counter[str]:
    """Characters and character pairs of the Chinese (and other) letters in ``text``."""
    chars = [c for c in text if not c.isspace() and c.isalnum()]
    return Counter(chars + [a + b for a, b in itertools.pairwise(chars)])


class CharacterIndex:
    """TF-IDF cosine over characters and character pairs (for Chinese)."""

    def __init__(self, texts: list[str]) -> None:
        self.docs = [_grams(t) for t in texts]
        counts = Counter(g for d in self.docs for g in d)
        n = len(self.docs)
        self.idf = {g: math.log((1 + n) / (1 + c)) + 1 for g, c in counts.items()}
        self.vectors = [self._weigh(d) for d in self.docs]

    def _weigh(self, grams: Counter[str]) -> dict[str, float]:
        weights = {
            g: c * self.idf.get(g, math.log(1 + len(self.docs)) + 1) for g, c in grams.items()
        }
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {g: w / norm for g, w in weights.items()}

    def similarities(self, text: str) -> np.ndarray:
        query = self._weigh(_grams(text))
        return np.array(
            [sum(w * doc.get(g, 0.0) for g, w in query.items()) for doc in self.vectors],
            dtype=np.float32,
        )


def load_examples(paths: list[Path]) -> dict[str, list[str]]:
    """intent → example phrases (normalized): the declarations' and then those of ``paths``
    (files of ``["intent"] en = [...]`` tables)."""
    examples = {
        name: [normalize(p) for lang in ("en", "zh") for p in d.examples.get(lang, [])]
        for name, d in DECLARED.items()
        if d.examples
    }
    for path in paths:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read it: {exc}") from exc
        for intent, table in data.items():
            if intent not in KNOWN:
                raise ConfigError(
                    f"{path}: [{intent}] is not an intent (known: {', '.join(sorted(KNOWN))})"
                )
            if not isinstance(table, dict):
                raise ConfigError(f"{path}: [{intent}] must be a table of phrase lists")
            for lang, phrases in table.items():
                if not isinstance(phrases, list) or not all(
                    isinstance(p, str) and p.strip() for p in phrases
                ):
                    raise ConfigError(f"{path}: {intent}.{lang} must be a list of phrases")
                examples.setdefault(intent, []).extend(normalize(p) for p in phrases)
    return examples


class IntentClassifier:
    def __init__(self, embedder: EmbedderLike, examples: dict[str, list[str]]) -> None:
        self.intents = sorted(examples)
        pairs = [(intent, phrase) for intent, phrases in examples.items() for phrase in phrases]
        english = [(i, p) for i, p in pairs if language(p) == "en"]
        chinese = [(i, p) for i, p in pairs if language(p) == "zh"]
        self._en = self._labels(english)
        self._zh = self._labels(chinese)
        self.vectors = embedder.embed([p for _, p in english])
        self.characters = CharacterIndex([p for _, p in chinese])

    def _labels(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return np.array([self.intents.index(intent) for intent, _ in pairs], dtype=np.int64)

    def guess(self, vector: np.ndarray, text: str = "") -> Guess:
        """The best intent for a question (its embedding; its normalized text, which
        decides for Chinese), and the runner-up."""
        if text and language(text) == "zh" and len(self._zh):
            return self._best(self.characters.similarities(text), self._zh, "zh")
        return self._best(self.vectors @ vector, self._en, "en")

    def _best(self, sims: np.ndarray, labels: np.ndarray, lang: str) -> Guess:
        best = np.full(len(self.intents), -1.0, dtype=np.float32)
        np.maximum.at(best, labels, sims)
        order = np.argsort(-best)
        first, second = int(order[0]), int(order[1])
        return Guess(
            self.intents[first],
            float(best[first]),
            self.intents[second],
            float(best[second]),
            lang,
        )
