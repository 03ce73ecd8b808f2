"""Feeling unwell, said without an emergency: dizziness, being unsteady, "one of my funny
turns", a muddled head, no appetite, no sleep, pain, feeling sick, weak or poorly — in
English and Chinese. The router asks after the emergency words (they come first: "I feel
dizzy and I've fallen" is a fall) and before small talk, so "my knee is killing me" gets the
offer of help and a care record, not only a kind word (docs/understanding.md).

First by patterns (:func:`symptom`), per clause, on the person's own words: a clause that
says the trouble has passed (fayd.agent.care.passed), "not" before the words ("I'm
not dizzy"), someone else's trouble ("my granddaughter has a headache"), a question to fayd
and a figure of speech ("dizzy with excitement", "a pain in the neck") are none. Then, for
what the patterns missed, by the nearest example of symptoms.toml (English by MiniLM,
Chinese by characters: :class:`SymptomsByMeaning`), close and clear of the "none" examples.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fayd.agent.care.passed import clauses, said_passed, without_passed
from fayd.agent.language.intents import IntentClassifier
from fayd.agent.language.text import normalize
from fayd.agent.smalltalk.kinds import _REQUEST
from fayd.embedding import EmbedderLike

#: The kinds, in the order they are tried (the more particular first).
KINDS = (
    "funny_turn",
    "dizzy",
    "unsteady",
    "confused",
    "sick",
    "appetite",
    "sleep",
    "weak",
    "pain",
    "unwell",
)
_BODY = (
    r"(knees?|back|lower back|hips?|legs?|feet|foot|hands?|shoulders?|neck|head|joints?|wrists?|"
    r"ankles?|elbows?|fingers?|toes?|tooth|teeth|ears?|eyes?|tummy|stomach|belly|side|ribs|"
    r"bones|arthritis|sciatica|gout|bunion|bottom|thighs?|calf|calves|shins?|throat)"
)
_HURTING = (
    r"(aching|ache|aches|achy|sore|hurts?|hurting|throbbing|throbs|pounding|thumping|splitting|"
    r"killing me|murdering me|"
    r"giving me (gyp|jip|grief|hell|trouble|bother|jip)|playing (me )?up|acting up|in agony|"
    r"agony|stiff and sore|burning|stabbing|shooting)"
)
_FEEL = r"(feel|feels|feeling|felt|i'm|i am|i've been|i have been|been|am|getting|i get)"
_I = r"(i'm|i am|i feel|i felt|feeling|i've been|i've gone|i went|i go|i get|i got|i'm getting|i'm going|i keep going|i've come|i came|i've got)"
_SO = r"(a (bit|little|tad) |so |very |really |all |quite |terribly |ever so |proper )?"
_EN: dict[str, list[str]] = {
    "funny_turn": [
        r"\b(funny|queer|peculiar|strange|fainting|wobbly|bad|nasty|little) (turns?|spells?|dos?|"
        r"episodes?)\b",
        r"\bone of (my|me|those|them|these) (\w+ )?(turns|spells|dos|episodes)\b",
        r"\b(i've|i have|i|i'm|i am)( just| suddenly| all of a sudden)? (come|came|gone|went|"
        r"going|coming) (over )?(all )?(funny|queer|peculiar|strange|woozy|unnecessary|peculiar)\b",
        r"\bcome over (all )?(funny|queer|peculiar|strange|woozy|unnecessary)\b",
    ],
    "dizzy": [
        r"\b(dizzy|dizziness|giddy|giddiness|light-?headed|lightheadedness|woozy|wooziness|"
        r"vertigo|swimmy|muzzy-?headed)\b",
        r"\b(room|world|everything|head|ceiling)('s| is| keeps| was| has been| started| goes)? "
        r"(spinning|going round|swimming|whirling|tilting)\b",
        r"\b(head|room)\b.{0,15}\b(spins?|spun|swims)\b",
        r"\bseeing (stars|spots)\b|\beverything (went|goes|has gone|keeps going) (grey|black|"
        r"fuzzy|blurry)\b",
    ],
    "unsteady": [
        rf"\b{_I} {_SO}(wobbly|unsteady|off balance|off kilter|wonky|doddery|trembly|shaky)\b",
        r"\b(wobbly|unsteady|shaky|wonky|doddery) on my (feet|legs|pins|pegs)\b|\bjelly legs\b",
        r"\b(i|i've|i have|i'm|i am|i keep)( just)? (came|come|gone|went|go|going|turned|turn) "
        r"(over )?(all |a bit |ever so )?(wobbly|shaky|"
        r"unsteady|trembly|doddery)\b",
        r"\blegs?\b.{0,20}\b(jelly|wobbly|rubbery|cotton wool|shaky|unsteady|weak|funny|"
        r"like they('ll| will| might) give way|not my own)\b",
        r"\b(keep|kept|keeps|been|i'm) (nearly )?(losing my balance|stumbling|swaying|"
        r"staggering|tottering|wobbling|going over on my ankle)\b",
        r"\bcan't (stand|walk|keep) (straight|steady|properly|my balance|upright)\b",
        r"\blegs? (won't|wouldn't|don't|can't|couldn't) (hold|carry|take|keep) me\b",
        r"\bbalance('s| is| has been| feels)? (off|gone|bad|awful|terrible|poor|all over)\b",
    ],
    "confused": [
        rf"\b{_I} {_SO}(muddled|befuddled|in a muddle|in a fog|foggy|fuzzy|woolly|addled|"
        r"all at sea|not with it|mixed up|all of a muddle|discombobulated|confused|disoriented|"
        r"disorientated|dopey|not all there|not quite with it|in a daze|dazed)\b"
        r"(?! (about|over|by|with|as to|on)\b)",
        r"\b(keep|kept|keeps|i) (getting|going|get) (all |a bit |in a )?(muddled|confused|mixed up|"
        r"muddle|in a muddle)\b|\bin a (terrible |right |bit of a |real )?muddle\b"
        r"(?! (with|over|about|on)\b)",
        r"\bcan't (think|see) (straight|clearly|properly)\b|\bcan't (get|put) my thoughts\b|"
        r"\bcan't (keep|hold) (a thought|my thoughts|track)\b",
        r"\b(head|brain|mind)('s| is| feels| has been)? (all )?(foggy|fuzzy|woolly|cloudy|muddled|"
        r"mush|like cotton wool|in a fog|not working|all over the place|scrambled|in a whirl)\b"
        r"|\bbrain fog\b",
        r"\b(don't|didn't) know where i (am|was)\b|\bforgot where i was\b|"
        r"\bcan't remember (what day it is|where i am|what i was doing|how i got here)\b",
    ],
    "sick": [
        rf"\b{_FEEL}( \w+)? (sick|nauseous|nauseated|queasy|bilious|green about the gills)\b"
        r"(?! (of|and tired|to death|with (worry|nerves)))",
        r"\b(i've|i have|i) (been|was) (sick|throwing up|vomiting)\b|\b(throwing up|vomiting|"
        r"being sick|nausea|retching)\b",
        r"\b(upset|dodgy|funny|bad|gippy|poorly) (stomach|tummy)\b|\b(stomach|tummy)('s| is)? "
        r"(upset|churning|bad|funny|dodgy|turning)\b|\b(diarrh(o)?ea|the runs|runny tummy)\b",
    ],
    "appetite": [
        r"\b(i've|i have|i haven't|i've not|i have not) (not )?(been )?(eating|eaten) (much|properly|"
        r"a thing|anything|well)\b|\bnothing tastes( of anything| right| like anything)?\b",
        r"\b(no|lost my|lost me|off my|haven't got (an|much of an|any)|not much of an|poor|"
        r"haven't much of an|got no) appetite\b|\boff my (food|grub|dinners?)\b",
        r"\b(haven't|hasn't|not|didn't|don't|couldn't|can't|never) (\w+ )?(felt|feel|feeling|"
        r"fancy|fancied|face|faced|manage|managed|touch|touched|stomach|eat)( \w+){0,2} (like )?"
        r"(eating|food|a thing|a bite|a morsel|a mouthful|anything to eat|my (food|dinner|lunch|"
        r"breakfast|tea|meals?|supper))\b(?!.{0,30}\b(full|stuffed|big (lunch|breakfast)))",
        r"\b(haven't|hasn't|not|didn't) (eaten|had a bite|had anything( to eat)?|had a thing|"
        r"eaten a thing)( \w+){0,3} (all day|since|for (two|three|four|a couple of|\d+) days)\b",
        r"\b(eating like a bird|picking at my food|can't face food|food doesn't appeal|"
        r"everything tastes of nothing|not hungry at all|never hungry these days)\b",
    ],
    "sleep": [
        r"\b(didn't|couldn't|can't|cannot|could not|did not|haven't been able to|not been able "
        r"to|can never) (get (off )?to sleep|get (any|much|a wink of) sleep|sleep|go to sleep|"
        r"drop off|nod off)\b(?! in\b)",
        r"\b(didn't|never|haven't|hardly|barely|scarcely|not) (\w+ )?(slept|sleep|sleeping)"
        r"( a wink| well| properly| at all| much| for (days|nights))?\b(?! in\b)",
        r"\b(insomnia|sleepless|tossing and turning|tossed and turned|lay awake|lying awake|"
        r"awake (all|half|most of) (the )?night|up (half|all|most of) the night|bad night|"
        r"rotten night|terrible night|awful night|rough night|poor night|not a good night|"
        r"(kept|keeps|keeping) me (awake|up)( all night| half the night)?|"
        r"broken sleep|kept waking( up)?|keep waking( up)?"
        r"|woke up (\w+ ){0,3}times|wide awake at (\w+ )?(\d|two|three|four|five))\b",
    ],
    "weak": [
        rf"\b{_FEEL}( \w+)? {_SO}(weak|feeble|weak as a kitten)\b(?! (at the knees|tea|coffee))",
        r"\bno (strength|go|get up and go|oomph|puff) (in (me|my \w+)|left|at all)\b|"
        r"\bnot got the strength\b|"
        r"\b(lost|losing) (all )?my strength\b",
    ],
    "pain": [
        rf"\b{_BODY}\b.{{0,30}}\b{_HURTING}",
        rf"\b{_HURTING} (\w+ )?{_BODY}\b",
        r"\b(headache|migraine|toothache|earache|backache|stomach ?ache|tummy ?ache|bellyache|"
        r"sore (throat|head|back|feet|knees?|hips?)|sciatica|cramps?|twinges?|a crick in)\b",
        r"\b(a|the|some|these|this) (\w+ )?pains? (in|down|up|across|around) (my|me)\b",
        r"\b(in (a lot of |so much |terrible |awful |such |constant |some |real )?pain|"
        r"(terrible|awful|dreadful) pain)\b",
        r"\bhurts? (when|if|every time) i\b|\bhurts to (walk|stand|move|bend|sit|lift|swallow)\b",
    ],
    "unwell": [
        rf"\b{_BODY}\b.{{0,24}}\b(swelling|swelled|swollen|puffy|puffed up|blown up)\b",
        r"\b(don't|do not|didn't) feel (very |too |so |at all |all that |quite )?(well|good|great|"
        r"right|myself|too clever|so clever|a hundred percent|100 percent)\b",
        rf"\b{_FEEL}( \w+)? (poorly|unwell|ill|rough|off colour|out of sorts|under the weather|"
        r"grotty|ropey|ropy|peaky|crook|proper poorly|not (too |so |very )?(good|great|well|"
        r"right|clever))\b",
        r"\b(feel|feeling|felt)( \w+){0,2} (queer|peculiar|funny|off|not quite right)\b"
        r"(?! (about|that|when|how|seeing|being|saying|asking|to)\b)",
        r"\b(feel|feeling|felt)( \w+){0,2} (awful|terrible|dreadful|lousy|rotten|grim|ghastly)\b"
        r"(?! (about|for|that|when|because|at|to|leaving|saying)\b)",
        r"\b(under the weather|not (feeling )?(too |so |very |all that )?(well|clever|a hundred "
        r"percent)\b(?! (kept|known|off|done|made|paid|liked))|coming down with something|"
        r"(got|have|running|with) a (high |bit of a |slight )?temperature|feverish|a fever|"
        r"hot and cold|shivery|the shivers)\b",
    ],
}
_ZH: dict[str, list[str]] = {
    "funny_turn": [r"(老毛病又犯了|又犯病了|那个病又犯了|又发作了|犯晕病)"],
    "dizzy": [
        r"(头晕|头昏|发晕|晕乎|晕晕|晕得|犯晕|好晕|很晕|有点晕|直晕|天旋地转|眼前发黑|眼冒金星|"
        r"头重脚轻|晕眩|眩晕|脑袋发晕|一阵晕)(?!车|船|倒|过去)",
    ],
    "unsteady": [
        r"(站不稳|站不住|走不稳|走路不稳|腿(发|有点|直)?软|脚(发|有点)?软|腿脚(发)?软|晃晃悠悠|"
        r"摇摇晃晃|打晃|脚(底下)?(老是|总是|有点|直)?发飘|走路(老是|总是|有点|直|一直)?发飘|腿没劲|"
        r"腿打颤|腿发抖|身子发飘)",
    ],
    "confused": [
        r"(犯糊涂|犯迷糊|脑子(不清楚|乱|转不过来|一团浆糊|不好使|昏昏沉沉|一片空白|糊涂)|"
        r"(我|俺)(有点|好|很|今天|老是|总是)?(糊涂|迷糊)|晕头转向|搞不清(楚)?(自己在哪|东南西北|今天几号)|"
        r"(不知道|想不起来)(自己|我)在哪)|老忘事|(总|老|老是|总是)(忘事|忘东西)|一转身就忘|"
        r"记性(越来越|特别|太|很)?(差|不好)",
    ],
    "sick": [r"(恶心|想吐|吐了|反胃|拉肚子|腹泻|闹肚子|胃里(不舒服|难受|翻)|犯恶心)"],
    "appetite": [
        r"(没(有|什么|啥)?胃口|胃口不好|胃口差|吃不下(饭|东西)?(?!.{0,3}饱)|不想吃(饭|东西)|"
        r"什么都不想吃|没食欲|不觉得饿|一天(都)?没吃|没怎么吃(东西|饭)?|吃不香)"
    ],
    "sleep": [
        r"(睡不着|失眠|没睡(好|着|踏实)|一宿没睡|一夜没睡|整夜没睡|睡不好|睡不踏实|醒了好几(回|次)|"
        r"翻来覆去|半夜醒|睁眼到天亮)"
    ],
    "weak": [
        r"(浑身没劲|身上没劲|全身没劲|一点劲(儿)?都没有|没力气|浑身无力|全身无力|浑身乏力|"
        r"四肢无力|虚得很|身子(发)?虚|有气无力|浑身发软|软绵绵)"
    ],
    "pain": [
        r"((?<!里)(?<!心)头|腰|腿|膝盖|关节|脖子|肩膀|肩|背|后背|手|脚|牙|胃|肚子|屁股|胯|髋|"
        r"颈椎|腰椎|胳膊|手腕|脚踝|嗓子|喉咙|眼睛|耳朵)"
        r".{0,4}(疼|痛(?!快)|酸痛|酸疼)",
        r"(浑身|全身)(疼|痛|酸痛|酸疼)|腰酸背痛|疼得(厉害|受不了|睡不着|要命)|疼死(我)?了",
    ],
    "unwell": [
        r"(腿|脚|脚踝|脚脖子|手|脸|眼睛)(有点|有些|都|又)?(肿|浮肿)|一按一个坑|"
        r"((?<!心里)(?<!心)不舒服|身体不好|(?<!心里)(?<!心)难受|生病了|病了|不得劲|发烧|发热|"
        r"(身体|身子)不(太)?(舒服|对劲|好))"
    ],
}
_COMPILED = [(k, re.compile(p)) for k in KINDS for p in _EN.get(k, []) + _ZH.get(k, [])]

# Figures of speech and troubles that are no symptom of the person's.
_NOT_A_SYMPTOM = re.compile(
    r"\b(dizzy|giddy|head('s| is)? (spinning|swimming|in a whirl)|light-?headed|my head spins)"
    r" (with|from|at) (excitement|joy|happiness|delight|love|glee|all (the|this|these|that))\b"
    r"|\b(a|real|such a|right) pain in the (neck|backside|bum|arse|butt)\b"
    r"|\b(is|are|was|'s) (a|such a|a real) (pain|headache)\b(?! (in|down|up|across|around) (my|me)\b)"
    r"|\b(sick|tired) (of|and tired)\b|\bsore (loser|point|spot|thumb)\b|\bheadache of (a|an)\b"
    r"|\b(confused|muddled|mixed up) (about|by|over|with)\b"
    r"|\b(killing me|in stitches|cracking me up)\b.{0,20}\b(laugh|laughing|funny|jokes?)\b"
    r"|\b(laugh|laughing|laughed|giggling)\b.{0,30}\b(hurts?|ache|aching|sore)\b"
    r"|\bdying to\b|\bbrain of\b|\bblind date\b|\bstiff (drink|upper lip)\b"
    r"|\b(the|my|a|this|that|our) (tv|telly|computer|phone|car|machine|program|programme|"
    r"washing machine|boiler|clock|plant|dog|cat|budgie)('s| is| has)? (been )?(sick|poorly|dead)"
    r"|(晕车|晕船|晕机|心疼|头疼的事|真让人头疼|让人头疼|伤脑筋)"
)
# Another person's trouble: "my granddaughter has a headache", "she can't sleep".
_PERSON = (
    r"(husband|hubby|wife|partner|mum|mother|mom|mam|dad|father|son|daughter|brother|sister|"
    r"friend|pal|mate|dog|cat|grandson|granddaughter|grandchild|grandkids|grandchildren|nan|"
    r"gran|granny|grandad|grandpa|grandma|kids|children|child|neighbour|neighbor|auntie|aunt|"
    r"uncle|cousin|nephew|niece|boyfriend|girlfriend|lodger|carer|nurse|doctor|vicar|postman|"
    r"milkman|man|woman|lady|chap|bloke|baby|boy|girl|family|everyone|everybody|people|they|"
    r"he|she|him|her|them|his|their|friends|neighbours)"
)
_OTHER_EN = re.compile(
    rf"\b{_PERSON}('s| is| has| was| were| are| had| seems| looks| said| says| told| keeps| "
    r"gets| got| feels| felt| can't| couldn't| didn't| hasn't| isn't| been|\b)"
    r"|\b(mrs|mr|ms|miss|dr) \w+\b"
)
_OTHER_ZH = re.compile(
    r"(他|她|他们|她们|它|老伴儿?|老头子?|老太婆|丈夫|妻子|爱人|妈妈|妈|母亲|爸爸|爸|父亲|儿子|"
    r"女儿|闺女|哥哥|姐姐|弟弟|妹妹|朋友|孙子|孙女|外孙|外孙女|孩子|邻居|隔壁|人家|别人|狗|猫|"
    r"老(?![是毛寒了觉想这那犯不感做要会说在把跟也还])[\u4e00-\u9fff])"
)
#: Said of oneself: "I", 我, or a Chinese answer that opens with how one is (好多了，谢谢).
_ME = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|myself)\b|我|俺|^\s*(好点了|好多了|好些了|没事了|缓过来了)"
)
# A question to fayd about someone ("are you dizzy?") or advice asked for: not a symptom said.
_QUESTION = re.compile(
    r"\b(are|do|did|have|were|would|can|could|will) you\b|\b(what|which|how much|how many)\b"
    r".{0,30}\b(take|tablets?|pills?|medicine|dose|should)\b|\bshould i\b|\bis it (normal|bad|"
    r"serious|ok|okay)\b|\bwhat (causes|is|are) (\w+ )?(dizz|vertigo|pain|nausea)|"
    r"\bwhy (do|does|am|is) (people|it|old)\b|吃什么药|该吃|能吃|要不要吃|是不是(病|什么病)|"
    r"是什么病|你(头晕|累|疼|难受|不舒服|睡不着)|(哪|哪里|哪儿)(不舒服|疼|难受)"
)
# "Not" just before the words: "I'm not dizzy", "I didn't feel sick", 我没有头晕.
_NEGATED_EN = re.compile(
    r"\b(not|never|no longer|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|haven't|hasn't|"
    r"hardly ever|nothing)( \w+){0,2}\s*$"
)
_NEGATED_ZH = re.compile(r"(不|没|没有|不再|一点也不|一点都不|并不|从不)$")
# Asking in the same breath for the family to be told: "I feel dizzy, tell my daughter".
_TELL = re.compile(
    r"\b(tell|let|message|text|inform|warn|ring|phone|call|get)( \w+)? (my |the |our )?(family|"
    r"daughter|son|kids|children|carer|girl|boy|lad)\b|(告诉|通知|跟|给)(我的?)?(家里人|家人|"
    r"女儿|儿子|孩子|闺女)"
)


def _asks(text: str) -> bool:
    """A question or a request in the sentence (small talk's; a bare "please" is none). A
    question of what causes it ("is it my blood pressure?", 是不是血压闹的) is no request:
    the symptom is kept, and the answer names no cause."""
    text = _WHY_QUESTION.sub(" ", text)
    return bool(_QUESTION.search(text) or _REQUEST.search(re.sub(r"\bplease\b", "", text)))


def asks_cause(text: str) -> bool:
    """ "… is it my blood pressure?", 是不是血压闹的: what causes it, asked."""
    return bool(_WHY_QUESTION.search(text.lower()))


_WHY_QUESTION = re.compile(
    r"(?:是不是|会不会|是因为|难道是).{0,10}(?:闹的|引起的|造成的|的原因|的关系|的事|弄的|搞的)[吧吗呢？?]*$"
    r"|\b(?:is it|is that|could it be|might it be|would it be|do you think it's|is this) "
    r"(?:my|the|because of|down to|from) [\w ]{2,30}\??$"
)


@dataclass(frozen=True)
class Symptom:
    kind: str  # one of KINDS
    words: str  # the words that said it
    where: str = ""  # for pain: the body part, when the words name one
    via: str = "words"  # "words" or "meaning"
    score: float = 1.0
    #: The person asked in the same breath for their family to be told.
    tell: bool = False


def symptom(text: str) -> Symptom | None:
    """The person's own symptom in a normalized sentence, or None."""
    if _asks(text) and not _TELL.search(text):
        return None  # "my leg hurts, can you see if it'll rain": the request matters more
    # Even parts are clauses, odd ones the edges between them; a trouble passed is blanked.
    for clause in clauses(without_passed(text))[::2]:
        if not clause.strip() or _NOT_A_SYMPTOM.search(clause):
            continue
        found = _in_clause(clause)
        if found is not None:
            kind, match = found
            where = _where(match.group(0)) if kind == "pain" else ""
            return Symptom(kind, match.group(0).strip(), where, tell=bool(_TELL.search(text)))
    return None


# What may be said around "I'm much better" without saying anything else.
_AROUND = re.compile(
    r"\b(oh|well|yes|yeah|no|thanks|thank you|thank goodness|thank god|thankfully|now|fay|love|"
    r"dear|today|this morning|at last|really|"
    r"so|you know|ta|much|lots|a lot|loads)\b|[,.!?\s]|谢谢|啊|呀|了|现在|今天"
)
_TROUBLE = re.compile(
    r"\b(pain|pains|ache|aches|dizz\w*|breath\w*|chest|head\w*|knees?|back|hips?|legs?|tummy|"
    r"stomach|cough|sick\w*|nausea|temperature|fever|sleep\w*|appetite|wobbl\w*|balance)\b"
    r"|疼|痛|晕|喘|胸|头|腰|腿|咳|烧"
)


def better(text: str) -> bool:
    """The sentence says only that the person's own trouble is over or better ("I'm much
    better, the dizziness has passed", 我好多了): glad words, nothing recorded."""
    if _QUESTION.search(text) or without_passed(text) == text:
        return False
    if _AROUND.sub("", without_passed(text)).strip():
        return False  # something else is said as well
    passed = [c for c in clauses(text)[::2] if c.strip() and said_passed(c)]
    return any((_ME.search(c) or _TROUBLE.search(c)) and not _someone_else(c, "") for c in passed)


def _in_clause(clause: str) -> tuple[str, re.Match[str]] | None:
    for kind, pattern in _COMPILED:
        match = pattern.search(clause)
        if match is None:
            continue
        before = clause[: match.start()]
        if _NEGATED_EN.search(before) or _NEGATED_ZH.search(before):
            return None
        if _someone_else(before, match.group(0)):
            return None
        return kind, match
    return None


def _someone_else(before: str, words: str) -> bool:
    """Someone else's trouble: another person named before the words ("my granddaughter
    has a headache", 我孙女头疼) or in them ("one of her turns"), and no "I" after."""
    if re.search(r"\b(her|his|their)\b", words) and not _ME.search(words):
        return True
    named = [m.end() for m in _OTHER_EN.finditer(before)]
    named += [m.end() for m in _OTHER_ZH.finditer(before)]
    if not named:
        return False
    return not _ME.search(before[max(named) :] + " " + words)


_WHERE = re.compile(
    rf"\b{_BODY}\b|\b(head|tooth|ear|back|stomach|tummy|belly)ache\b|migraine|sciatica|throat|"
    r"((?<!心)头|腰|腿|膝盖|关节|脖子|肩膀|后背|背|手|脚|牙|胃|肚子|胳膊|嗓子|喉咙|眼睛|耳朵)"
)


def _where(words: str) -> str:
    found = _WHERE.search(words)
    if found is None:
        return ""
    part = found.group(0)
    return {"migraine": "head", "sciatica": "back"}.get(part, part.removesuffix("ache"))


EXAMPLES = Path(__file__).with_name("symptoms.toml")
#: The nearest example must be this close, and this much closer than the "none" examples
#: and any other kind (English: MiniLM cosine; Chinese: characters).
MIN_SCORE = {"en": 0.66, "zh": 0.5}
MIN_MARGIN = {"en": 0.05, "zh": 0.08}


class SymptomsByMeaning:
    """Symptoms the patterns missed, by the nearest example sentence."""

    def __init__(self, embedder: EmbedderLike, path: Path = EXAMPLES) -> None:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        examples = {
            kind: [normalize(p) for phrases in langs.values() for p in phrases]
            for kind, langs in data.items()
        }
        self.classifier = IntentClassifier(embedder, examples)

    def guess(self, vector: np.ndarray, text: str) -> Symptom | None:
        """The symptom of a normalized sentence (and its embedding), or None."""
        if _asks(text) or _NOT_A_SYMPTOM.search(text):
            return None
        if without_passed(text) != text:
            return None
        if re.search(r"\b(not|never|no longer|n't)\b|n't\b|不|没", text) or _someone_else(text, ""):
            return None
        guess = self.classifier.guess(vector, text)
        if guess.intent == "none" or guess.score < MIN_SCORE[guess.lang]:
            return None
        if guess.score - guess.runner_up_score < MIN_MARGIN[guess.lang]:
            return None
        return Symptom(guess.intent, text, via="meaning", score=guess.score)
