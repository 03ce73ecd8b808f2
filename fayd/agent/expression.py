"""Action and Sentiment of a reply sentence (seed 000, "Fay侧标准动作改造说明").

fayd outputs semantics only: an :class:`~fayd.protocol.frames.Action` (code, behavior,
affect, intensity, priority) chosen by keyword rules from an editable CSV, and a Sentiment
in [-2, +2] from weighted keyword lists. Each device maps them to its own motions.

Keywords are matched the same way for both (see :func:`find_keywords`): text and keywords
are NFKC-normalised and case-folded (full-width ``！？～`` become ``!?~``, ``…`` becomes
``...``); keywords with Latin letters or digits match whole words only (``no`` does not
match "know", ``hi`` not "this"), Chinese keywords match anywhere; and the text is read left
to right taking the longest keyword at each place, so the text a keyword covers cannot
match a shorter one too (``不好意思`` is an apology, not ``不好`` "bad"; ``not good`` is
negative, not ``good``).
"""

from __future__ import annotations

import csv
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fayd.errors import ConfigError
from fayd.protocol.frames import Action

#: The table shipped with fayd; ``agent.action_rules`` in the config can name another.
DEFAULT_RULES = Path(__file__).with_name("action_rules.csv")
HEADER = ("code", "behavior", "affect", "intensity", "priority", "sentimentHint", "keywords")
_WORDLIKE = re.compile(r"[0-9a-z]")


def normalize(text: str) -> str:
    # NFKC folds full-width forms; models often write a curly apostrophe (don’t).
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


class KeywordMatcher:
    """Leftmost-longest, non-overlapping keyword search (one compiled regex)."""

    def __init__(self, keywords: Iterable[str]) -> None:
        words = sorted({normalize(k).strip() for k in keywords} - {""}, key=len, reverse=True)
        self.keywords = tuple(words)
        # Alternatives longest first, so at each place the regex takes the longest keyword.
        parts = []
        for word in words:
            part = re.escape(word)
            if _WORDLIKE.match(word[0]):
                part = r"(?<![0-9a-z])" + part
            if _WORDLIKE.match(word[-1]):
                part += r"(?![0-9a-z])"
            parts.append(part)
        self._regex = re.compile("|".join(parts)) if parts else None

    def find(self, text: str) -> list[tuple[int, str]]:
        """(position, keyword) of every keyword found in ``text``, in order."""
        if self._regex is None:
            return []
        return [(m.start(), m.group()) for m in self._regex.finditer(normalize(text))]


def find_keywords(text: str, keywords: Iterable[str]) -> list[tuple[int, str]]:
    return KeywordMatcher(keywords).find(text)


# --- Action rules ------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionRule:
    action: Action
    #: The rule's own sentiment label (seed 000); not used by :func:`sentiment`.
    sentiment_hint: float | None
    keywords: tuple[str, ...]
    line: int


class ActionRules:
    """The rules of one ``action_rules.csv`` and the matcher over all their keywords."""

    def __init__(self, rules: Sequence[ActionRule], path: Path | None = None) -> None:
        self.rules = tuple(rules)
        self.path = path
        self._by_keyword: dict[str, list[int]] = {}
        for index, rule in enumerate(self.rules):
            for word in rule.keywords:
                self._by_keyword.setdefault(normalize(word), []).append(index)
        self._matcher = KeywordMatcher(self._by_keyword)

    def match(self, text: str) -> Action | None:
        """The Action of the best rule whose keywords occur in ``text``, or None.

        Overlaps: keywords are found leftmost-longest without overlap (module docstring), so
        "欢迎光临" counts for the rule holding it, not also for a rule holding "欢迎".
        The winner is the matched rule with the highest ``priority``; ties go to the rule
        with more distinct keywords found, then to the one found first in the text, then to
        the one earlier in the file. A keyword listed by several rules counts for each.
        """
        best: tuple[int, int, int, int] | None = None
        winner: Action | None = None
        found: dict[int, tuple[set[str], int]] = {}
        for pos, word in self._matcher.find(text):
            for index in self._by_keyword[word]:
                words, first = found.get(index, (set(), pos))
                words.add(word)
                found[index] = (words, first)
        for index, (words, first) in found.items():
            key = (self.rules[index].action.priority, len(words), -first, -index)
            if best is None or key > best:
                best, winner = key, self.rules[index].action
        return winner

    def __len__(self) -> int:
        return len(self.rules)


def _number(value: str, name: str, kind: type, where: str) -> float | int:
    try:
        return kind(value.strip())
    except ValueError:
        raise ConfigError(f"{where}: {name} must be a number, got {value!r}") from None


def _parse_row(row: dict[str, str], where: str) -> ActionRule:
    values = {k: (row.get(k) or "").strip() for k in HEADER}
    for name in ("code", "behavior", "affect", "intensity", "priority", "keywords"):
        if not values[name]:
            raise ConfigError(f"{where}: {name} is empty")
    intensity = float(_number(values["intensity"], "intensity", float, where))
    if not 0.0 <= intensity <= 1.0:
        raise ConfigError(f"{where}: intensity must be between 0 and 1, got {intensity}")
    priority = int(_number(values["priority"], "priority", int, where))
    if not 0 <= priority <= 1000:
        raise ConfigError(f"{where}: priority must be between 0 and 1000, got {priority}")
    hint = None
    if values["sentimentHint"]:
        hint = float(_number(values["sentimentHint"], "sentimentHint", float, where))
        if not -2.0 <= hint <= 2.0:
            raise ConfigError(f"{where}: sentimentHint must be between -2 and 2, got {hint}")
    keywords = tuple(k.strip() for k in values["keywords"].split("|") if k.strip())
    if not keywords:
        raise ConfigError(f"{where}: keywords has no keyword (separate them with |)")
    action = Action(
        code=values["code"],
        behavior=values["behavior"],
        affect=values["affect"],
        intensity=intensity,
        priority=priority,
    )
    return ActionRule(action, hint, keywords, 0)


def load_rules(path: str | Path | None = None) -> ActionRules:
    """Read an ``action_rules.csv`` (UTF-8, Excel's BOM allowed); the shipped one by default.

    Raises ConfigError naming the file and line of the first bad row. Columns beyond the
    seven of :data:`HEADER` are ignored; blank rows are skipped.
    """
    path = Path(path) if path else DEFAULT_RULES
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the action rules: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: action rules must be UTF-8 ({exc.reason})") from exc
    reader = csv.DictReader(text.splitlines())
    missing = [h for h in HEADER if h not in (reader.fieldnames or [])]
    if missing:
        raise ConfigError(
            f"{path}:1: header lacks {', '.join(missing)}; it must be {','.join(HEADER)}"
        )
    rules: list[ActionRule] = []
    codes: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any((v or "").strip() for k, v in row.items() if k is not None):
            continue
        where = f"{path}:{line}"
        if None in row:  # more cells than header columns: likely a stray comma
            raise ConfigError(f"{where}: more cells than columns (a comma inside keywords?)")
        rule = _parse_row(row, where)
        if rule.action.code in codes:
            raise ConfigError(
                f"{where}: code {rule.action.code!r} already on line {codes[rule.action.code]}"
            )
        codes[rule.action.code] = line
        rules.append(ActionRule(rule.action, rule.sentiment_hint, rule.keywords, line))
    if not rules:
        raise ConfigError(f"{path}: no action rules")
    return ActionRules(rules, path)


@functools.cache
def default_rules() -> ActionRules:
    return load_rules(DEFAULT_RULES)


def match_action(text: str, rules: ActionRules | None = None) -> Action | None:
    """The Action for one reply sentence (the shipped rules unless ``rules`` is given)."""
    return (rules or default_rules()).match(text)


# --- Sentiment ---------------------------------------------------------------------------

# Seed 000's keyword fallback: four weighted lists. Fay's own lists hold single characters
# such as 不 and 是 that fire on nearly every Chinese sentence; these avoid them, and hold
# negated forms (不开心, not happy) so the longest match turns a positive word negative.
VERY_POSITIVE = (
    "开心", "太好了", "太棒了", "完美", "激动", "兴奋", "快乐", "幸福", "恭喜", "祝贺",
    "精彩", "了不起", "喜欢", "爱你", "高兴", "棒极了", "万岁", "哈哈",
    "wonderful", "fantastic", "amazing", "excellent", "perfect", "awesome", "delighted",
    "thrilled", "congratulations", "love", "happy", "excited", "brilliant",
)  # fmt: skip
POSITIVE = (
    "好", "可以", "没问题", "欢迎", "谢谢", "感谢", "不错", "棒", "当然", "同意", "放心",
    "顺利", "舒服", "安心", "健康", "加油", "真好", "美好", "好的", "愿意", "别担心",
    "会好起来", "别难过", "没关系",
    "good", "nice", "fine", "okay", "ok", "thanks", "thank you", "welcome", "glad", "sure",
    "great", "yes", "pleased", "well done", "enjoy", "cool", "safe", "better", "don't worry",
    "no problem", "not bad",
)  # fmt: skip
NEGATIVE = (
    "不好", "失望", "烦", "担心", "难受", "累", "不舒服", "生气", "糟糕", "可惜", "遗憾",
    "麻烦", "讨厌", "害怕", "紧张", "不开心", "不高兴", "不喜欢", "不行", "错误", "疼",
    "孤单", "无聊", "难过", "抱歉", "对不起", "没有好",
    "bad", "sad", "sorry", "worried", "worry", "upset", "tired", "angry", "disappointed",
    "annoying", "afraid", "scared", "lonely", "problem", "unfortunately", "wrong", "pain",
    "hurt", "sick", "not good", "not happy", "not fine", "not okay", "not great",
)  # fmt: skip
VERY_NEGATIVE = (
    "痛苦", "绝望", "崩溃", "气死", "伤心", "悲伤", "恨", "糟透了", "可怕", "恐怖", "救命",
    "太难过", "受不了", "烦死了",
    "terrible", "awful", "horrible", "hate", "miserable", "devastated", "desperate",
    "hopeless", "disaster", "furious", "heartbroken", "unbearable", "help me",
)  # fmt: skip
#: Words that contain a listed keyword but carry no feeling; matching them (longest first)
#: keeps 好像 "seems" from counting as 好 "good".
NEUTRAL = (
    "好像", "好几", "只好", "好久", "刚好", "正好", "最好", "好多", "还好", "不好意思", "ok google",
)  # fmt: skip

WEIGHTS: dict[str, float] = {
    **{w: 0.0 for w in NEUTRAL},
    **{w: 2.0 for w in VERY_POSITIVE},
    **{w: 1.0 for w in POSITIVE},
    **{w: -1.0 for w in NEGATIVE},
    **{w: -2.0 for w in VERY_NEGATIVE},
}
_SENTIMENT = KeywordMatcher(WEIGHTS)
_WEIGHT = {normalize(w): v for w, v in WEIGHTS.items()}
LIVELY = ("?", "!", "~")  # after NFKC, also ？ ！ ～
TRAILING = ("...", "。。")  # after NFKC, also …


def sentiment(text: str) -> float:
    """Sentiment of ``text`` in [-2, +2], by seed 000's keyword fallback.

    1. Each distinct keyword found (leftmost-longest) adds its list's weight once: very
       positive +2, positive +1, negative -1, very negative -2.
    2. Punctuation: +0.3 if the text has any of ``? ! ~`` (either width); -0.3 if it has
       ``...``, ``…`` or ``。。`` (each adjustment at most once, as in Fay).
    3. Clamp to [-2, +2] (rounded to 2 decimals).

    Independent of an action rule's sentimentHint, as the seed says.
    """
    words = {word for _, word in _SENTIMENT.find(text)}
    score = sum(_WEIGHT[w] for w in words)
    norm = normalize(text)
    if any(p in norm for p in LIVELY):
        score += 0.3
    if any(p in norm for p in TRAILING):
        score -= 0.3
    return round(max(-2.0, min(2.0, score)), 2)
