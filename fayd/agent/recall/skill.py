"""Remembering what a user tells fayd, and answering from it. "Remember that my
granddaughter is called Lily" becomes a fact (jiyi's subject/predicate/object) when it
parses, and a persistent memory in every case; "what's my granddaughter's name?" is
answered from the facts, else from what the user said before (their own words, found by
meaning) — quoted, never made up — and "You haven't told me that yet" when nothing fits.
What the person mentioned in passing ("my late husband Harold", "my glasses are on the
windowsill": ``fayd.memory.mentioned``) is answered by kind and kin word
(``recall_facts``)."""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

import numpy as np

from fayd.agent.care import answers
from fayd.agent.language.phrases import MONTHS, WEEKDAYS
from fayd.agent.recall import facts as recall_facts
from fayd.agent.skills import words
from fayd.agent.skills.registry import ME, Context, Outcome, Skill
from fayd.memory import Facts, Memory, mentioned
from fayd.memory.provenance import HUMAN

#: A remembered sentence answers a question only this close to it in meaning (cosine);
#: or RELEVANT_ALL_WORDS when it holds every word that matters in the question ("who is
#: coming on Sunday?" → "my daughter Susan is coming on Sunday", 0.49).
RELEVANT = 0.5
RELEVANT_ALL_WORDS = 0.4
#: "What do you know about me?" lists at most this many things.
ABOUT_ME_N = 4
#: Nothing told fits the question: said so, never guessed.
NOT_TOLD = (
    "You haven't told me that yet. If you tell me, I'll remember it.",
    "这个你还没告诉过我。你告诉我，我就记住。",
)
NO_MEMORY = (
    "I can't remember things right now: my memory is not working.",
    "我现在记不住东西：记忆功能没有启用。",
)

#: The person asking their own name: "what's my name?", "who am I?", "我叫什么名字".
_ASK_OWN_NAME = re.compile(
    r"\b(what(?:'s| is| was)|know|remember|forgotten|say|tell me) my name\b|^(who am i|what am i "
    r"called)\b|\bwho i am\b|我(叫什么|的名字(是|叫)什么)|我(是谁|叫什么)"
)
#: "What do you know about me?": what the person asked to be remembered, listed.
_ABOUT_ME = re.compile(
    r"\bwhat (do|did) you (know|remember) about me\b|\bwhat have i (told you|asked you to "
    r"remember)\b|你(都)?(知道|记得)(我)?(的)?(哪些|什么)(关于我的)?(事)?(吗|呢)?$|关于我你(知道|记得)什么"
)
_ASK_NAME_EN = [
    re.compile(r"\bwhat(?:'s| is) my ([a-z' ]+?)(?:'s)? (?:name|called)\b"),
    re.compile(r"\bwhat(?:'s| is) (?:the name of )?my ([a-z' ]+?)(?:'s name)?$"),
    re.compile(r"\bwho(?:'s| is) my ([a-z' ]+?)$"),
    re.compile(r"\bwhat do (?:i|we) call my ([a-z' ]+?)$"),
]
_ASK_OTHER_EN = re.compile(
    r"\b(?:when|what)(?:'s| is) my ([a-z' ]+?)'s (birthday|address|phone number)\b"
)
_ASK_NAME_ZH = re.compile(r"我(?:的)?(\w{1,6}?)叫什么")


def _asked_fact(question: str) -> tuple[str, str] | None:
    """(subject, predicate) of a question about a fact: "what's my son called?" → son, name."""
    q = question.lower().strip(" ?.!？。")
    if _ASK_OWN_NAME.search(q):
        return ME, "name"
    if m := _ASK_OTHER_EN.search(q):
        return m.group(1).strip(), m.group(2)
    for pattern in _ASK_NAME_EN:
        if m := pattern.search(q):
            return m.group(1).strip(), "name"
    if m := _ASK_NAME_ZH.search(question):
        return m.group(1), "name"
    return None


async def remember(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    memory = ctx.memory
    if memory is None:
        return Outcome(NO_MEMORY[zh])
    content = str(args.get("content") or "").strip()
    if not content:
        return Outcome("你要我记住什么？" if zh else "What would you like me to remember?")
    fact = args.get("fact")
    detail: dict[str, Any] = {}
    if isinstance(fact, dict):
        result = await asyncio.to_thread(
            Facts(memory).assert_fact,
            fact["subject"],
            fact["predicate"],
            fact["object"],
            username=ctx.user,
            trust=HUMAN,
            source="voice",
            now=ctx.now.timestamp(),
        )
        detail["fact"] = result
    node = await asyncio.to_thread(
        memory.remember,
        f"{ctx.user} said: {content}",
        ctx.user,
        "fact",
        "voice",
        True,
        ["trust:human_asserted"],
        "observation",
        7,
    )
    detail["node_id"] = node.get("node_id")
    if isinstance(fact, dict) and fact["subject"] == ME:
        name = fact["object"]
        if zh:
            return Outcome(f"{name}，很高兴认识你！我记住你的名字了。", detail=detail)
        return Outcome(f"Nice to meet you, {name}. I'll remember your name.", detail=detail)
    if zh:
        return Outcome(f"好的，我记住了：{content}。", detail=detail)
    told = words.mid_sentence(words.turned_round(content))
    return Outcome(f"I'll remember that {told}.", detail=detail)


#: A fact said in passing: its exchange is kept in memory like any conversation (Chat's 3),
#: a little higher, as the person chose to tell it.
TOLD_IMPORTANCE = 4


async def recall(args: dict[str, Any], ctx: Context) -> Outcome:
    zh = ctx.lang == "zh"
    memory = ctx.memory
    if memory is None:
        return Outcome(NO_MEMORY[zh])
    question = str(args.get("query") or "").strip()
    told_now = recall_facts.mentions(question)
    if told_now:  # a statement routed here ("my doctor's called Dr Evans"): kept, said so
        await asyncio.to_thread(mentioned.note, memory, ctx.user, question, ctx.now.timestamp())
        said = recall_facts.acknowledged(told_now, zh)  # the exchange is kept as well, as a
        return Outcome(said, importance=TOLD_IMPORTANCE, detail={"noted": len(told_now)})  # talk
    asked = _asked_fact(question)
    ask = recall_facts.read_ask(question)
    if ask is not None and (asked is None or asked[0] != ME):
        now = ctx.now.timestamp()  # the daemon's clock: the facts were dated by it
        valid = await asyncio.to_thread(Facts(memory).as_of, now, username=ctx.user)
        if said := recall_facts.answer(ask, valid, ctx.now, zh):
            return Outcome(said, detail={"from": "facts", "ask": ask.kind})
    if asked is not None:
        subject, predicate = asked
        facts = await asyncio.to_thread(
            Facts(memory).as_of,
            ctx.now.timestamp(),
            username=ctx.user,
            subject=subject,
            predicate=predicate,
        )
        if facts:
            value = facts[0].object  # the newest valid one
            if subject == ME:
                return Outcome(f"你叫{value}。" if zh else f"Your name is {value}.")
            if zh:
                return Outcome(f"你的{subject}叫{value}。")
            said = "name" if predicate == "name" else predicate
            return Outcome(f"Your {subject}'s {said} is {value}.", detail={"from": "facts"})
    if _ABOUT_ME.search(question.lower().strip(" ?.!？。")):
        return await _about_me(memory, ctx, zh)
    told = await _told(memory, ctx.user, question)
    if told is None:
        return await _perhaps(memory, question, ctx) or Outcome(NOT_TOLD[zh])
    sentence, score = told
    if zh:
        return Outcome(f"你跟我说过：{sentence}。", detail={"from": "memory", "score": score})
    return Outcome(
        f"You told me {words.mid_sentence(words.turned_round(sentence))}.",
        detail={"from": "memory", "score": score},
    )


async def _about_me(memory: Memory, ctx: Context, zh: bool) -> Outcome:
    """What the person told: the facts kept from what they mentioned ("my doctor is Dr
    Patel"), then the newest things they asked to be remembered, in their words turned
    round."""
    facts = await asyncio.to_thread(Facts(memory).as_of, ctx.now.timestamp(), username=ctx.user)
    known = [
        _own_name(f.object, zh) if f.subject == ME else recall_facts.sentence(f, zh)
        for f in facts[:ABOUT_ME_N]
    ]
    nodes = await asyncio.to_thread(
        memory.get_recent, ctx.user, ABOUT_ME_N * 2, ["trust:human_asserted"]
    )
    said = list(dict.fromkeys(s for n in nodes if (s := _users_words(n["content"], ctx.user))))
    said = [s for s in said if not any(_covers(f, s) for f in facts[:ABOUT_ME_N])]
    said = said[: max(0, ABOUT_ME_N + 2 - len(known))]
    if not said and not known:
        if zh:
            return Outcome("我对你还知道得不多。你想让我记住什么，就告诉我。")
        return Outcome(
            "I don't know much about you yet. Tell me anything you'd like me to remember."
        )
    if zh:
        return Outcome("你跟我说过：" + "；".join(known + said) + "。")
    told = known + [words.mid_sentence(words.turned_round(s)) for s in said]
    listed = told[0] if len(told) == 1 else ", ".join(told[:-1]) + " and " + told[-1]
    return Outcome(f"You've told me that {listed}.", detail={"from": "memory"})


#: A name asked for by its role: "what was my husband's name?", "who's my doctor again?"
_NAME_ASKED = re.compile(r"\b(name|called)\b|^(?:\w+[ ,]+)*who(?:'s| is| was)\b")
_MY_ROLE = re.compile(r"\bmy ((?:late |dear )?[a-z]+)")
#: "My Harold, God rest him, …": a name the person called theirs, without its role.
_MY_NAME = re.compile(r"\b[Mm]y ([A-Z][a-z]{2,})\b")


async def _perhaps(memory: Memory, question: str, ctx: Context) -> Outcome | None:
    """A role's name never told as such, when the person spoke of someone by name only
    ("My Harold, God rest him, …"): asked, never guessed ("is that him?"); "yes" keeps it
    as if they had said it. None when there is no such name (English only)."""
    if ctx.lang == "zh" or ctx.expect is None or not _NAME_ASKED.search(question.lower()):
        return None
    roles = (mentioned.canonical_role(m[1]) for m in _MY_ROLE.finditer(question.lower()))
    role = next(filter(None, roles), None)
    if role is None:
        return None
    facts = await asyncio.to_thread(Facts(memory).as_of, ctx.now.timestamp(), username=ctx.user)
    known = {w.lower() for f in facts for w in (f.subject, f.object)}
    nodes = await asyncio.to_thread(memory.get_recent, ctx.user, 60)
    names = (m[1] for n in nodes for m in _MY_NAME.finditer(_users_words(n["content"], ctx.user)))
    name = next((n for n in names if n.lower() not in known and not _not_a_name(n)), None)
    if name is None:
        return None
    him = words.pronouns(role)[0]

    async def then(answer: str) -> str:
        if answer != "yes":
            return f"All right. Tell me your {role}'s name whenever you like."
        told = f"my {role}'s name is {name}"
        await asyncio.to_thread(mentioned.note, memory, ctx.user, told, ctx.now.timestamp())
        return f"Thank you. I'll remember that your {role}'s name is {name}."

    ctx.expect.expect(ctx.user, answers.yes_no, then)
    return Outcome(
        f"You haven't told me your {role}'s name. You have told me about {name}: is that {him}?",
        detail={"asked": "perhaps", "name": name},
    )


def _not_a_name(word: str) -> bool:
    """ "My Goodness", "My Lord", "My Tablets" typed with a capital are no one's names."""
    lower = word.lower()
    return bool(mentioned.canonical_role(lower)) or lower in _NOT_NAMES


_NOT_NAMES = (
    frozenset(
        "goodness god lord word gosh days dear darling love tablets pills doctor gp christmas "
        "easter".split()
    )
    | set(MONTHS)
    | set(WEEKDAYS)
)


def _covers(fact: Any, sentence: str) -> bool:
    """The fact already says what the sentence asked to be remembered ("my granddaughter is
    called Lily" once the granddaughter's name is a fact)."""
    lower = sentence.lower()
    return fact.object.lower() in lower and (fact.subject == ME or fact.subject.lower() in lower)


def _own_name(name: str, zh: bool) -> str:
    return f"你叫{name}" if zh else f"your name is {name}"


#: Words that say nothing of what a question is about.
_GENERIC = frozenset(
    "what whats what's who whos who's when whens when's where wheres where's which how is are "
    "was were do does did my me i i'm you your the a an of to in on at for about again "
    "name called tell told say said remember know think can could would please dear love "
    "ever never have has had been be it its it's that this there their they".split()
)


_GENERIC_ZH = "我你的是叫什么吗呢了过说来着啥名字那个"


def _content(text: str) -> set[str]:
    """The words that say what a sentence is about (lower case, a plural's s dropped); for
    Chinese, its character pairs."""
    if any("\u3400" <= c <= "\u9fff" for c in text):
        chars = [c for c in text if "\u3400" <= c <= "\u9fff" and c not in _GENERIC_ZH]
        return {a + b for a, b in itertools.pairwise(chars)} | set(chars)
    words = re.findall(r"[a-z']+", text.lower())
    return {w.rstrip("s") if len(w) > 3 else w for w in words if w not in _GENERIC}


def _roles(text: str) -> set[str]:
    """The kin and other roles an English sentence names ("our Anna's husband" → husband)."""
    found = (mentioned.canonical_role(w) for w in re.findall(r"[a-z]+", text.lower()))
    return {role for role in found if role}


#: A question the person asked is nothing they told ("你跟我说过：我孙子叫啥来着？").
_ASKED = re.compile(
    r"[?？]\s*$|^(what|who|where|when|which|how|why|do|does|did|is|are|can|could)\b|吗|来着|呢[。！]?$",
    re.I,
)


def _shares(about: set[str], said: set[str]) -> bool:
    """The sentence says something of what is asked: a word in common, or in Chinese a
    pair of characters (one character, 天 or 我, is shared by almost anything; MiniLM,
    trained on English, cannot tell Chinese sentences apart either)."""
    return _shared(about, said) > 0


def _shared(about: set[str], said: set[str]) -> int:
    """How much the two have in common: words; in Chinese, character pairs that are no
    time or pointing words (以前, 那个 say nothing of what is asked)."""
    common = about & said
    if any("\u3400" <= c <= "\u9fff" for w in common for c in w):
        return sum(1 for w in common if len(w) > 1 and w not in _GENERIC_PAIRS_ZH)
    return len(common)


_GENERIC_PAIRS_ZH = frozenset(
    "以前 现在 今天 昨天 明天 时候 那个 这个 一个 哪个 上次 刚才 我们 你们 他们 知道 记得 告诉 "
    "跟我 我说 说过 你跟".split()
)


async def _told(memory: Memory, user: str, question: str) -> tuple[str, float] | None:
    """The user's own words closest to the question, if close enough and about the same
    thing (they share a word that matters: "my nephew" is not answered by "my grandson"): a
    remembered fact or the user's side of an earlier exchange (never fayd's: it may be
    wrong)."""
    nodes = await asyncio.to_thread(memory.search, question, user, 8)
    about, roles = _content(question), _roles(question)
    sentences = list(
        dict.fromkeys(
            s
            for s in (_users_words(n["content"], user) for n in nodes)
            if s
            and not _ASKED.search(s)
            and (not about or _shares(about, _content(s)))
            and roles <= _roles(s)  # "Anna's husband" is not "Anna's on her way round"
        )
    )
    if not sentences:
        return None
    if any("\u3400" <= c <= "\u9fff" for c in question):  # MiniLM reads no Chinese: the most
        best_zh = max(sentences, key=lambda x: _shared(about, _content(x)))  # pairs in common
        return best_zh, float(_shared(about, _content(best_zh)))
    vectors = await asyncio.to_thread(memory.embedder.embed, [question, *sentences])
    sims = vectors[1:] @ vectors[0]
    best = int(np.argmax(sims))
    enough = (
        RELEVANT_ALL_WORDS if len(about) > 1 and about <= _content(sentences[best]) else RELEVANT
    )
    if float(sims[best]) < enough:
        return None
    return sentences[best], round(float(sims[best]), 3)


def _users_words(content: str, user: str) -> str:
    """What the user said in a node: "Ann said: …" or Fay's "Ann：…\\nFay：…" exchange."""
    first = content.splitlines()[0] if content else ""
    for prefix in (f"{user} said: ", f"{user}：", f"{user}:"):
        if first.startswith(prefix):
            return first[len(prefix) :].strip().rstrip(".。")
    return ""


SKILLS = [
    Skill(
        "remember",
        "Remember something the user says (a fact when it parses) for good.",
        {
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": 1000},
                "fact": {"type": "object"},
            },
            "required": ["content"],
        },
        remember,
    ),
    Skill(
        "recall",
        "Answer a question about what the user told fayd, from facts and memories only.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 1000}},
            "required": ["query"],
        },
        recall,
    ),
]
