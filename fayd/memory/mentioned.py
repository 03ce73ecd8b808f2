"""Facts said in passing: "my late husband Harold", "Dr Patel is my GP", "my glasses are on
the kitchen windowsill", "I go to the lunch club on Tuesdays", 我孙子叫小明, 我的眼镜在桌子上.

Read in code from the person's own words only (never fayd's reply), with a few general
sentence shapes, no model call. Each mention is a jiyi fact (``fayd.memory.facts``) with a
validity window, so a newer one for the same subject and predicate closes the old ("the
keys are on the hall table" ends "the keys are in the coat pocket").

The triples:

- a person in a role there is one of (husband, doctor, 老伴): ``(role, "name", Name)``, the
  shape ``remember`` writes ("my granddaughter is called Lily");
- a person in a role there may be several of (grandson, friend, a dog):
  ``(Name, "relation", role)``, so a second grandson does not end the first;
- where a thing is: ``(thing, "place", "on the kitchen windowsill")``;
- a routine: ``(thing, verb, when)``: ``("blood pressure tablets", "take", "every morning")``;
- a liking: ``(thing, "like", "love" | "like" | "enjoy" | "dislike")``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from fayd.memory.port import MemoryPort

NAME = "name"
RELATION = "relation"
PLACE = "place"
LIKE = "like"
SOURCE = "mentioned"

# --- roles ------------------------------------------------------------------------------

#: A role there is one of at a time: a new name replaces the old.
SINGLE_ROLES = {
    "husband": "husband", "hubby": "husband", "wife": "wife", "partner": "partner",
    "doctor": "doctor", "gp": "doctor", "family doctor": "doctor", "doc": "doctor",
    "dentist": "dentist", "optician": "optician", "chiropodist": "chiropodist",
    "vicar": "vicar", "priest": "priest", "pharmacist": "pharmacist", "chemist": "pharmacist",
    "mum": "mum", "mother": "mum", "mom": "mum", "mam": "mum", "dad": "dad", "father": "dad",
    "landlord": "landlord", "social worker": "social worker", "boyfriend": "boyfriend",
    "girlfriend": "girlfriend", "consultant": "consultant", "physio": "physio",
}  # fmt: skip
#: Roles there may be several of: each name is its own fact.
MANY_ROLES = {
    "son": "son", "daughter": "daughter", "grandson": "grandson",
    "granddaughter": "granddaughter", "grandchild": "grandchild", "grandkid": "grandchild",
    "great-grandson": "great-grandson", "great grandson": "great-grandson",
    "great-granddaughter": "great-granddaughter", "great granddaughter": "great-granddaughter",
    "great-grandchild": "great-grandchild", "son-in-law": "son-in-law",
    "daughter-in-law": "daughter-in-law", "son in law": "son-in-law",
    "daughter in law": "daughter-in-law", "brother": "brother", "sister": "sister",
    "brother-in-law": "brother-in-law", "sister-in-law": "sister-in-law", "niece": "niece",
    "nephew": "nephew", "cousin": "cousin", "aunt": "aunt", "auntie": "aunt", "uncle": "uncle",
    "friend": "friend", "best friend": "friend", "neighbour": "neighbour",
    "neighbor": "neighbour", "carer": "carer", "caregiver": "carer", "nurse": "nurse",
    "child": "child", "boy": "son", "girl": "daughter", "dog": "dog", "puppy": "dog",
    "cat": "cat", "kitten": "cat", "budgie": "budgie", "parrot": "parrot", "bird": "bird",
    "rabbit": "rabbit", "hamster": "hamster", "horse": "horse", "pony": "pony", "pet": "pet",
    "goldfish": "goldfish", "tortoise": "tortoise",
}  # fmt: skip
ROLES = {**SINGLE_ROLES, **MANY_ROLES}
#: Words before a role that do not change who is meant ("my late husband", "my eldest").
_MODIFIERS = (
    "late dear darling lovely beloved poor old eldest oldest youngest little first second "
    "third new own only other younger older big baby wee".split()
)
SINGLE_ROLES_ZH = {
    "老伴": "老伴", "老伴儿": "老伴", "老公": "老公", "丈夫": "丈夫", "先生": "先生",
    "爱人": "爱人", "老婆": "老婆", "妻子": "妻子", "太太": "太太", "医生": "医生",
    "家庭医生": "医生", "大夫": "医生", "主治医生": "医生", "牙医": "牙医", "妈妈": "妈妈",
    "母亲": "妈妈", "爸爸": "爸爸", "父亲": "爸爸", "保姆": "保姆",
}  # fmt: skip
MANY_ROLES_ZH = {
    "儿子": "儿子", "女儿": "女儿", "孙子": "孙子", "孙女": "孙女", "外孙": "外孙",
    "外孙女": "外孙女", "儿媳": "儿媳", "儿媳妇": "儿媳", "女婿": "女婿", "哥哥": "哥哥",
    "姐姐": "姐姐", "弟弟": "弟弟", "妹妹": "妹妹", "朋友": "朋友", "老朋友": "朋友",
    "邻居": "邻居", "护工": "护工", "狗": "狗", "小狗": "狗", "猫": "猫", "小猫": "猫",
    "重孙": "重孙", "重孙女": "重孙女", "侄子": "侄子", "侄女": "侄女",
}  # fmt: skip
ROLES_ZH = {**SINGLE_ROLES_ZH, **MANY_ROLES_ZH}
#: Roles that mean the same person in Chinese: a question with one finds the others.
SAME_ZH = [{"老伴", "老公", "丈夫", "先生", "爱人", "老婆", "妻子", "太太"}]


def is_many(role: str) -> bool:
    return role in MANY_ROLES.values() or role in MANY_ROLES_ZH.values()


def canonical_role(phrase: str) -> str | None:
    """ "late husband" → husband, "GP" → doctor, "eldest grand-daughter" → granddaughter;
    None when no known role ends the phrase."""
    words = phrase.lower().replace("grand-", "grand").replace("’", "'").split()
    while words and words[0] in _MODIFIERS:
        words = words[1:]
    if words:  # "grandsons", "grandchildren": the one role
        last = words[-1]
        singular = last[:-3] if last.endswith("children") else last.removesuffix("s")
        if last not in ROLES and singular in ROLES:
            words[-1] = singular
    for n in (3, 2, 1):
        if len(words) >= n and (role := ROLES.get(" ".join(words[-n:]))):
            return role if len(words) == n else None
    return None


# --- shared pieces ----------------------------------------------------------------------

_TITLE = r"(?:(?:Dr|Doctor|Mr|Mrs|Ms|Miss|Nurse|Auntie|Aunt|Uncle|Nan|Grandad|Father)\.? )"
#: A name as written with capitals (or after a title): "Harold", "Dr Patel", "Mary Ann".
_CAP_NAME = rf"(?P<name>{_TITLE}?[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+)?|(?i:{_TITLE})[A-Za-z][a-z'’-]+)"
#: One capitalised word, never a possessive's ("Anna's lad").
_PLAIN_NAME = r"(?P<name>(?:(?:Dr|Doctor|Mr|Mrs|Ms|Miss|Nurse)\.? )?[A-Z][a-z-]+)"
#: After "called" / "named" a name may be heard in lower case ("called biscuit").
_ANY_NAME = rf"(?P<name>(?i:{_TITLE})?[A-Za-z][a-z'’-]+(?: [A-Z][a-z'’-]+)?)"
#: Capitalised words that are no names.
_NOT_NAMES = set(
    "I I'm I've It It's He She They We You That This There The A And But So Yes No Oh Well "
    "Fay God Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March "
    "April May June July August September October November December Christmas Easter "
    "English British Dad Mum Mother Father Grandma Grandad Nan Catholic Christian Jewish Muslim "
    "Irish Scottish Welsh French German Indian Chinese American Australian Canadian".split()
)
_NOT_NAMES_LOWER = set(
    "a an the my our his her their is was has had have been being be coming going getting "
    "starting doing and but so or very really always never just still also now then here there "
    "who which that what when where it he she they we you i me him them this sometimes often "
    "not no yes too as at in on to for of with from by up down out over into about".split()
)
_ROLE_PHRASE = r"(?P<role>(?i:[a-z'’ -]){2,40}?)"
_CLAUSE_END = re.compile(r"\s*(?:[,.;!?]|\b(?:and|but|so|because|cos|as|when|if|though)\b)")


@dataclass(frozen=True)
class Mention:
    subject: str
    predicate: str
    object: str

    def text(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


def _name(raw: str) -> str | None:
    name = raw.strip().rstrip("'’s") if raw.endswith(("'s", "’s")) else raw.strip()
    words = name.split()
    if not words or words[0] in _NOT_NAMES or any(w.lower() in _NOT_NAMES_LOWER for w in words):
        return None
    return " ".join(w[:1].upper() + w[1:] for w in name.split())


def _person(role_phrase: str, name: str, free: bool) -> Mention | None:
    """A person (or pet) in a role; ``free``: an unknown role phrase is kept as said (only
    where the sentence says "called" / "named")."""
    name_ = _name(name)
    if name_ is None:
        return None
    role = canonical_role(role_phrase)
    if role is None:
        if not free:
            return None
        words = [w for w in role_phrase.split() if w.lower() not in ("a", "an", "the")]
        while words and words[0].lower() in _MODIFIERS:
            words = words[1:]
        if not words or len(words) > 4 or words[-1].lower() in _NOT_NAMES_LOWER:
            return None
        role = " ".join(words)
    if is_many(role):
        return Mention(name_, RELATION, role)
    return Mention(role, NAME, name_)


# --- English ----------------------------------------------------------------------------

_POSSESSIVE = r"(?i:\b(?:my|our) )"
_PEOPLE_EN = [
    # my grandson is called Tom / our Jenny's little one is called Poppy / my GP's name is …
    (re.compile(rf"{_POSSESSIVE}{_ROLE_PHRASE}(?:'s|’s| is| was)? (?:called|named) {_ANY_NAME}"),
     True),
    (re.compile(rf"{_POSSESSIVE}{_ROLE_PHRASE}(?:'s|’s) name (?:is|was|'s) {_ANY_NAME}"), True),
    # I had a dog called Biscuit / we've got a cat named Tiddles / a grandson called Tom
    (re.compile(rf"(?i:\b(?:a|an) ){_ROLE_PHRASE} (?i:called|named) {_ANY_NAME}"), False),
    # Dr Patel is my GP / Harold was my husband / Tom's my eldest grandson
    (re.compile(rf"(?:^|[,.;] |\band ){_CAP_NAME}(?:'s|’s| is| was) (?i:my|our) {_ROLE_PHRASE}"
                r"(?:$|[,.;!?]| and | who | but )"), False),
    # my doctor is Dr Evans / my husband was Harold
    (re.compile(rf"{_POSSESSIVE}{_ROLE_PHRASE}(?:'s|’s| is| was) {_CAP_NAME}\b"), False),
    # my late husband Harold / my grandson Tom's coming / my doctor, Dr Evans, — but not
    # "he's my grandson, Anna's lad" (Anna's lad is the grandson)
    (re.compile(rf"{_POSSESSIVE}{_ROLE_PHRASE} {_CAP_NAME}\b"), False),
    (re.compile(rf"{_POSSESSIVE}{_ROLE_PHRASE}, {_PLAIN_NAME}\b(?!['’])"), False),
    # Our Tom's coming Saturday, he's my grandson / Sue popped in, she's my neighbour
    (re.compile(rf"(?:(?i:\b(?:my|our) )|^){_PLAIN_NAME}\b[^.;!?]{{0,60}}?, (?i:he|she)"
                rf"(?:'s|’s| is| was) (?i:my|our) {_ROLE_PHRASE}(?:$|[,.;!?]| and | who | but )"),
     False),
]  # fmt: skip
#: A doctor named by title alone ("Dr Okafor's ever so nice"): the person's own doctor.
_THEIR_DOCTOR = re.compile(r"\b(?:his|her|their|\w+['’]s|\w+s['’]) (?:doctor|gp)\b", re.I)
_DOCTOR_EN = re.compile(r"\b(?:Dr|Doctor) (?P<name>[A-Z][a-z-]+)\b")

_PREP = (
    r"(?:on top of|next to|in front of|at the back of|round the back of|underneath|under|"
    r"inside|behind|beside|by|in|on|at)"
)
_DET = r"(?:the|my|our|a|that|this|his|her)"
#: Places that are idioms, not places: "on the mend", "in a bad way", "on the phone".
_NOT_PLACES = re.compile(
    r"\b(way|mend|move|go|phone|telly|tv|radio|news|horizon|cards|ball|blink|warpath|dot|"
    r"side|whole|end|list|road to recovery|same boat|mood|muddle|state|pain|turn|right place|"
    r"court|cards)\b"
)
_THING = r"(?P<thing>[a-z'’ -]{2,40}?)"
_PLACES_EN = [
    # my glasses are on the kitchen windowsill / the spare key's under the plant pot
    re.compile(
        rf"\b(?:my|the|our) {_THING} (?:is|are|'s|’s|'re) (?:now |still |usually |always |kept )?"
        rf"(?P<place>{_PREP} {_DET} .+)",
        re.I,
    ),
    # I've put the spare key under the plant pot / I left my purse in the bedroom
    re.compile(
        r"\bi(?:'ve| have)? (?:just |always |usually )?(?:put|left|popped|placed|hidden|hid|"
        r"stored|keep|leave|stuck|moved)(?: away)? (?:my|the|our) "
        rf"{_THING}(?: back| away)? (?P<place>{_PREP} {_DET} .+)",
        re.I,
    ),
]

#: A thing, then where it is, in one breath (the question before it is no doubt): "where
#: are my glasses… oh here they are, on the windowsill", "I've moved my glasses, they're in
#: the bedside drawer now".
_FOUND_AGAIN = re.compile(
    rf"\b(?:my|the|our) {_THING}\b[^?]{{0,40}}?\b(?:(?:here|there) )?(?:they are|it is|they're|"
    rf"it's|they've gone|it's gone)[, ]+(?:now |still )?(?P<place>{_PREP} {_DET} .+)",
    re.I,
)

_DAYNAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_WHEN = (
    r"(?P<when>every (?:other |single )?(?:[a-z]+ )?(?:days?|weeks?|months?|years?|fortnight|"
    rf"mornings?|afternoons?|evenings?|nights?|weekend|{_DAYNAME})"
    r"(?: (?:morning|afternoon|evening|night))?(?: at (?:[0-9][0-9:.]*(?: ?[ap]\.?m\.?)?|[a-z]+"
    r"(?: o'clock)?))?|each (?:day|week|morning|evening|night|month)|on (?:" + _DAYNAME + r")s"
    r"(?: and (?:" + _DAYNAME + r")s)?|(?:once|twice|three times) a (?:day|week|month|fortnight)"
    r"|daily|weekly|at (?:night|bedtime)|in the (?:mornings|evenings|afternoons)|with (?:my |me )?"
    r"(?:breakfast|lunch|dinner|tea|supper|meals?)|before (?:bed|breakfast)|after (?:breakfast|"
    r"lunch|dinner|tea|supper|meals))"
)
_ROUTINE_VERBS = (
    r"(?P<verb>take|have|go to|go|do|see|visit|ring|call|phone|walk|feed|water|watch|"
    r"play|get|attend|meet|use|check|wash|clean|change|put on|listen to|read|hear from)"
)
_ROUTINES_EN = [
    # I take my blood pressure tablets every morning / I go to the lunch club on Tuesdays
    re.compile(
        r"\b(?:i|we) (?:usually |always |normally |generally |still |now )?"
        rf"{_ROUTINE_VERBS} (?:my |the |our |a |an )?{_THING},? {_WHEN}\b",
        re.I,
    ),
    # every Tuesday I go to the lunch club
    re.compile(
        rf"(?:^|, ){_WHEN},? (?:i|we) (?:usually |always |normally )?{_ROUTINE_VERBS} "
        rf"(?:my |the |our |a |an )?{_THING}(?:$|[,.;!?])",
        re.I,
    ),
]

_LIKES_EN = re.compile(
    r"\bi (?P<how>(?:really |do |absolutely |just )?(?:love|adore|like|enjoy)|(?:really )?"
    r"(?:can't stand|cannot stand|hate|dislike|don't like|do not like|can't abide)|am fond of|"
    r"'m (?:very )?fond of|'m partial to|am partial to) "
    r"(?P<thing>(?:a |an |my |the )?[a-z'’ -]{3,40}?)"
    r"(?:$|[,.;!?]| (?:in the|of an?|at|every|with|on|when|too|very much|so much)\b)",
    re.I,
)
_NOT_LIKED = re.compile(
    r"^(?:it|that|this|you|him|her|them|to|the idea|when|how|what|being|having|going|"
    r"getting|the way|the thought|a lot|it's|its)\b|\b(?:you|him|her|them|me)$"
)


#: Words after a place that are not part of it: "on the hall table now".
_TRAILING = re.compile(
    r"(?:\s+(?:now|again|for now|at the moment|today|as usual|i think|just in case|for safe "
    r"keeping|for safekeeping))+$",
    re.I,
)


def _clause(text: str) -> str:
    """``text`` up to the end of its clause."""
    m = _CLAUSE_END.search(text)
    return (text[: m.start()] if m else text).strip()


_DETS = ("my", "the", "our", "a", "an")


def _thing(raw: str, keep_case: bool = False) -> str | None:
    """A thing as said, without "my" / "the" / "a" (unless ``keep_case``: a liking keeps
    "a cup of Earl Grey" as said)."""
    words = raw.replace("’", "'").split()
    while words and words[0].lower() in ("my", "the", "our", "a", "an") and not keep_case:
        words = words[1:]
    first = words[1 if len(words) > 1 and words[0].lower() in _DETS else 0].lower() if words else ""
    if not words or len(words) > 5 or first in _NOT_NAMES_LOWER:
        return None
    if first in ("i", "it", "he", "she", "they", "we", "you", "that", "this", "one"):
        return None
    return " ".join(words) if keep_case else " ".join(words).lower()


def _english(text: str) -> list[Mention]:
    out: list[Mention] = []
    for pattern, free in _PEOPLE_EN:
        for m in pattern.finditer(text):
            if re.search(r"\b(?:i was|i am|i'm|i used to be)\s*$", text[: m.start()], re.I):
                continue  # "when I was a girl called Maggie": the speaker, not someone else
            name = m.group("name")
            if mention := _person(m.group("role").strip(), name, free):
                out.append(mention)
    if not any(m.subject == "doctor" for m in out) and (found := _DOCTOR_EN.search(text)):
        on_screen = re.search(r"\b(?:film|programme|show|who|telly|tv)\b", text, re.I)
        on_screen = on_screen or _THEIR_DOCTOR.search(text)  # "my daughter's doctor is …"
        if found["name"] not in _NOT_NAMES and not on_screen:
            out.append(Mention("doctor", NAME, f"Dr {found['name']}"))
    for pattern in _PLACES_EN:
        for m in pattern.finditer(text):
            place = _TRAILING.sub("", _clause(m.group("place")))
            thing = _thing(m.group("thing"))
            if thing and canonical_role(thing) is None and not _NOT_PLACES.search(place.lower()):
                out.append(Mention(thing, PLACE, place))
    for pattern in _ROUTINES_EN:
        for m in pattern.finditer(text):
            thing = _thing(m.group("thing"))
            if thing and not re.search(r"\b(i|it|you)\b", thing):
                when = m.group("when").strip()
                out.append(Mention(thing, m.group("verb").lower(), when[:1].lower() + when[1:]))
    for m in _LIKES_EN.finditer(text):
        thing = _thing(m.group("thing"), keep_case=True)
        if thing is None or _NOT_LIKED.search(thing.lower()):
            continue
        how = m.group("how").lower()
        if re.search(r"stand|hate|dislike|don't|not|abide", how):
            feel = "dislike"
        else:
            feel = next((w for w in ("love", "adore", "enjoy", "like") if w in how), "like")
            feel = "love" if feel == "adore" else feel
            if "fond" in how or "partial" in how:
                feel = "like"
        out.append(Mention(thing, LIKE, feel))
    return out


# --- Chinese ----------------------------------------------------------------------------

_ZH_ROLE_ALT = "|".join(sorted(ROLES_ZH, key=len, reverse=True))
_ZH_NAME = r"(?P<name>[\u4e00-\u9fffA-Za-z]{1,4})"
_ZH_NAME_STOP = re.compile(
    r"(今年|已经|在|是|了|呢|啊|吧|呀|他|她|它|也|都|很|每|去|来|和|跟|的).*$"
)
#: What follows a name said right after its role (我孙子小军在…, 我老伴秀兰走了…).
_ZH_AFTER_NAME = r"在|是|走|去|来|今年|已经|上|也|都|就|又|还|说|他|她|[，,。！]|$"
#: Words that follow a role and are no name: 我儿子明天来.
_ZH_NOT_NAMES = set(
    "明天 今天 昨天 刚才 每天 现在 以前 后天 前天 最近 天天 一直 总是 经常 不在 不是 今年".split()
)
_PEOPLE_ZH = [
    # 我老伴叫老王 / 我孙子的名字叫小明 / 我家小狗叫旺财
    re.compile(rf"我(?:的|家|们家)?(?:那个|那只|那条)?(?P<role>{_ZH_ROLE_ALT})(?:的名字)?(?:叫做|叫|名叫|是叫)(?!我|你){_ZH_NAME}"),
    # 我孙子小军在北京上大学 / 我老伴秀兰走了三年了: the name right after the role
    re.compile(rf"我(?:的|家)?(?P<role>{_ZH_ROLE_ALT})(?P<name>(?![在是走去来也都就又还说他她今明昨已上前每天叫名])[\u4e00-\u9fff]{{2,3}}?)(?={_ZH_AFTER_NAME})"),
    # 我的医生是王医生
    re.compile(rf"我(?:的|家)?(?P<role>{_ZH_ROLE_ALT})(?:是)(?P<name>[\u4e00-\u9fff]{{1,2}}(?:医生|大夫))"),
    # 小明是我孙子
    re.compile(rf"(?:^|[，,。；])(?P<name>[\u4e00-\u9fff]{{2,3}}?)(?:也|都|就)?是我(?:的)?(?P<role>{_ZH_ROLE_ALT})(?:$|[，,。！；])"),
    # 去接妞妞放学，她是我外孙女: a pet name (妞妞, 小军, 阿明) said, then who they are
    re.compile(rf"(?P<name>([\u4e00-\u9fff])\2|[小阿][\u4e00-\u9fff])[^，,。；]{{0,12}}[，,](?:她|他)(?:也|就)?是我(?:的)?(?P<role>{_ZH_ROLE_ALT})(?:$|[，,。！；])"),
]  # fmt: skip
_ZH_LOC = r"(?:上面|里面|下面|旁边|边上|后面|前面|那儿|那里|上|里|下|边|中|内|口)"
_PLACES_ZH = [
    # 我的眼镜在桌子上 / 钥匙放在门口的鞋柜里了
    re.compile(
        rf"(?:^|[，,。；]|我的|我)(?P<thing>(?!我|你|他|她|把)[\u4e00-\u9fff]{{1,5}}?)(?:放|搁|收)?在"
        rf"(?P<place>[\u4e00-\u9fff]{{1,12}}?{_ZH_LOC})(?:了|呢|啊)?(?:$|[，,。！；])"
    ),
    # 钥匙我搁在鞋柜上了
    re.compile(
        rf"(?:^|[，,。；])(?P<thing>(?!我|你|他|她)[\u4e00-\u9fff]{{1,4}}?)我(?:都|就|还|又)?(?:放|搁|收|藏)(?:在|到)"
        rf"(?P<place>[\u4e00-\u9fff]{{1,12}}?{_ZH_LOC})"
    ),
    # 我把钥匙放在抽屉里了
    re.compile(
        rf"把(?:我的)?(?P<thing>[\u4e00-\u9fff]{{1,5}}?)(?:放|搁|收|藏)(?:在|到)"
        rf"(?P<place>[\u4e00-\u9fff]{{1,12}}?{_ZH_LOC})"
    ),
]
_ZH_WHEN = (
    r"(?P<when>(?:每天|天天|每晚|每早|每个?(?:星期|礼拜|周)[一二三四五六日天]?|每个?月|每逢[^，,。]{1,4})"
    r"(?:早上|上午|中午|下午|晚上|饭后|饭前|睡前)?(?:[一二三四五六七八九十两\d]+点(?:半)?)?)"
)
_ROUTINES_ZH = re.compile(
    rf"我?{_ZH_WHEN}(?:都|要|会|得|按时)?(?P<verb>吃|喝|去|做|看|打|量|上|练)"
    r"(?P<thing>[\u4e00-\u9fff]{1,8}?)(?:$|[，,。！；了])"
)
_LIKES_ZH = re.compile(
    r"我(?P<how>最喜欢|很喜欢|挺喜欢|特别喜欢|喜欢|最爱|爱|不喜欢|讨厌)(?P<verb>吃|喝|看|听|玩|做)?"
    r"(?P<thing>[\u4e00-\u9fff]{1,8}?)(?:$|[，,。！；了])"
)


def _chinese(text: str) -> list[Mention]:
    out: list[Mention] = []
    for pattern in _PEOPLE_ZH:
        for m in pattern.finditer(text):
            name = (
                _ZH_NAME_STOP.sub("", m.group("name"))
                if not m.group("name").endswith(("医生", "大夫"))
                else m.group("name")
            )
            if len(name) < 2 or name in ROLES_ZH or name in _ZH_NOT_NAMES:
                continue
            role = ROLES_ZH[m.group("role")]
            out.append(
                Mention(name, RELATION, role) if is_many(role) else Mention(role, NAME, name)
            )
    for pattern in _PLACES_ZH:
        for m in pattern.finditer(text):
            thing = m.group("thing").removeprefix("的")
            if thing and thing not in ROLES_ZH and not thing.endswith(("我", "你")):
                out.append(Mention(thing, PLACE, m.group("place")))
    for m in _ROUTINES_ZH.finditer(text):
        out.append(Mention(m.group("thing"), m.group("verb"), m.group("when")))
    for m in _LIKES_ZH.finditer(text):
        feel = "dislike" if m.group("how") in ("不喜欢", "讨厌") else "like"
        out.append(Mention((m.group("verb") or "") + m.group("thing"), LIKE, feel))
    return out


# --- the whole reading ------------------------------------------------------------------

_QUESTION = re.compile(
    r"\?|？|^\s*(?:(?:oh|so|um|and|fay)[ ,]+)*(?:what|who|where|when|which|how|why|do|does|"
    r"did|is|are|was|were|can|could|would|will|should|shall|have|has)\b|吗|什么|啥|谁|哪|"
    r"几点|几号|多少|怎么|(?:呢|么)\s*[。！]?$",
    re.I,
)
_NOT_TOLD = re.compile(
    r"\b(?:if|whether|wonder|maybe|perhaps|might|don't know|do not know|can't remember|"
    r"cannot remember|forgot|forgotten|dreamt|dreamed|imagine|pretend|suppose)\b|(?:如果|要是|"
    r"假如|不记得|忘了|不知道|梦见)",
    re.I,
)


def mentions(text: str) -> list[Mention]:
    """The facts ``text`` (the person's own words) states about their life, in order,
    without repeats; none for a question, a wish or a doubt ("if my glasses were…")."""
    text = re.sub(r"\b(Dr|Mr|Mrs|Ms|St)\.", r"\1", " ".join(text.split()))
    if not text or _NOT_TOLD.search(text):
        return []
    out: list[Mention] = []
    for sentence in re.split(r"(?<=[.!?。！？；;])\s*", text):
        if not sentence or _QUESTION.search(sentence):
            continue
        found = _chinese(sentence) if re.search(r"[\u4e00-\u9fff]", sentence) else []
        found += _english(sentence)
        out += found
    for m in _FOUND_AGAIN.finditer(text):  # "Where did I put my glasses… oh, here they are, on …"
        thing, place = _thing(m.group("thing")), _TRAILING.sub("", _clause(m.group("place")))
        if thing and canonical_role(thing) is None and not _NOT_PLACES.search(place.lower()):
            out.append(Mention(thing, PLACE, place))
    seen: set[tuple[str, str]] = set()
    unique = []
    for m in out:
        key = (m.subject.casefold(), m.predicate.casefold())
        if key not in seen and m.subject and m.object:
            seen.add(key)
            unique.append(m)
    return unique


def note(
    memory: MemoryPort, username: str, text: str, now: float | None = None
) -> list[dict[str, Any]]:
    """Write the facts ``text`` states as the person's own (blocking: a worker thread).
    Returns each write's result (``Facts.assert_fact``'s)."""
    from fayd.memory.facts import Facts
    from fayd.memory.provenance import HUMAN

    found = mentions(text)
    if not found:
        return []
    facts, stamp = Facts(memory), time.time() if now is None else now
    return [
        facts.assert_fact(
            m.subject, m.predicate, m.object, username, HUMAN, SOURCE, scope="user", now=stamp
        )
        for m in found
    ]
