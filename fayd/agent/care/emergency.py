"""Emergencies, found before anything else and never by the LLM: a fall, not getting up,
chest pain, not breathing, a stroke's signs, bleeding, a burn, fire or gas, too many pills, a
call for help — in English and in
Chinese. Recall comes first: patterns catch the ways people say it, and the meaning
(nearest emergency exemplar, MiniLM) catches the rest; the patterns of harmless sayings ("I
fell for his jokes", "help yourself to the biscuits") are taken out of the sentence first,
so they never alarm, while the rest of it still can ("I fell asleep in the chair and now I
can't get up")."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from fayd.agent.care.passed import without_passed
from fayd.agent.language.phrases import MEDICINE
from fayd.embedding import EmbedderLike

# What is said in an emergency, by kind. Matched on normalize()d text (lower case).
_WHO = r"(i|i've|i'm|i have|he|she|he's|she's|they|mum|mom|dad|mother|father|grandma|grandpa|nan|gran|my (husband|wife|partner|mum|mom|mother|dad|father|son|daughter|friend|neighbour|neighbor|brother|sister)|(mr|mrs|ms|miss) \w+|\w+)"
_EN = {
    "fall": [
        rf"\b{_WHO}\s*('s|'ve|has|have|just|had)?\s*(just )?(fallen|fell|had a (bad |nasty |little )?(fall|tumble|spill)|taken a (bad |nasty )?(fall|tumble)|took a (bad )?tumble|gone over|(gone|went) down(?! (to|into|the|a|for|town|there|with|south|by)\b)|keeled over|slipped (and|over|on|in)|tripped (and|over (the|a|my|on)))",
        r"\b(broken|broke|cracked|hurt|done|done in) (my|his|her) (hip|wrist|arm|leg|ankle|ribs?|shoulder|back)\b",
        r"\b(fell|fallen|came|come|rolled) (out of|off) (bed|the bed|the chair|my chair|the stairs|the ladder)\b",
        r"\b(i('ve| have)?|he|she) (lost|have lost) (my|his|her) (footing|balance)\b",
        r"\b(my|his|her) legs? (gave way|went|have gone|has gone|went from under|gone from under|buckled)\b"
        r"(?! (a bit |all |a little )?(wobbly|shaky|like jelly|to jelly|jelly|funny|stiff|tingly))",
        r"\b(can't|cannot|can not|couldn't|unable to|can't seem to) (get|stand|pick (myself|himself|herself)|pull (myself|himself|herself)) ?(myself |himself |herself )?up\b",
        r"\b(i'm|i am|i've been|i have been|lying|stuck|down|sitting|been) (here )?on the (floor|ground|bathroom floor|kitchen floor|landing|stairs)\b",
        r"\b(hit|banged|knocked|cracked) (my|his|her) head\b",
        r"\bon the floor and\b",
        r"\b(can't|cannot) reach (the|my) (phone|button|alarm)\b",
        r"\b(collapsed|passed out|fainted|blacked out|keeled over)\b",
        r"\b(stuck|trapped) (in|on) (the )?(bath|bathtub|tub|floor|toilet|loo)\b",
        r"\b(can't|cannot|can not) get (myself |himself |herself )?(out of|up out of) (the |my )?(bath|bathtub|tub)\b",
    ],
    "chest_pain": [
        r"\b(pain|pains|tight|tightness|pressure|crushing|squeezing|heavy|heaviness|burning|weight|elephant)\b.{0,30}\b(chest|heart)\b",
        r"\b(chest|heart)\b.{0,20}\b(hurts?|hurting|aches?|aching|pain|tight|heavy|crushing|pounding|racing)\b",
        r"\bclutching (my|his|her) (chest|heart)\b",
        r"\b(heart attack|angina)\b",
        r"\bpains? (down|in) (my|his|her) (left )?arm\b",
    ],
    "breathing": [
        r"\b(can't|cannot|can not|couldn't|hardly|struggling to|trouble|difficult(y)? to|hard to|unable to) breath(e|ing)?\b",
        r"\b(can't|cannot) (catch|get) (my|his|her) breath\b",
        r"\b(can't|cannot) get (enough )?air\b",
        r"\bbreathing('s| is| has)? (gone )?(all )?(wrong|bad|funny|strange|very fast)\b",
        r"\b(short|out) of breath\b",
        r"\b(i'm|i am|he's|she's|he is|she is) (choking|gasping|wheezing)\b",
        r"\bgasping for (air|breath)\b",
        r"\binhaler (isn't|is not|not|won't|doesn't) (working|help)",
        r"\b(turning|gone|going) blue\b",
    ],
    "stroke": [
        r"\b(my|his|her) (face|mouth|lip|eye)\b.{0,20}\b(droop|drooping|droops|drooped|lopsided|one-sided|fallen|numb|twisted|gone funny)\b",
        r"\b(slurr(ed|ing)|talking (funny|strangely|nonsense|gibberish)|words (are )?(all )?(jumbled|muddled|coming out wrong|wrong)|can't (get|find) (my|his|her) words|can't speak properly)\b",
        r"\b(can't|cannot|couldn't|can not) (move|feel|lift|raise|use) (my|his|her) (arm|leg|hand|side|left|right)\b",
        r"\b(arm|leg|side|hand|face)('s|s)? (is |feels |has |have |went |gone )?(all )?(gone )?(numb|weak|dead|limp|floppy|heavy)\b",
        r"\bsudden(ly)? (weakness|numbness|confusion|can't)\b",
        r"\b(a|had a|having a) stroke\b",
    ],
    "bleeding": [
        r"\bblood (everywhere|all over|won't stop|is pouring|pouring)\b",
        r"\b(bleeding|blood)\b.{0,30}\b(won't stop|will not stop|can't stop|doesn't stop|for (an|two|half an) hour|a lot|badly|heavily|everywhere)\b",
        r"\b(won't|will not|can't|cannot) stop (the )?bleeding\b",
        r"\b(i'm|i am|he's|she's) (badly )?bleeding\b",
        r"\b(lots|pool|loads) of blood\b",
        r"\b(cut|sliced|gashed|slashed) (my|his|her)\b.{0,30}\b(blood|badly|deep|open)\b",
    ],
    "burn": [
        r"\b(burnt|burned|scalded) (myself|my \w+|his \w+|her \w+)\b.{0,30}\b(badly|bad|blisters?|skin)\b",
        r"\bbadly (burnt|burned|scalded)\b",
    ],
    "fire": [
        r"\b(house|kitchen|room|pan|chip pan|oven|toaster|curtains?|sofa|bin|cooker|hob|microwave|"
        r"bedroom|lounge|living room|bed|heater|telly|tv)('s| is| has)? (caught |on )fire\b",
        r"\bcaught fire\b|\bthere's a fire\b|\bfire in the (house|kitchen|bedroom|lounge|hall)\b",
        r"\bsmoke (pouring|billowing|belching|coming|streaming|rolling|puffing) (out|from|under|up)\b|"
        r"\b(smoke|fire) alarm('s| is| has)? (going|gone) off\b|\bsmoke\b.{0,40}\balarm's going\b|"
        r"\b(full of|filling with|filling up with) smoke\b|\bsmoke (everywhere|coming (out|from|under)|in the "
        r"(house|kitchen|room|hall|bedroom|lounge))\b",
    ],
    "gas": [
        r"\b(smell|smells|smelling|whiff|stink|stinks) (of )?gas\b|\bgas leak\b|\bleaking gas\b",
    ],
    "medicine": [
        r"\b(taken|took|swallowed|had) (too many|too much|double|a double dose|all) (of )?(my |the )?"
        rf"({MEDICINE})\b",
        rf"\b(taken|took) (my |the )?({MEDICINE}) twice\b",
    ],
    "help": [
        r"\b(feel|feeling|i'm|i am) (really |very |so |terribly |all )?(faint|like (i'm|i am) "
        r"going to (faint|pass out|collapse))\b",
        r"\b(someone|somebody|a man|a woman|a stranger|people|they're|he's)\b.{0,15}\b(trying to "
        r"(get|break) in|breaking in|broken in|broke in)\b|\b(burglars?|intruders?)\b",
        r"^((oh|please|help|me|somebody|someone|anybody|anyone|quick|quickly|now)[ ,!]*)*help([ ,!]*(me|please|somebody|someone|anybody|anyone|quick|quickly|now|help))*$",
        r"\b(call|ring|phone|get|fetch|send for|dial) (for )?(an |the )?(ambulance|paramedics|999|911|112|000|triple zero|emergency services|the emergency)\b",
        r"\b(call|ring|dial) (999|911|112|000|120|triple zero)\b",
        r"\bi need (an )?(ambulance|a doctor (now|quickly|urgently))\b",
        r"\b(i need|need|send|get|fetch) (urgent |some )?help\b(?! (with|to|for|finding|choosing|getting|doing|making))",
        r"\b(send|get|fetch) (someone|somebody|anyone|anybody)\b",
        r"\b(it's|this is) an emergency\b",
        r"\bi('m| am) (in (terrible|real|big|serious) trouble|badly hurt|hurt badly|really hurt)\b",
        r"\bhelp,? i('m| am) (hurt|in pain|scared|frightened|dying|stuck)\b",
        # "A funny turn", "come over all funny", dizzy: feeling unwell, said without an
        # emergency (fayd.agent.care.symptoms); faint and a bad turn stay here.
        r"\b(had|having) a (bad|nasty) turn\b",
        r"\b(come|came|gone|went) (over )?(all )?(faint)\b",
        r"\b(i|he|she) (don't|doesn't|do not) feel right\b.{0,40}\b(frightened|scared|help|someone|ambulance)\b",
        r"\b(very|really|terribly) (poorly|unwell|ill)\b.{0,30}\b(help|someone|send|ambulance|doctor)\b",
        r"\bsomething('s| is) (very |really |badly )?wrong with (me|him|her)\b",
        r"\b(not|isn't|is not|he's not|she's not) (answering|responding|breathing|waking up)\b",
        r"\b(won't|will not) (wake up|respond|answer me)\b|\bunconscious\b|\bstopped breathing\b",
    ],
}
_ZH = {
    "fall": [
        r"(摔|跌|滑|绊).{0,2}(倒|一跤|了一跤|下来|伤|在地上)",
        r"(从床上|从椅子上|从楼梯上).{0,3}(掉|摔|滚)下来",
        r"(起不来|爬不起来|站不起来|动不了|倒在地上|坐在地上起不来)",
        r"(头|脑袋).{0,2}(磕|撞)(破|伤|了)",
        r"(晕倒|昏倒|晕过去|昏过去)",
    ],
    "chest_pain": [
        r"(胸口|胸|心口|心脏).{0,6}(疼|痛|闷|压|堵|难受|绞)",
        r"(心口|胸口).{0,4}像.{0,6}(石头|压着|压了)",
        r"心脏病(发|犯)",
    ],
    "burn": [r"(烫伤|烧伤)(了|得很厉害)"],
    "fire": [r"(着火|失火|起火了|冒烟了|屋里全是烟)"],
    "gas": [r"(煤气|燃气|天然气)(泄漏|漏了|味)|闻到(煤气|燃气)"],
    "medicine": [r"(吃多了|多吃了|吃了两遍|吃了两次|重复吃了)(药|的药)?|药吃(多|重)了"],
    "breathing": [r"(喘不(过|上)气|呼吸困难|透不过气|憋得慌|上不来气|没法呼吸|噎住|喘不动)"],
    "stroke": [
        r"(中风|嘴歪|口歪|眼歪|半边(身子|脸|身体))",
        r"(手|脚|胳膊|腿).{0,2}(麻(?!利)|没劲|动不了|不听使唤|抬不起来)",
        r"(说话|讲话).{0,2}(说不清(楚)?(?!不楚)|不清楚|含糊|不利索)|口齿不清|说不出话|说不清(楚)?话",
    ],
    "bleeding": [
        r"(血流不止|一直(在)?流血|流了(好|很)多血|止不住.{0,2}血|血.{0,4}(止不住|一直流|流个不停)|好多血|很多血)"
    ],
    "help": [
        r"(救命|快来人|来人啊|叫救护车|打120|打一二零|帮帮我$|^帮帮我|我需要帮助$|快帮帮我|不省人事|叫不醒|没(有)?反应|没气了|昏迷)"
    ],
}
# Harmless sayings that look like one: cut out of the sentence before the patterns above.
_SAFE_EN = [
    r"\bfell (for|in love|asleep|behind|apart|through|out with|silent|ill|pregnant|short|flat|head over heels)\b",
    r"\bhead over heels\b",
    r"\b(fallen|fell) (asleep|in love|behind|out(?! of)|for)\b",  # "fell out of bed" is a fall
    r"\bslipped (a|the|my) (note|letter|card|mind|memory)\b|\bslipped (my mind|away|out)\b|\bslipped in a\b",
    r"\btripped over (my|his|her) (words|tongue)\b",
    r"\bhelp (yourself|themselves|himself|herself)\b",
    r"\bhelp (me |us )?(with|find|to|choose|understand|remember|decide|write|read|call|get|make|cook|fix|set|spell|work out|sort)\b",
    r"\b(can|could|would|will) you (please )?help\b(?! (me|us)?[ ,]*(please|quick|now|i'm|i've)?$)",
    r"\b(helpful|helping|helped|helps)\b",
    r"\bchest of drawers\b",
    r"\b(breathe a sigh|breath of fresh air|under (my|his|her) breath|hold (my|your) breath|breathtaking|take (my|your) breath away)\b",
    r"\b(stroke|stroking|stroked) (the|my|a|her|his) (cat|dog|hair|horse|pony|rabbit)\b",
    r"\bstroke of (luck|genius|midnight)\b",
    r"\bheart (goes out|sank|melted|broke|was broken|is broken|of gold|in my mouth|set on)\b|\bbroken heart\b",
    r"\b(dying to|dying for|kill for|killing me|could kill|bored to death|scared to death|died laughing)\b",
    r"\b(nearly|almost|about|practically|near enough|fair) (had|have) a heart attack\b",
    r"\bbleeding (obvious|cold|freezing|nuisance|hell|useless)\b",
    r"\bhit the (shops|hay|road|sack|town|jackpot)\b",
    r"\b(laughing|laughed|laugh|rolling|giggling)\b.{0,30}\b(floor|breathe|breath|can't stop)\b",
    r"\b(fell|fall|falling|nearly fell|rolled) (about|off my chair|over) (laughing|with laughter)\b",
    r"\b(in stitches|fall about|fell about|falling about|split my sides|wet myself laughing)\b",
    r"\b(leaves|prices|price|temperature|snow|rain|shares|pound|stocks?)\b.{0,20}\b(fell|fall|fallen|falling|dropped)\b",
    r"\b(watch|watched|film|movie|programme|show|book|story|read|soap|episode|series)\b.*\b(fell|fall|heart attack|stroke|collapsed)\b",
    r"\b(the|a) (tent|cake|soufflé|shelf|bridge|wall|roof) (collapsed|fell)\b",
    # Things that fall over: "the vase fell over", "my bike went over".
    r"\b(the|a|my|that|this) (\w+ )?(vase|cup|mug|glass|plate|bottle|picture|photo|frame|lamp|"
    r"tree|fence|bin|bike|box|pot|plant|book|shelf|clock|ornament|chair|pan|jar|tin|glasses|"
    r"specs|keys|phone|remote|purse|wallet|ring|hat|coat|lid)s? (has |had "
    r"|just )?(fallen|fell|gone over|went over|slipped|tipped)\b",
    r"\b(put|turn|switch|light|lit|light up) (the |on the )?(gas )?fire\b|\bfire (is |was )?on\b",
    r"\b(cooking|cook|cooker|hob|oven|bill|gas bill|gas man|gas meter|gas fire|gas boiler) .{0,10}gas\b(?! leak)",
]
_SAFE_ZH = [
    r"(笑|乐)得.{0,6}(喘不(过|上)气|肚子疼|起不来)",
    r"(笑|乐)(晕|死|岔气|抽|翻|倒)(了|过去)?|(笑|乐)得.{0,6}(晕|死|岔气|倒|肚子都疼)",
    r"(爱上|倒是|摔跤比赛|跌停|跌了|股票|价格|不清不楚|麻利|麻将|心疼|看小品|电视里|电影里)",
    r"(小狗|狗|小猫|猫|鸟|鸡).{0,8}(摔|跌|滑)",
]
# A time long past, or a request to remember or be reminded: not an emergency now.
_REMOTE = re.compile(
    r"\b(last (year|winter|summer|spring|autumn|month|christmas)|years ago|months ago|when i was (young|younger|a (child|girl|boy|lad|lass))|when (he|she|i|we|they) (was|were) (\d+|young|little|a (child|kid|boy|girl))|used to|back in the)\b"
    r"|^(please )?(remember|remind me|don't let me forget|make a note|note that)\b"
    r"|(去年|前年|年轻时|小时候|以前|那年|上个月|提醒我|记住|记一下)"
)
_EXEMPLARS = {
    "fall": [
        "I fell over and I can't get up",
        "I've had a fall",
        "I'm lying on the floor and can't move",
        "my husband has fallen down the stairs",
        "I've gone down in the garden and can't get back up",
    ],
    "chest_pain": [
        "I have a terrible pain in my chest",
        "my chest feels tight and heavy",
        "there's a crushing feeling in my chest",
    ],
    "breathing": ["I can't breathe properly", "I'm gasping for air", "I can't get my breath"],
    "stroke": [
        "my face is drooping and my arm is weak",
        "I can't speak properly suddenly",
        "one side of my body has gone numb",
    ],
    "bleeding": ["I cut myself and the bleeding won't stop", "there's blood everywhere"],
    "help": [
        "help me please it's urgent",
        "please call an ambulance",
        "I need help right now",
        "somebody please come and help me",
        "she's collapsed and isn't responding",
        "he won't wake up",
        "I'm really frightened, something is wrong with me",
    ],
}
_HARMLESS = [
    "I fell for his jokes",
    "help yourself to the biscuits",
    "can you help me with the crossword",
    "my heart goes out to them",
    "I stroked the cat",
    "what time is it",
    "tell me a story",
    "I feel a bit tired today",
    "the leaves have fallen off the tree",
    "I'm dying to see my grandson",
    "I laughed so hard I cried",
    "my knees ache a little in the cold",
    "I had a lovely walk today",
    "remind me to call the doctor",
]
#: Meaning alone calls an emergency this close to an exemplar, and clearly closer to one than
#: to every harmless saying.
MEANING_MIN = 0.62
MEANING_MARGIN = 0.08


@dataclass(frozen=True)
class Emergency:
    kind: str  # one of KINDS
    score: float
    via: str  # "words" or "meaning"


#: When a sentence says several things ("I fell and there's blood everywhere"), the most
#: particular kind is the one given.
KINDS = (
    "chest_pain",
    "breathing",
    "stroke",
    "bleeding",
    "burn",
    "fire",
    "gas",
    "medicine",
    "fall",
    "help",
)


def _compile(table: dict[str, list[str]]) -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, re.compile(p)) for kind in KINDS for p in table.get(kind, [])]


class EmergencyDetector:
    def __init__(self, embedder: EmbedderLike | None = None) -> None:
        self.embedder = embedder
        self._words = _compile(_EN) + _compile(_ZH)
        self._safe = [re.compile(p) for p in _SAFE_EN + _SAFE_ZH]
        self._kinds: list[str] = []
        self._vectors: np.ndarray | None = None
        self._harmless: np.ndarray | None = None
        if embedder is not None:
            texts = [(k, t) for k, ts in _EXEMPLARS.items() for t in ts]
            self._kinds = [k for k, _ in texts]
            self._vectors = embedder.embed([t for _, t in texts])
            self._harmless = embedder.embed(_HARMLESS)

    def detect(self, text: str, vector: np.ndarray | None = None) -> Emergency | None:
        """``text`` normalized (fayd.agent.language.text.normalize); ``vector`` its
        embedding, when the caller has it."""
        if _REMOTE.search(text):
            return None  # "I fell last winter", "remind me about my fall": not now
        # A trouble said to be over ("my chest pain has gone") is no emergency; the rest of
        # the sentence still counts (fayd.agent.care.passed).
        rest = without_passed(text)
        for pattern in self._safe:
            rest = pattern.sub(" ", rest)
        for kind, pattern in self._words:
            if pattern.search(rest):
                return Emergency(kind, 1.0, "words")
        if rest != text or self._vectors is None or self._harmless is None or vector is None:
            return None  # a harmless saying or a trouble passed, and nothing alarming besides
        sims = self._vectors @ vector
        best = int(np.argmax(sims))
        harmless = float(np.max(self._harmless @ vector))
        if sims[best] >= MEANING_MIN and sims[best] - harmless >= MEANING_MARGIN:
            return Emergency(self._kinds[best], float(sims[best]), "meaning")
        return None
