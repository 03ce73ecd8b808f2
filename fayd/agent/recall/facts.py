"""Answers from the facts the person mentioned (``fayd.memory.mentioned``): "who's my
doctor?" → "Your doctor is Dr Patel."; "where did I put my glasses?" → "You told me on
Tuesday that your glasses are on the kitchen windowsill."; 我老伴叫什么 → 你的老伴叫老王。

A question is read for what it asks (a name, a place, when, a liking) and about whom or
what; the facts valid now are matched by subject with kin words ("late husband", "GP",
"first dog" find husband, doctor, dog). Nothing found → None: the caller says so."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from fayd.memory.facts import Fact
from fayd.memory.mentioned import (
    LIKE,
    NAME,
    PLACE,
    RELATION,
    ROLES_ZH,
    SAME_ZH,
    Mention,
    canonical_role,
    mentions,
)

WHO, WHERE, WHEN, LIKES, ANY = "who", "where", "when", "likes", "any"
_FIXED = (NAME, RELATION, PLACE, LIKE)


@dataclass(frozen=True)
class Ask:
    kind: str
    about: str  # the role or thing asked about, as said ("late husband", "glasses")
    verb: str = ""


_LEAD = r"^(?:(?:oh|so|um|and|fay|now|well|dear|love)[ ,]+)*"
_MINE = r"(?:my|our|the)"
_X = r" ([a-z' -]+?)"  # what the question is about
_VERBS = (
    r"(take|have|go to|go|do|see|visit|ring|call|phone|walk|feed|water|watch|play|get|attend|"
    r"meet|use|check|wash|clean|change|put on|listen to|read|hear from)"
)
_WHERE = (
    r"\bwhere(?:'s| is| are|'re| were| did i (?:put|leave|say i (?:put|left))| have i "
    r"(?:put|left)| do i keep| did i tell you)? "
)
_ASKS_EN = [
    (WHO, r"\bwhat(?:'s| is| was| are| were) (?:the names? (?:of|for) )?" + _MINE + _X
     + r"(?:'s)? (?:name|called)(?: again)?$"),
    (WHO, r"\bwhat(?:'s| is| was) the name of " + _MINE + _X + r"(?: again)?$"),
    (WHO, r"\b(?:remember|know|recall|tell me|remind me(?: of)?) (?:what )?" + _MINE + _X
     + r"(?:'s name| is called| was called| name)(?: is| was)?(?: again)?$"),
    (WHO, r"\bwho(?:'s| is| was| are| were) " + _MINE + _X + r"(?: again)?$"),
    (WHO, r"\bwhat do (?:i|we) call " + _MINE + _X + "$"),
    (WHO, r"\bwhat(?:'s| is| was) ([a-z][a-z' -]+?) called(?: again)?$"),
    (WHERE, _WHERE + _MINE + _X + r"(?: (?:is|are|were|was))?(?: again| now)?$"),
    (WHEN, r"\b(?:when|what time|how often|what days?) do (?:i|we) (?:usually |normally )?"
     + _VERBS + r" (?:my |the |our |a |an )?([a-z' -]+?)$"),
    (WHEN, r"\b(?:when|what days?|what time)(?:'s| is| are) (?:my |the |our )([a-z' -]+?)$"),
    (WHO, r"\bwhich ([a-z]+) do (?:i|we) (?:see|have|go to|use)$"),
    (LIKES, r"\bwhat (?:do|did) i (?:like|love|enjoy)\b"),
    (LIKES, r"\bdo i (?:like|love|enjoy) (?:a |an |my |the )?([a-z' -]+?)$"),
    (LIKES, r"\bwhat(?:'s| is) my favourite ([a-z' -]+?)$"),
    (ANY, r"\b(?:do you remember|what do you know about|what did i (?:tell you|say) about) "
     + _MINE + _X + "$"),
]  # fmt: skip
_ASKS_ZH = [
    (WHO, re.compile(r"我(?:的|家)?(\w{1,6}?)(?:的名字)?(?:叫什么|叫啥|是谁|名字是什么)")),
    (WHERE, re.compile(r"(?:我的|我把|把)?(\w{1,6}?)(?:放|搁)?(?:在哪|在什么地方|放哪|搁哪)")),
    (
        WHEN,
        re.compile(
            r"我(?:一般|平时)?(?:什么时候|几点|哪天|星期几|每天几点)(吃|喝|去|做|看|打|量|上|练)(\w{1,8}?)(?:来着)?$"
        ),
    ),
    (LIKES, re.compile(r"我(?:最)?喜欢(?:吃|喝|看|听|做)?什么")),
]


_TOLD_AS = re.compile(
    r"^(where|what|who|when|which)(?: did i (?:say|tell you|mention)| was i (?:saying|telling "
    r"you)| have i told you)(?: that)? (my|our) (.+?) (?:was|were|is|are)$"
)
_TOLD_CALLED = re.compile(r"^what did i (?:tell you|say) (my|our) (.+?)(?:'s| is| was) called$")


def read_ask(question: str) -> Ask | None:
    """What a question asks of the person's facts, or None."""
    if re.search(r"[\u4e00-\u9fff]", question):
        q = question.strip(" ?？。!！")
        for kind, pattern in _ASKS_ZH:
            if m := pattern.search(q):
                groups = m.groups()
                if kind == WHEN:
                    return Ask(WHEN, groups[1], groups[0])
                about = groups[0].removeprefix("的") if groups else ""
                if kind != LIKES and not about.strip("我的"):
                    continue
                return Ask(kind, about)
        return None
    q = re.sub(_LEAD, "", question.lower().replace("’", "'").strip(" ?.!"))
    q = re.sub(
        r",?\s+(?:these days|nowadays|now|again|at the moment|please|then|dear|love)$", "", q
    )
    # "where are my glasses, did I tell you?", "who's my doctor, remind me?": the tag asks
    # nothing more; "where did I say my glasses were?", "what did I tell you my grandson's
    # called?": what was told, asked as it was told.
    q = re.sub(
        r",?\s+(?:did i (?:tell|say to) you|did i say|do you remember|can you remember|remind me|"
        r"again|have i told you|if i told you)$",
        "",
        q,
    )
    q = _TOLD_AS.sub(lambda m: f"{m[1]} {'are' if m[1] == 'where' else 'is'} {m[2]} {m[3]}", q)
    q = _TOLD_CALLED.sub(r"what's \1 \2 called", q)
    for kind, pattern in _ASKS_EN:
        if m := re.search(pattern, q):
            groups = [g for g in m.groups() if g]
            if kind == WHEN and len(groups) == 2:
                return Ask(WHEN, groups[1].strip(), groups[0])
            about = groups[-1].strip() if groups else ""
            if about in ("name", "i", "me") or (kind == WHO and about.startswith("my name")):
                continue  # the person's own name: memory.recall's own path
            return Ask(kind, about)
    return None


# --- matching ---------------------------------------------------------------------------


def _norm(text: str) -> str:
    words = text.lower().replace("’", "'").split()
    while words and words[0] in ("my", "our", "the", "a", "an"):
        words = words[1:]
    return " ".join(words)


def _stem(word: str) -> str:
    return word[:-2] if word.endswith("es") and len(word) > 4 else word.rstrip("s")


def _same_role(a: str, b: str) -> bool:
    if a == b:
        return True
    for group in SAME_ZH:
        if a in group and b in group:
            return True
    ra, rb = ROLES_ZH.get(a, a), ROLES_ZH.get(b, b)
    if ra == rb:
        return True
    ca, cb = canonical_role(a) or _norm(a), canonical_role(b) or _norm(b)
    return ca == cb


def _same_thing(asked: str, subject: str) -> bool:
    """ "glasses" finds "reading glasses"; "key" finds "spare key" and "keys"."""
    a, s = _norm(asked), _norm(subject)
    if not a or not s:
        return False
    if re.search(r"[\u4e00-\u9fff]", a + s):
        return a in s or s in a
    aw, sw = [_stem(w) for w in a.split()], [_stem(w) for w in s.split()]
    return aw[-1] == sw[-1] or set(aw) <= set(sw) or set(sw) <= set(aw)


def people(facts: list[Fact], role: str) -> list[str]:
    """The names told for ``role``, newest first."""
    names = [f.object for f in facts if f.predicate == NAME and _same_role(f.subject, role)]
    names += [f.subject for f in facts if f.predicate == RELATION and _same_role(f.object, role)]
    return list(dict.fromkeys(names))


def _oldest_first(facts: list[Fact]) -> list[Fact]:
    return sorted(facts, key=lambda f: (f.valid_from, f.id))


# --- saying it --------------------------------------------------------------------------

_THE = ("go to", "visit", "attend", "see", "watch", "listen to", "read", "do", "play", "meet")


def _plural(role: str) -> str:
    if role.endswith("child"):
        return role + "ren"
    return role if role.endswith("s") else role + "s"


def _listed(items: list[str], zh: bool) -> str:
    if zh:
        return "、".join(items[:-1]) + "和" + items[-1] if len(items) > 1 else items[0]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]


def _when(at: float, now: datetime, zh: bool) -> str:
    """When it was said: today, yesterday, on Tuesday (this week), on 3 March."""
    day = datetime.fromtimestamp(at, now.tzinfo).date()
    ago = (now.date() - day).days
    if zh:
        if ago <= 0:
            return "今天"
        if ago == 1:
            return "昨天"
        if ago < 7:
            return "星期" + "一二三四五六日"[day.weekday()]
        return f"{day.month}月{day.day}日"
    if ago <= 0:
        return "today"
    if ago == 1:
        return "yesterday"
    if ago < 7:
        return f"on {day:%A}"
    return f"on {day.day} {day:%B}"


def sentence(m: Mention | Fact, zh: bool) -> str:
    """A fact as the person's own statement turned round: "your glasses are on the kitchen
    windowsill", "you take your blood pressure tablets every morning"."""
    s, p, o = m.subject, m.predicate, m.object
    if zh:
        if p == NAME:
            return f"你的{s}叫{o}"
        if p == RELATION:
            return f"{s}是你的{o}"
        if p == PLACE:
            return f"{s}在{o}"
        if p == LIKE:
            return f"你{'不喜欢' if o == 'dislike' else '喜欢'}{s}"
        return f"你{o}{p}{s}"
    if p == NAME:
        if o.split()[0] in ("Dr", "Doctor") and " " in o:
            return f"your {s} is {o}"
        return f"your {s}'s name is {o}"
    if p == RELATION:
        return f"your {o} is called {s}"
    if p == PLACE:
        verb = "are" if s.endswith("s") and not s.endswith("ss") else "is"
        return f"your {s} {verb} {o}"
    if p == LIKE:
        if o == "dislike":
            return f"you don't like {re.sub(r'^(?:my|our) ', 'your ', s, flags=re.I)}"
        return f"you {o} {re.sub(r'^(?:my|our) ', 'your ', s, flags=re.I)}"
    det = "the" if p in _THE else ("a" if p == "have" and not s.endswith("s") else "your")
    return f"you {p} {det} {s} {o}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def answer(ask: Ask, facts: list[Fact], now: datetime, zh: bool) -> str | None:
    """The reply to ``ask`` from the facts valid now (newest first), or None."""
    if ask.kind == WHO:
        role = ask.about
        names = people(_oldest_first(facts), role)  # listed in the order told
        if not names:
            return None
        shown = role if zh else (canonical_role(role) or _norm(role))
        if len(names) == 1:
            if zh:
                return f"你的{shown}叫{names[0]}。"
            if "'s " in shown:  # "Jenny's little one": someone else's, named as told
                told = next(f.subject for f in facts if _same_role(f.subject, role))
                return f"{_cap(told)}'s name is {names[0]}."
            return _cap(sentence(Mention(shown, NAME, names[0]), False)) + "."
        if zh:
            return f"你跟我说过你的{shown}：{_listed(names, True)}。"
        return f"You've told me of your {_plural(shown)} {_listed(names, False)}."
    if ask.kind == WHERE:
        found = [f for f in facts if f.predicate == PLACE and _same_thing(ask.about, f.subject)]
        if not found:
            return None
        f = found[0]
        if zh:
            return f"你{_when(f.valid_from, now, True)}跟我说，{sentence(f, True)}。"
        return f"You told me {_when(f.valid_from, now, False)} that {sentence(f, False)}."
    if ask.kind == WHEN:
        found = [
            f
            for f in facts
            if f.predicate not in _FIXED
            and _same_thing(ask.about, f.subject)
            and (not ask.verb or f.predicate == ask.verb or not zh)
        ]
        if not found:
            return None
        if zh:
            return f"你跟我说过，{sentence(found[0], True)}。"
        return f"You told me {sentence(found[0], False)}."
    if ask.kind == LIKES:
        liked = [f for f in facts if f.predicate == LIKE and f.object != "dislike"]
        if ask.about:
            liked = [f for f in facts if f.predicate == LIKE and _same_thing(ask.about, f.subject)]
        if not liked:
            return None
        said = [sentence(f, zh) for f in liked[:3]]
        if zh:
            return f"你跟我说过，{'；'.join(said)}。"
        return f"You told me {_listed(said, False)}."
    # ANY: whatever was said about it
    role_names = people(facts, ask.about)
    if role_names:
        return answer(Ask(WHO, ask.about), facts, now, zh)
    found = [f for f in facts if f.predicate != RELATION and _same_thing(ask.about, f.subject)]
    if not found:
        return None
    return (
        f"你跟我说过，{sentence(found[0], True)}。"
        if zh
        else f"You told me {sentence(found[0], False)}."
    )


def acknowledged(said: list[Mention], zh: bool) -> str:
    """ "I'll remember that your doctor is Dr Evans." for facts just written."""
    parts = [sentence(m, zh) for m in said[:2]]
    if zh:
        return f"好的，我记住了：{'；'.join(parts)}。"
    return f"I'll remember that {_listed(parts, False)}."


__all__ = ["Ask", "acknowledged", "answer", "mentions", "read_ask"]
