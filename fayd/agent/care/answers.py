"""The answer to a question fayd asked, read in code (never by the model): yes / no / later
("Did you take them?"), fine / not fine ("Is all well?") and, after a fall, hurt / not hurt
("Are you hurt anywhere?"), in English and Chinese.

Each reader gives None when the words are no answer ("what time is it?", a new request): the
turn then goes on as usual and the question stays open. Words that name an emergency
("no, I've fallen", "I can't breathe") are never read as an answer: the router raises it.

The patterns are general on purpose (a feeling word after "I'm", a pain word not turned round
by "not"), so phrasings nobody wrote down are read too; what they cannot place is None."""

from __future__ import annotations

import re
from functools import cache

from fayd.agent.care.emergency import EmergencyDetector
from fayd.agent.care.passed import said_passed
from fayd.agent.care.symptoms import symptom as detect_symptom
from fayd.agent.language.text import normalize

#: Longer than this, the words are telling something else, not answering.
MAX_WORDS = 16
#: What comes before an answer and says nothing ("oh", "well, dear", 嗯…).
_LEAD = r"^((oh|well|um|umm|er|erm|ah|ahh|hmm|fay|dear|love|honestly|actually|yes|no)[ ,]+)*"


@cache
def _emergencies() -> EmergencyDetector:
    return EmergencyDetector()  # words only: no embedder, no model


def emergency_in(said: str) -> str | None:
    """The kind of emergency the words name (``said`` normalized), by words alone."""
    found = _emergencies().detect(said)
    return found.kind if found is not None else None


_ASKED = re.compile(
    r"^(what|when|where|who|how|why|which)('s|'re| is| are| do| does| did| time| day| can|"
    r" should| will| would| about| much| many| long)\b"
    r"|^(please )?(can|could|would|will) you\b|^(please )?(tell|remind|set|turn|play|call|put|"
    r"show|switch|wave|stop)\b|^(几点|现在几点|今天|请|帮我|你能|能不能|给我)"
)


def _prepared(text: str, max_words: int = MAX_WORDS) -> str | None:
    """The words normalized, or None when they cannot be an answer: empty, long, a question
    or a request of the person's own ("what time is it?", "can you turn it up")."""
    said = normalize(text)
    if not said or len(said.split()) > max_words or (len(said) > 60 and " " not in said):
        return None
    if text.rstrip().endswith(("?", "？")) or _ASKED.search(said):
        return None
    return said


# --- yes / no / later ---------------------------------------------------------------------

_LATER = re.compile(
    r"\b(later|in a (minute|min|bit|while|moment|mo|tick|sec|second|jiffy)|not now|"
    r"(remind|ask|tell) me (again )?(later|in|after|at)|in (half an hour|an hour|a few minutes|"
    r"(a |\d+ |two |five |ten |fifteen |twenty )(few )?min(ute)?s)|give me (a|two|five|ten|fifteen|twenty|\d+) (minute|min)s?|"
    r"after (lunch|dinner|breakfast|tea|supper|my (lunch|dinner|breakfast|tea))|snooze|"
    r"hang on|hold on|just a (minute|moment|sec|second)|shortly|when i've (had|finished)|"
    r"once i've (had|eaten|finished))\b"
    r"|(等一下|等一会|等会|待会|一会儿|稍后|晚点|过会|等下|马上就|回头)"
)
# Said first (after the fillers): the answer itself.
_NO_FIRST = re.compile(
    _LEAD.replace("|yes|no)", ")")
    + r"(no|nope|nah|naw|not yet|not as yet|not just yet|not really|not at all|not today|never|i haven't|i have not|"
    r"i've not|i didn't|i did not|haven't|didn't|i forgot|i've forgotten|i don't think so|"
    r"afraid not|i'm afraid not|sadly not|no i)\b"
    r"|^(没有|还没|没吃|没|忘了|忘记了|不是|不用|不要|不对|不行|不)"
)
_YES_FIRST = re.compile(
    _LEAD.replace("|yes|no)", ")")
    + r"(yes|yeah|yea|yep|yup|aye|ya|i did|(?:i have|i've)(?= *$| (?:already|just|taken|done|had "
    r"(?:them|it|my|those|the)))|done|already|of course|certainly|"
    r"sure|surely|ok|okay|right|correct|that's right|indeed|absolutely|definitely|i think so|"
    r"i believe so|that i did|i certainly did|i sure did|all done|just did|just now|go on|"
    r"please do|go ahead)\b"
    r"|^(吃了|吃过了|已经|是的|是啊|是|对|对的|对啊|嗯|好了|吃啦|好的|好(?![点多些])|行|可以|没错|当然)"
)
_NO_ANYWHERE = re.compile(
    r"\b(forgot|forgotten|slipped my mind|haven't (taken|had)|didn't (take|have)|"
    r"not (taken|had) (them|it))\b|忘了|忘记|没吃"
)
# Anywhere in a short answer: the thing done.
_YES_ANYWHERE = re.compile(
    r"\b(i('ve| have)?|just) (already )?(taken|had|took|swallowed|done) (them|it|my|the|those|"
    r"these|all)\b|\b(took|taken|had) (them|it|those) (with|at|after|before|this|earlier)\b|"
    r"\ball taken\b|\b(took|taken) (them|it)\b"
    r"|(吃过|吃了|已经吃)"
)


def told_unwell(said: str) -> bool:
    """The words tell of feeling unwell (a symptom the router hears), not yes or no."""
    return detect_symptom(said) is not None


def yes_no(text: str) -> str | None:
    """ "yes", "no", "later" — or None when the words are none of these."""
    said = _prepared(text)
    if said is None or emergency_in(said) is not None or told_unwell(said):
        return None  # "I've had a funny turn": news of their own, for the router
    if _LATER.search(said):
        return "later"
    if _NO_FIRST.search(said) or _NO_ANYWHERE.search(said):
        return "no"
    if _YES_FIRST.search(said) or _YES_ANYWHERE.search(said):
        return "yes"
    return None


# --- fine / not fine ----------------------------------------------------------------------

# A good word said with "not" in it: taken out first, so "not too bad" is not "not good".
_FINE_IDIOMS = re.compile(
    r"\b(not (too |so |that |half |all that )?bad|can't complain|cannot complain|"
    r"mustn't grumble|musn't grumble|no complaints|no worries|no problems?|nothing wrong|"
    r"nothing's wrong|nothing the matter|never (been )?better|couldn't be better|"
    r"don't worry|no need to worry|not a bother|not to worry)\b"
    r"|不错|不用担心|别担心|没什么不好|不要紧"
)
_NOT_FINE = re.compile(
    r"(\bnot|n't|\bno longer)( (really|very|so|too|that|all that|feeling|quite|at all|"
    r"feel|be))* (fine|ok|okay|good|well|great|grand|right|myself|alright|all right|brilliant|"
    r"wonderful|clever|hot|marvellous|up to much|my best|the best)\b"
    r"|\b(not really|not at all|under the weather|poorly|unwell|ill|sick|rough|awful|terrible|"
    r"dreadful|rotten|lousy|bad|badly|worse|dizzy|faint|wobbly|weak|shaky|in pain|hurts?|"
    r"hurting|aching|achy|sore|help|off colou?r|out of sorts|low|down in the dumps|miserable|"
    r"fed up|confused|muddled|can't|cannot|struggling|worried|scared|frightened|queasy|"
    r"nauseous|sick|breathless|tired out|exhausted|not so hot|so-so|so so|could be better|"
    r"been better|seen better days)\b"
    r"|不(太|怎么|大|是很|很)?(好|舒服|行|对劲|得劲)|难受|头晕|晕|疼|痛|不行|糟|没力气|不怎么样|一般般|很累|累坏|病了|发烧"
    r"|不太行|不大好|救命|害怕|心慌|恶心"
)
_FINE = re.compile(
    r"\b(i'?m|i am|i feel|feeling|i'm feeling|i'm doing|doing|all|everything'?s?|everything is"
    r"|it's all|all's|we're|things are)( (very|really|quite|pretty|perfectly|absolutely|just|"
    r"all|so|much|a lot|fairly|keeping|now))* (fine|ok|okay|good|well|grand|great|alright|"
    r"all right|dandy|champion|lovely|better|tip top|tip-top|peachy|spot on|chipper|"
    r"right as rain|fit as a fiddle|in fine fettle|on top of the world|marvellous|"
    r"wonderful|brilliant|super|splendid|tickety-boo|hunky-dory|as right as rain)\b"
    r"|^((pretty|very|really|quite|fairly|reasonably|rather|so|jolly) )*(fine|ok|okay|good|"
    r"grand|great|alright|all right|all good|all well|all is well|"
    r"very well|quite well|perfectly well|right as rain|never better|much better|better now|"
    r"surviving|bearing up|same as ever|not bad|yes|yeah|yep|aye|sure|absolutely|fine thanks|"
    r"fine thank you|lovely|champion|tip top|spot on)\b"
    r"|\bFINE\b"
    r"|我没事|没事|我很好|很好|还好|挺好|不错|还行|还可以|好着呢|都好|一切都好|没问题|好多了|放心|"
    r"^(好|行|嗯|是|是的|对)"
)
_BARE_NO = re.compile(
    _LEAD.replace("|yes|no)", ")")
    + r"((no|nope|nah|not really),? )?(no|nope|nah|not really|i'm not|i am not)$|^(不|没有)$"
)


def wellbeing(text: str) -> str | None:
    """The answer to "Is all well?" / "Are you all right?": "fine", "not_fine" or "later",
    or None when the words are no answer. A good word with a bad one ("fine, but my knee
    hurts") is not fine: the caregivers being told once too often is the lesser harm."""
    said = _prepared(text)
    if said is None:
        return None
    if emergency_in(said) is not None:
        return None  # the router raises the emergency itself
    if _LATER.search(said) and not _FINE.search(said):
        return "later"
    rest = _FINE_IDIOMS.sub(" FINE ", said)
    if _NOT_FINE.search(rest.replace("FINE", "")) or _BARE_NO.search(said):
        return "not_fine"
    if _FINE.search(rest):
        return "fine"
    return None


# --- after a fall: hurt / not hurt --------------------------------------------------------

_BODY = (
    r"(head|hip|hips|back|leg|legs|knee|knees|ankle|ankles|wrist|wrists|arm|arms|shoulder|"
    r"side|neck|foot|feet|hand|hands|elbow|ribs?|bottom|bum|face|chin|nose|eye|toe|toes|"
    r"finger|fingers|thumb|shin|thigh|tailbone|chest|tummy|stomach)"
)
_PAIN = (
    r"(hurt|hurts|hurting|pain|pains|painful|ache|aches|aching|achy|sore|throbbing|bruised?|"
    r"broken|broke|sprained|twisted|swollen|swelling|agony|injured|injury|cut|grazed|"
    r"killing me|smarting|stinging|tender|damaged|banged|bumped|bashed|scratch|scratched)"
)
#: "nothing's broken", "it doesn't hurt", "no harm done", "I'm not injured".
_NO_PAIN = re.compile(
    rf"(\b(not|no|nothing|nothing's|nothing is|never|without)\b|n't)( [\w']+){{0,3}} "
    rf"({_PAIN}|harm|damage|bones?)\b( done)?"
)
_HURT = re.compile(
    rf"\b{_PAIN}\b|疼|痛|受伤|伤了|伤到|伤着|肿|骨折|断了|扭了|扭到|崴|破了|撞到|磕到|摔伤"
)
#: Hurt, when nothing says otherwise: "yes", "a bit", "my wrist", 有点.
_HURT_LIKELY = re.compile(
    rf"\bmy {_BODY}\b|^(yes|yeah|yep|aye|i think so|a (little )?bit|a little|somewhat|"
    r"it does|i am)\b|^(是的|是|有|有点|嗯)"
)
_STUCK = re.compile(
    r"\b(can't|cannot|can not|couldn't|unable to|can't seem to|not able to|too (weak|heavy) to)"
    r"( \w+){0,2} (get|stand|move|get off|pick myself|pull myself|lift myself)\b"
    r"|\b(stuck|still|down|lying|lay|laid)\b.{0,16}\bon the (floor|ground|carpet|rug|landing|"
    r"stairs|lino|tiles)\b"
    r"|起不来|站不起来|动不了|爬不起来|起不了"
)
_UP = re.compile(
    r"\b(got|get|gotten|managed to get|i'm|i am|i've got|back|been|now) (myself )?(back )?up\b"
    r"|\bup (now|again|on my feet)\b|\bon my feet\b|\b(stood|standing) up\b"
    r"|\b(sat|sitting|back|i'm|i am) (up )?(in|on) (my|the|a) (chair|bed|sofa|settee|couch)\b"
    r"|(站|爬|坐)?起来了|坐(好|下|在椅子上|在床上)了|站好了|起来啦"
)
_NOT_HURT = re.compile(
    _LEAD.replace("|yes|no)", ")")
    + r"(no|nope|nah|not really|i don't think so|i'm not|no i'm not|i am not|not hurt)\b"
    r"|\b(i'm|i am|i feel|feeling)( (quite|perfectly|absolutely|just|all))* (fine|ok|okay|"
    r"alright|all right|unhurt|good|well|in one piece)\b|\bunhurt\b|\bin one piece\b"
    r"|\b(shaken|shook|shocked|startled|a fright|winded|a shock|embarrassed|"
    r"(only|just) my (pride|dignity|ego))\b"
    r"|^(fine|ok|okay|all right|alright)\b|\bNOPAIN\b"
    r"|没事|不要紧|没关系|没有|^没|还好|吓了一跳|吓坏了|吓着了|只是吓|受惊|^不"
)
_UNSURE = re.compile(
    r"\b(not sure|don't know|dunno|can't tell|couldn't tell|can't say|couldn't say|hard to "
    r"(say|tell)|not certain|no idea)\b|不知道|不清楚|说不清|不太确定|不确定"
)
#: Kinds the fall's own answer may name: more of the same fall ("I've hurt my hip").
_SAME_FALL = frozenset({"fall", "help"})


def hurt(text: str) -> str | None:
    """The answer to "Are you hurt anywhere?" after a fall: "hurt", "stuck" (cannot get
    up), "up" (back on their feet), "not_hurt", "unsure" — or None when the words are no
    answer, or name another emergency (bleeding, the chest, breathing: the router's)."""
    said = _prepared(text, max_words=30)  # a fall is told at length ("I was reaching …")
    if said is None:
        return None
    kind = emergency_in(said)
    if kind is not None and kind not in _SAME_FALL:
        return None
    rest = _NO_PAIN.sub(" NOPAIN ", said)
    rest = re.sub(r"没(有)?(受伤|伤到|伤着|伤|摔伤|摔坏|骨折|事)|不(疼|痛)", " NOPAIN ", rest)
    unsure = _UNSURE.search(said) is not None
    if _HURT.search(rest.replace("NOPAIN", "")) and not unsure:
        return "hurt"
    if _STUCK.search(rest):
        return "stuck"
    if _UP.search(rest):
        return "up"
    if unsure:
        return "unsure"
    if _NOT_HURT.search(rest):
        return "not_hurt"
    if said_passed(said):
        return None  # "my chest cold's much better": no answer to the fall's question
    return "hurt" if _HURT_LIKELY.search(rest) else None


# --- after any other emergency ----------------------------------------------------------

# The trouble was less than it looked ("it was only crumbs", "false alarm", 虚惊一场).
_NOTHING_MUCH = re.compile(
    r"\b(false alarm|panic over|all clear|nothing (serious|to worry about|much)|"
    r"(it was|it's|it were) (only|just)|(it's|it is|i'm|i am|we're) (alright|all right|ok|okay|"
    r"fine|safe)|under control|(gone|put it) out|eas(ing|ed)|easier|settl(ing|ed)|calm(ing|ed|er)|"
    r"passing|passed|wearing off)\b"
    r"|虚惊|误会|没事|不要紧|没关系|好点了|好多了|好些了|缓过来|不(疼|痛|闷|晕)了|灭了"
)
_WORSE = re.compile(
    r"\b(worse|getting bad|more and more|spreading|can't breathe|cannot breathe|passing out|"
    r"going to faint)\b|越来越|更(疼|痛|难受|厉害|闷)|加重|受不了"
)


def since_alarm(text: str) -> str | None:
    """The person's next words after an emergency other than a fall (whose own question is
    read by ``hurt``): "better" (eased, a false alarm), "worse", or "said" (anything else
    they tell of it); None for a question, a request, or another emergency (the router's).
    Read only once the router found nothing else in the words (docs/understanding.md)."""
    said = _prepared(text, max_words=30)
    if said is None:
        return None
    if _WORSE.search(said):
        return "worse"
    if emergency_in(said) is not None:
        return None  # a new emergency, or the same one said again: raised anew
    if said_passed(said) or _NOTHING_MUCH.search(said):
        return "better"
    return "said"


def eased(text: str) -> str | None:
    """After feeling unwell was told (no question asked): "better" ("it's passing off
    now") or "worse"; None for anything else (the router's)."""
    found = since_alarm(text)
    return found if found in ("better", "worse") else None
