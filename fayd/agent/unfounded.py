"""The check after the model (issue 21): a chit-chat reply that states a number, a dose, a
reading, a date, a time or a proper name that is not in what the model was given — the
person's question, the memory context and the history — or that tells the person what they
should do, or speaks of a life of its own ("my husband"), is not said ("The recommended daily
dose of 20mg…", "a puppy named Luna", "It was a bit high.", "I think you should take the rest
of the room!"). Regexes over the reply, no model call.

``ReplyGuard`` (fayd/agent/guard.py) asks :func:`unfounded` of each piece before it is said;
``Chat`` gives it the grounds. What is flagged is said only when its words are in the
grounds: the person may say "my daughter Anna" and hear "Anna" back."""

from __future__ import annotations

import re
from functools import lru_cache

from fayd.agent.language.phrases import MEDICINE, MONTHS, WEEKDAYS

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUE = {w: i for i, w in enumerate(_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_NUMBER_WORD = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(_TENS)})(?:[\s-](?P<unit>{'|'.join(_ONES[1:10])}))?"
    rf"|(?P<small>{'|'.join(_ONES)}))(?:[\s-](?P<hundred>hundred|thousand))?\b",
    re.I,
)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")
#: What makes "one" a quantity ("one tablet", "one milligram"): else it is "no one", "one
#: day", "the one" — talk, not a fact.
_UNITS = (
    r"(?:mg|milligrams?|mcg|micrograms?|ml|millilit(?:re|er)s?|grams?|g|kilos?|kg|pounds?|lbs?|"
    r"stone|tablets?|pills?|capsules?|units?|doses?|puffs?|drops?|spoons?|teaspoons?|percent|"
    r"per ?cent|%|degrees?|beats|bpm|o'clock|am|pm)"
)
_ONE_QUANTITY = re.compile(rf"\bone\s+{_UNITS}\b", re.I)
#: A dose with no number ("half a tablet", "a double dose", "another pill").
_DOSE = re.compile(
    r"\b(?:half|quarter|double|another|extra|second|two)\s+(?:a\s+|an\s+)?"
    r"(?:tablets?|pills?|capsules?|doses?|puffs?)\b|\b(?:double|higher|lower|extra|recommended|"
    r"daily|usual|normal) dose\b",
    re.I,
)
#: A reading judged ("It was a bit high.", "your blood pressure is fine"): its subject is
#: the reading, or "it"/"that" when the question spoke of one.
_READING_WORD = (
    r"(?:blood pressure|bp|pressure|oxygen(?: level)?|sats|sugars?|glucose|pulse|heart ?rate|"
    r"temperature|weight|readings?|numbers?|levels?)"
)
_READING = re.compile(rf"\b{_READING_WORD}\b|血压|血氧|血糖|体重|体温|心率|脉搏", re.I)
_LEVEL = re.compile(
    rf"\b(?:it|that|this|they|yours|(?:your |the |my )?(?:\w+ )?{_READING_WORD})\s*"
    r"(?:was|is|'s|were|are|looks?|looked|seems?|seemed|came out|reads?|read|sounds?)\s+"
    r"(?:\w+\s+){0,3}?(?:high|low|normal|fine|good|ok|okay|perfect|healthy|raised|elevated|up|"
    r"down|better|worse|great|excellent|stable|steady|within|above|below|spot on)\b"
    r"(?! to (?:hear|know))"
    r"|(?:偏高|偏低|正常|很好|不错|有点高|有点低|高了|低了)",
    re.I,
)
#: The model telling the person what to do ("I think you should take the rest of the room",
#: "you need to stop them"): never its place, whatever the words; kindness is let through.
_ADVICE = re.compile(
    r"\b(?:you|u)\s+(?:should|must|need to|ought to|have to|'d better|had better|might want to)"
    r"\s+(?!(?:take (?:it easy|care|a (?:rest|seat|break|moment|breather))|rest|be proud|be "
    r"pleased|be glad|feel proud)\b)\w+"
    r"|\b(?:take|swallow|have)\s+(?:two|three|another|an extra|extra|double|half)\s+"
    r"(?:tablets?|pills?|capsules?|doses?)\b"
    r"|你(?:应该|必须|得)(?:吃|服|停|加|减)|建议你",
    re.I,
)
#: The model speaking of a life it has not got ("My husband's name Harold was a silly joke"):
#: fayd is a box on a shelf, with no family, pets or home of its own.
_OWN_LIFE = re.compile(
    r"\bmy (?:late )?(?:husband|wife|son|daughter|children|kids|grand\w+|mum|mom|mother|dad|"
    r"father|brother|sister|family|cat|dog|garden|house|flat|neighbours?|doctor)\b",
    re.I,
)
#: Medicine brought up by the model ("You are too late, I have already taken a pill today"):
#: small talk never talks of it unless the person did.
_MEDICINE = re.compile(
    rf"\b(?:{MEDICINE}|doses?|prescriptions?|inhaler|painkillers?|paracetamol|aspirin|"
    r"ibuprofen)\b|药",
    re.I,
)
#: A time of day ("12:07pm", "at 3 o'clock", "8am"): said only as the grounds say it (each
#: of its numbers may be there for other reasons: "7 December", "12 tablets").
_CLOCK_TIME = re.compile(
    r"\b\d{1,2}[:.]\d{2}\s*(?:[ap]\.?m\.?)?|\b\d{1,2}\s*(?:[ap]\.?m\b\.?|o'clock\b)", re.I
)
_CALENDAR = [m.title() for m in MONTHS if m != "may"] + [d.title() for d in WEEKDAYS]
_DATE = re.compile(
    rf"\b(?:{'|'.join(_CALENDAR)})\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|\bMay\s+\d|\d{1,2}\s+May\b"
    r"|\d+\s*(?:月|号|日)|星期[一二三四五六日天]|(?:周|礼拜)[一二三四五六日天]"
)
#: Chinese quantities: a numeral before a unit ("两片", "二十毫克"); "一点", "一下" are talk.
_ZH_NUMERAL = "一二两三四五六七八九十百千"
_ZH_QUANTITY = re.compile(
    rf"([{_ZH_NUMERAL}]+)(?:片|粒|颗|毫克|克|公斤|斤|度|岁|次|个月|年|月|号|点钟|毫升|单位)"
)
#: Capitalised words that name no one ("I'm Fay, a small companion …", "Christmas").
_COMMON_CAPITALS = frozenset(
    "i i'm i'll i've i'd oh ok okay mr mrs ms dr miss sir madam christmas easter english "
    "british god lord tv bbc".split()
)
_NAME = re.compile(r"^[A-Z][a-z]+(?:'s)?$")
#: A sentence that opens by calling someone ("Mabel! Your smile…", "Mabel, how lovely"):
#: a capitalised word then "!" or ",", unless it is one of the words replies open with.
_VOCATIVE = re.compile(r"(?:^|[.!?…]\s+)([A-Z][a-z]+)[!,]")
_OPENERS = frozenset(
    "hello hi hey hiya morning evening afternoon yes no well oh ah aw ooh hmm sure right "
    "great lovely wonderful splendid brilliant excellent perfect good nice fine okay alright "
    "absolutely certainly indeed sorry thanks thank goodness gosh wow dear darling love "
    "now so anyway actually honestly really aha yay cheers bye goodbye goodnight welcome "
    "congratulations haha gracious mmm hush there look listen please".split()
)
_NAMED = re.compile(r"\b(?:named|called)\s+([A-Z][a-z]+)")
_SENTENCE_END = re.compile(r"[.!?…:;\"“”]$")
_EDGE = re.compile(r"^[\"'“‘(\[]+|[\"'”’)\],.!?;:…]+$")


def _word_number(m: re.Match[str]) -> float:
    if m["small"]:
        value = _WORD_VALUE[m["small"].lower()]
    else:
        unit = _WORD_VALUE[m["unit"].lower()] if m["unit"] else 0
        value = _WORD_VALUE[m["tens"].lower()] + unit
    if m["hundred"]:
        value *= 100 if m["hundred"].lower() == "hundred" else 1000
    return float(value)


def _zh_number(text: str) -> float | None:
    """Numerals up to 99: 两 → 2, 二十 → 20, 十五 → 15, 三十六 → 36."""
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if "百" in text or "千" in text:
        return None
    if "十" in text:
        tens, _, ones = text.partition("十")
        ten = digits.get(tens, 1) if tens else 1
        return float(ten * 10 + (digits.get(ones, 0) if ones else 0))
    return float(digits[text]) if text in digits else None


def numbers(text: str, quantities_only: bool = False) -> set[float]:
    """The numbers ``text`` states, in digits or words ("twenty milligrams" → 20); with
    ``quantities_only``, "one" only as a quantity ("one tablet", not "no one")."""
    found = {float(d.replace(",", "")) for d in _DIGITS.findall(text)}
    for m in _NUMBER_WORD.finditer(text):
        if m["small"] and m["small"].lower() == "one" and not m["hundred"]:
            if quantities_only and not _ONE_QUANTITY.match(text, m.start()):
                continue
        if m["small"] and m["small"].lower() == "zero" and quantities_only:
            continue
        found.add(_word_number(m))
    for m in _ZH_QUANTITY.finditer(text):
        if (value := _zh_number(m[1])) is not None and (value != 1 or not quantities_only):
            found.add(value)
    return found


@lru_cache(maxsize=64)
def _grounds(grounds: str) -> tuple[frozenset[float], str]:
    """What the grounds state: their numbers, and their words in lower case."""
    return frozenset(numbers(grounds)), grounds.lower()


def _said_in(word: str, lower_grounds: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word.lower())}(?![\w])", lower_grounds) is not None


def names(piece: str) -> list[str]:
    """Proper names the piece states: a capitalised word inside a sentence ("my daughter
    Anna"), any word after "named"/"called", or a sentence opening by calling someone
    ("Mabel! …")."""
    out = [m[1] for m in _NAMED.finditer(piece)]
    out += [m[1] for m in _VOCATIVE.finditer(piece) if m[1].lower() not in _OPENERS]
    # "Margaret-Cuff": each capitalised part of a hyphened word is a name of its own.
    tokens = re.sub(r"(?<=[a-z])-(?=[A-Z])", " ", piece).split()
    for i, token in enumerate(tokens):
        word = _EDGE.sub("", token)
        if i == 0 or _SENTENCE_END.search(tokens[i - 1]) or not _NAME.match(word):
            continue
        word = word.removesuffix("'s")
        if word.lower() in _COMMON_CAPITALS or word.lower() in MONTHS + WEEKDAYS:
            continue
        out.append(word)
    return out


def unfounded(piece: str, question: str, grounds: str = "", allowed: tuple[str, ...] = ()) -> str:
    """Why ``piece`` may not be said ("number 20", "dose", "advice", "reading", "date
    Tuesday", "name Luna"), or "" when all it states is in ``question`` + ``grounds`` (the memory
    context and the history). ``allowed``: names always fine (the person's, fayd's)."""
    known, lower = _grounds(f"{question}\n{grounds}")
    for clock in _CLOCK_TIME.finditer(piece):
        hour_minute = re.match(r"\d{1,2}(?:[:.]\d{2})?", clock[0])
        said = rf"(?<![\d:.]){re.escape(hour_minute[0])}(?![\d])" if hour_minute else ""
        if said and not re.search(said, lower):
            return f"time {clock[0]}"
    for value in numbers(piece, quantities_only=True):
        if value not in known:
            return f"number {value:g}"
    if (dose := _DOSE.search(piece)) and not _said_in(dose[0], lower):
        return "dose"
    if _ADVICE.search(piece):
        return "advice"
    if (medicine := _MEDICINE.search(piece)) and not _MEDICINE.search(question):
        return f"medicine {medicine[0]}"
    if (life := _OWN_LIFE.search(piece)) and not _said_in(life[0], lower):
        return "a life of its own"  # "my garden" said back from the question is an echo
    level = _LEVEL.search(piece)
    if level and (_READING.search(piece) or _READING.search(question)):
        if not _READING.search(grounds) or not _said_in(level[0].split()[-1], lower):
            return "reading"
    for date in _DATE.finditer(piece):
        if not _said_in(date[0], lower):
            return f"date {date[0]}"
    allowed_lower = {a.lower() for a in allowed if a}
    for name in names(piece):
        if name.lower() not in allowed_lower and not _said_in(name, lower):
            return f"name {name}"
    return ""


#: Said instead when the model's every attempt stated something unfounded.
NOT_SURE = {"en": "I'm not sure about that.", "zh": "这个我不太确定。"}


def not_sure(question: str) -> str | None:
    """What is said when the model's reply stated what it was not given: "I'm not sure
    about that" to a question; None to something told (the usual "Go on, I'm listening":
    "My Harold used to do the crossword" is no question to be unsure of)."""
    if not _ASKED.search(question.strip().lower()):
        return None
    return NOT_SURE["zh" if re.search(r"[\u3400-\u9fff]", question) else "en"]


_ASKED = re.compile(
    r"[?？]$|^(?:(?:oh|so|and|but|well|um|er|fay|love|dear|now)[, ]+)*"
    r"(?:what|who|where|when|why|how|which|is|are|was|were|do|does|did|can|could|will|would|"
    r"should|have|has)\b|吗|呢|什么|谁|哪|怎么|多少|几"
)
