"""Is the speaker done? Judged at a short pause from what speech recognition wrote so far
and what the router makes of it (docs/endpointing.md).

- **done**: a finished question or command the router understood with confidence ("What
  time is it?", "Set a timer for 10 minutes.", "I've fallen") — answered at once.
- **more**: words that cannot end a sentence ("Set a timer for-", "I would like to...",
  "Tell me about", "和", "然后"), a filler ("Um", "Well."), a clause that opens with "if"
  and has no second half, a command missing its key part ("Remind me tomorrow morning.")
  — the speaker is given the longest wait.
- **unsure**: the rest (a statement, chit-chat) — the usual wait.

Whisper helps: on audio that stops mid-sentence it tends to write "...", "-" or no full
stop at all, which is the speaker's intonation put into text.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from fayd.agent.clock.times import Ambiguous
from fayd.agent.understand.router import Decision


class Verdict(Enum):
    DONE = "done"
    UNSURE = "unsure"
    MORE = "more"


#: Fillers and conjunctions: a sentence never ends on them, whatever the punctuation.
FILLERS = frozenset(
    "um umm uh uhh er erm hmm mm ah well so and but or because cause like then also plus".split()
)
#: Words a finished sentence rarely ends on, unless it is a question ("Who is it for?").
OPEN_WORDS = frozenset(
    (
        "to for of the a an my your his our their its with about at in into onto from than "
        "if when while whether until unless before after since by as that which whose "
        "i we they he she just very really some any not"
    ).split()
)
#: A clause that opens with one of these needs a second half ("If it gets cold, …").
SUBORDINATE = frozenset("if when whenever because although though unless while once".split())

#: Chinese endings that leave the sentence open (a filler, a conjunction, a preposition, a
#: verb still waiting for its object).
ZH_OPEN_ENDS = (
    "嗯", "呃", "额", "那个", "这个", "然后", "还有", "和", "跟", "与", "或者", "因为", "所以",
    "但是", "可是", "不过", "如果", "要是", "就是", "而且", "把", "给", "从",
    "我想", "我要", "我觉得", "提醒我", "帮我", "告诉我", "比如",
)  # fmt: skip
ZH_SUBORDINATE = ("如果", "要是", "因为", "虽然")

#: Intents whose act needs a part the sentence may not have said yet.
NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "reminder.set": (("what",), ("when", "recurrence")),
    "timer.set": (("duration_s",),),
    "device.sleep": (("until", "duration_s"),),
    "preference.quiet": (("start", "end"),),
}

_OPEN_MARKS = ("...", "…", "-", "—", ",", ";", ":", "，", "、", "；", "：")
_TERMINAL = (".", "?", "!", "。", "？", "！")
_WORD = re.compile(r"[a-z']+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def judge(text: str, decision: Decision | None) -> Verdict:
    """The verdict on ``text`` (the utterance so far) given the router's ``decision`` on it."""
    text = text.strip()
    if not text:
        return Verdict.UNSURE
    if decision is not None and decision.intent in ("emergency", "stop"):
        return Verdict.DONE  # never kept waiting, whatever the words around it
    if text.endswith(_OPEN_MARKS):
        return Verdict.MORE
    chinese = bool(_CJK.search(text))
    if chinese and _open_chinese(text):
        return Verdict.MORE
    if not chinese and _open_english(text):
        return Verdict.MORE
    if decision is None:
        return Verdict.UNSURE
    if decision.intent in NEEDS and not _has_parts(decision.intent, decision.slots):
        return Verdict.MORE
    if any(isinstance(v, Ambiguous) for v in decision.slots.values()):
        return Verdict.UNSURE  # the skill would ask: let the speaker say it first
    if decision.intent == "chitchat":
        # Greetings, thanks and small-talk questions are whole; a statement may go on.
        short = len(_CJK.findall(text)) <= 4 if chinese else len(_WORD.findall(text.lower())) <= 3
        asked = text.endswith(("?", "？"))
        return Verdict.DONE if decision.via == "smalltalk" and (short or asked) else Verdict.UNSURE
    # The nearest-example guess is confident about a meaning, not that the words are all
    # there ("十分钟以后…" guesses a timer before "提醒我关火" follows).
    return Verdict.UNSURE if decision.via == "intent" else Verdict.DONE


def _open_english(text: str) -> bool:
    words = _WORD.findall(text.lower())
    if not words:
        return False
    last = words[-1]
    if last in FILLERS:
        return True
    if not text.endswith(_TERMINAL):  # Whisper writes no full stop on a sentence cut off
        return True
    if last in OPEN_WORDS and not text.endswith("?"):
        return True
    # "If it gets cold." — a subordinate clause alone.
    return words[0] in SUBORDINATE and "," not in text


def _open_chinese(text: str) -> bool:
    bare = text.rstrip("。？！.?! ")
    if bare.endswith(ZH_OPEN_ENDS):
        return True
    return bare.startswith(ZH_SUBORDINATE) and not re.search(r"[，,]", bare)


def _has_parts(intent: str, slots: dict[str, Any]) -> bool:
    return all(any(slots.get(k) not in (None, "", 0) for k in group) for group in NEEDS[intent])
