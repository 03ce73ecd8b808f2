"""The gate before the model: a question that asks what the 135M model cannot know never
reaches it (issue 21). Four kinds, English and Chinese, each a question frame around the
words that say what is asked — never a statement ("my hip aches in this weather", "I took my
tablets": those are small talk or facts, other stages):

- ``honest.reading``: a reading of the person's (blood pressure, oxygen, sugar, weight,
  temperature, heart rate): "what was my blood pressure yesterday?", 我血压多少;
- ``honest.advice``: doses, medicines, medical advice or a diagnosis: "should I take two
  now?", "can I take ibuprofen with my tablets?", "do I need to see a doctor?", 吃几片;
- ``honest.past``: the person's own past, which only they can have told: "what was the name
  of my first dog?", "where did I grow up?", 我在哪里长大的;
- ``info.offline``: the world today (weather, news, TV, sport, prices): "is Strictly on
  tonight?", "did England win?", 鸡蛋多少钱.

Readings and advice come before a cue that would take them wrongly ("what's my temperature"
is no weather question); a request ("remind me to take two tablets") is the cues' and never
the gate's. The skills that answer are in fayd/agent/honest/skill.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fayd.agent.clock.times import WEEKDAYS
from fayd.agent.language import phrases
from fayd.agent.language.phrases import FAMILY_ZH

#: A clause may open the question: "I forgot my tablets, should I take two now?".
_CLAUSE = r"(?:^|[,.;:!?]\s*|\b(?:so|but|and|then|or|now|well|oh|um|er)\s+)"
_FILL = r"(?:(?:so|oh|and|um|er|erm|well|fay|love|dear|now|hey|ok|okay|right|but|then|tell me|please)[, ]+)*"

# --- what is measured ---------------------------------------------------------------------
#: The sensors a word names (fayd/care: bp, spo2, heart_rate, temperature; weight and
#: glucose when a scale or a meter sends them).
READING_WORDS = {
    "bp": r"blood ?pressures?|bp|pressure",
    "spo2": r"oxygen(?: levels?| saturation| sats)?|o2(?: levels?)?|sats|saturations?|spo2",
    "glucose": r"(?:blood )?sugars?(?: levels?)?|glucose(?: levels?)?",
    "weight": r"weight",
    "temperature": r"temperature|temp",
    "heart_rate": r"heart ?rate|pulse|heart ?beat",
}
_READING = "(?:" + "|".join(f"(?P<{k}>{v})" for k, v in READING_WORDS.items()) + ")"
READING_ZH = {
    "bp": "血压|高压|低压",
    "spo2": "血氧(?:饱和度)?|氧饱和度|含氧量",
    "glucose": "血糖",
    "weight": "体重",
    "temperature": "体温",
    "heart_rate": "心率|心跳|脉搏",
}
_READING_ZH = "(?:" + "|".join(f"(?P<{k}>{v})" for k, v in READING_ZH.items()) + ")"
#: Whose reading: mine, or a household member's ("mum's") — the skill checks who may hear it.
_WHOSE = r"(?:my|me|(?P<who>[a-z]{2,20})'s)"
_NOT_MEDICINE = rf"(?! ?(?:{phrases.MEDICINE}|drugs?))"
_WHEN = (
    r"(?: (?:last|latest|morning|evening|night|most recent|newest|today's|yesterday's|"
    r"last night's|this morning's))?"
)
_READING_EN = [
    # "what was my blood pressure yesterday?", "how's my sugar?", "what's mum's oxygen?"
    rf"\b(?:what|how|how high|how low)(?:'s| is| was| were| are| has| have| did)? {_WHOSE}{_WHEN} "
    rf"{_READING}{_NOT_MEDICINE}\b(?! (?:go|going|went) (?:up|down|above|over|below|under))",
    # "was my blood pressure ok?", "is my sugar too high?", "has my pressure been high lately?"
    rf"\b(?:was|is|were|are|has|have|did) {_WHOSE}{_WHEN} {_READING}{_NOT_MEDICINE}"
    r"(?: reading| readings| level| levels)?(?: been)? (?:ok|okay|alright|all right|normal|high|"
    r"low|too|good|fine|bad|up|down|better|worse|raised|over|under|above|below|any|in|out|"
    r"looking|getting|going|still|very|a bit|so)\b",
    # "when did I last take my blood pressure?", "did I do my sugar this morning?"
    rf"\b(?:when|what time) did i (?:last )?(?:take|check|do|measure|test|have|get) my "
    rf"{_READING}{_NOT_MEDICINE}\b",
    rf"\b(?:did|have) i (?:already |just )?(?:take|taken|check|checked|do|done|measure|measured|"
    rf"test|tested) my {_READING}{_NOT_MEDICINE}\b",
    rf"\b(?:tell|give|read) me my{_WHEN} {_READING}{_NOT_MEDICINE}\b",
    rf"\bwhat (?:was|were|is|are|'s) (?:the |my )?(?:last |latest )?(?:{_READING}) readings?\b",
    r"\bwhat (?:did|does) (?:my|the) (?:cuff|monitor|machine|scales?|meter|oximeter|thermometer|"
    r"gadget|finger (?:thing|clip)|blood pressure (?:cuff|machine|monitor)) (?:say|read|show|give)\b",
    r"\b(?:how much|what) (?:do|did) i weigh\b|\bhow heavy (?:am|was) i\b",
    # "what was I told my oxygen was on Tuesday?", "what did the nurse say my pressure was?"
    rf"\bwhat\b.{{0,30}}\bmy {_READING}{_NOT_MEDICINE} (?:was|were|is|came to|read)\b",
    # "is that higher than Monday's?" (a reading just spoken of)
    r"^(?:(?:and|so|oh|well)[, ]+)*(?:is|was) (?:that|it) (?:any )?(?:higher|lower|better|worse|"
    r"up|down) (?:than|on|from)\b",
    # "did my blood pressure go up this week?", "has my sugar come down?"
    rf"\b(?:has|have|did|is|was|does) {_WHOSE}{_WHEN} {_READING}{_NOT_MEDICINE} (?:\w+ )?(?:go|gone|"
    r"went|going|been going|come|came|coming|got|get|getting|been) (?:up|down|higher|lower|"
    r"above|below|over|under|better|worse)\b",
    # "I've just done my blood pressure with the cuff. What did it say?"
    rf"\b(?:done|did|taken|took|checked|measured|tested) (?:my|me) {_READING}{_NOT_MEDICINE}\b.{{0,80}}"
    r"\bwhat (?:did|does|do|was|is|'s) (?:it|that|they|the reading|the number|the numbers?) ?"
    r"(?:say|read|show|come to|come out at|give)?\b",
]
_READING_EN_RE = [re.compile(p) for p in _READING_EN]
_ZH_ASK = "(?:多少|几|怎么样|怎样|咋样|如何|高不高|低不低|正常吗|正常不正常|正不正常|高吗|低吗|还好吗|好吗|好不好|是多少|多高|多低|吗|呢|？|\\?)"
_ZH_PEOPLE = f"(?P<who_zh>{FAMILY_ZH})"
_READING_ZH_RE = [
    # 我血压多少？我的体重是多少？昨天血压怎么样？妈妈今天血压正常吗？
    re.compile(
        rf"^(?:你说|你看|你帮我看看|帮我看看|你知道)?(?:我|我的|{_ZH_PEOPLE})?"
        rf"(?:今天|昨天|早上|上午|下午|晚上|最近|刚才|刚刚|刚|上次|最后一次|这几天)*"
        rf"(?:的)?(?:量的|测的)?{_READING_ZH}(?:读数|数值|值)?(?:是|有|量|测|量得|测得|量出来|测出来)?(?:的)?(?:是)?{_ZH_ASK}"
    ),
    # 我早上量了血压，多少来着？ 那昨天的血压呢？ 你说我血糖高不高？
    re.compile(
        rf"{_READING_ZH}(?!药|片|计|仪).{{0,12}}(?:多少|几|怎么样|咋样|如何|高不高|低不低|正常|高吗|低吗|"
        r"还好|好不好|呢|来着)"
    ),
    # 我今天量血压了吗？我测过血糖没有？
    re.compile(rf"我(?:今天|昨天|早上|刚才)?(?:量|测)(?:过|了)?{_READING_ZH}(?:了)?(?:吗|没|没有)"),
    re.compile(r"我(?:现在|今天)?(?:有)?(?:多重|多少斤|几斤|多少公斤|几公斤)"),
]

# --- medicines, doses, medical advice -----------------------------------------------------
#: Words for a medicine; drug names by their families' endings (amlodipine, ramipril,
#: atorvastatin, omeprazole, bisoprolol …).
_DRUG = (
    r"[a-z]{2,}(?:pril|sartan|olol|dipine|statin|formin|prazole|cillin|mycin|cycline|floxacin|"
    r"azepam|zolam|oxetine|pramine|triptan|lukast|gliptin|parin|farin|tidine|semide|thiazide|"
    r"isone|olone|oxine|adone|profen|etamol|codamol|phylline|gabalin|pentin)\b"
)
MEDICINE = (
    r"\b(?:tablets?|pills?|medicines?|medications?|meds|capsules?|doses?|dosage|insulin|"
    r"inhalers?|puffers?|eye ?drops|drops|patch(?:es)?|antibiotics?|pain ?killers?|"
    r"prescriptions?|injections?|jabs?|vitamins?|supplements?|paracetamol|ibuprofen|aspirin|"
    r"codeine|co-codamol|tylenol|advil|nurofen|anadin|warfarin|statins?|metformin|antacids?|"
    r"gaviscon|laxatives?|sleeping (?:pills?|tablets?)|water tablets?|steroids?|morphine|"
    r"tramadol|digoxin|thyroxine|levothyroxine|blood thinners?|mg|milligrams?|"
    rf"{_DRUG})"
)
_MEDICINE_RE = re.compile(MEDICINE)
#: Health words: what a question about a diagnosis or treatment is about.
HEALTH = (
    r"\b(?:pains?|aches?|aching|headaches?|migraines?|back|knees?|hips?|chest|cough(?:ing)?|"
    r"colds?|flu|rash|lumps?|bruis(?:e|es|ing)|swell(?:ing|ed)|swollen|infections?|fever|"
    r"temperature|sore|throat|constipat\w*|diarrh?o?ea|bladder|uti|blood pressure|"
    r"pressure|sugars?|diabet\w*|heart|kidneys?|liver|eyes?|ears?|skin|feet|foot|legs?|"
    r"ankles?|arms?|stomach|tummy|bowels?|breath(?:ing|less)?|cholesterol|arthritis|gout|"
    r"dizz(?:y|iness)|giddy|dementia|insomnia|heartburn|indigestion|piles|wounds?|cuts?|"
    r"burns?|stings?|bites?|blisters?|nausea|sick|vomit\w*|bleed\w*|itch\w*|numb\w*|"
    r"tingl\w*|cramps?|palpitations?|joints?|shoulders?|neck|wrists?|toes?|fingers?|teeth|"
    r"tooth|gums?|bones?|osteoporosis|angina|stroke|cancer|tumou?r|ulcers?|symptoms?|"
    r"weight|appetite|sleep(?:ing)?|tired(?:ness)?|fatigue|memory|confus\w*|mole|spots?)\b"
)
_HEALTH_RE = re.compile(HEALTH)
_DOSE_NUMBER = r"(?:two|2|three|3|four|4|double|a double|both|extra|an extra|half|another|one more)"
#: A number as said: "95", "ninety-five", "a hundred and forty".
_NUMBER = (
    r"\d+(?:\.\d+)?|(?:a |one )?hundred(?: and)?(?: \w+)?|(?:twenty|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
)
_ADVICE_EN = [
    # "how many of my amlodipine tablets should I take?", "how much insulin do I have to take?"
    r"\bhow (?:many|much)\b.{0,60}\b(?:should|do|can|must|ought|shall|could|may|am|need)\b.{0,20}"
    r"\bi\b.{0,25}\b(?:take|taking|inject|injecting|swallow)\b",
    # "how many of her amlodipine is she supposed to take?"
    r"\bhow (?:many|much)\b.{0,60}\b(?:should|do|does|can|must|ought|shall|could|may|is|are|"
    r"need|needs)\b.{0,20}\b(?:she|he|they|mum|dad|nan|gran)\b.{0,25}\b(?:take|taking|have|"
    r"having|inject|swallow)\b",
    # "is ninety-five all right?", "should I be worried?" (a number, judged: the nurse's)
    rf"\bis (?:a |my |that |it )?(?:{_NUMBER})(?: percent| per ?cent|%)?(?: over (?:{_NUMBER}))? "
    r"(?:all right|alright|ok|okay|normal|good|bad|too high|too low|high|low|dangerous|safe|"
    r"worrying|healthy)\b",
    r"\bshould i (?:be )?(?:worried|concerned|worry)\b",
    rf"\bhow (?:many|much)\b.{{0,40}}{MEDICINE}.{{0,40}}\bi\b.{{0,25}}\b(?:have|having|give|use|"
    r"using)\b",
    # "what's the dose of …", "how often should I take them?", "what time should I take it?"
    r"\b(?:how often|how long|when|what time|how) (?:should|do|must|can|am) i (?:supposed to |meant to )?"
    r"(?:take|have|use|stop taking|keep taking|be taking)\b",
    # "should I take two now?", "should I double up?", "can I have another one?"
    rf"{_CLAUSE}{_FILL}(?:should|shall|can|could|may|must|do) i (?:just )?(?:take|have|swallow|use) "
    rf"{_DOSE_NUMBER}(?: (?:of )?(?:them|it|those|these|ones?|tablets?|pills?|doses?))?"
    r"(?: (?:now|today|tonight|later|instead|then|as well|too|to make up(?: for it)?|"
    r"this (?:morning|afternoon|evening)|at once|together|"
    r"(?:at|with|before|after|by|around|for) (?:the |my |a )?\w+))*$",
    r"\b(?:should|shall|can|could|may|must) i (?:just )?(?:double|double up|make up|catch up|skip|miss|"
    r"stop|halve|cut|split|crush|chew|up|increase|reduce|lower)\b",
    r"\bdouble (?:up|the dose|dose)\b.*\?|\bmake up for (?:the|a|my) missed\b",
    # "side effects", "interactions", "overdose" asked about
    r"\b(?:side[ -]effects?|interact(?:ion|ions|s)?|overdose|dosage|the dose|right dose|"
    r"how strong|before or after (?:food|meals|eating)|with or without food|empty stomach)\b",
    # "what medicine do I take in the evening?", "which tablets am I on?": the person's own
    # regimen is the prescription's, never the model's to guess
    rf"\b(?:what|which) (?:\w+ )?{MEDICINE[2:]}(?: \w+)? (?:do|should|must|did|am|have) i "
    r"(?:take|have|use|be taking|on|got|supposed to take|meant to take)\b",
    # "what are my water tablets for?", "what's amlodipine for?"
    rf"\bwhat (?:is|are|'s|were|was) (?:my |the |these |those |this |that )?(?:\w+ )?{MEDICINE[2:]}"
    r"(?: \w+)? (?:for|meant to do|supposed to do)\b",
    # "what can I take for my headache?", "what should I use for a rash?"
    rf"\bwhat (?:can|should|could|do) i (?:take|use|put on|have|give|do) (?:for|about) (?:my |a |an |the |this |that |these )?"
    rf"(?:\w+ ){{0,2}}{HEALTH[2:]}",
    # "how do I lower my blood pressure?", "how can I get rid of this cough?"
    rf"\bhow (?:do|can|should|could|would) i (?:treat|cure|get rid of|ease|relieve|stop|lower|bring down|"
    rf"reduce|raise|improve|fix|help|sort out|deal with|get over) (?:my |a |an |the |this |that |these )?"
    rf"(?:\w+ ){{0,2}}{HEALTH[2:]}",
    rf"\bhow (?:do|can|should|could|would) i (?:bring|get|keep) (?:my |the )?(?:\w+ )?{HEALTH[2:]}"
    r" (?:down|up|under control|lower|better)\b",
    # "do I need to see a doctor?", "should I go to hospital?", "should I ring the GP?"
    r"\b(?:do|should|shall|must|ought) i (?:need to |have to |to |really )?(?:see|call|ring|phone|go to|"
    r"go and see|visit|get|tell|ask) (?:a |the |my )?(?:doctors?|gp|nurse|hospital|a ?& ?e|a and e|"
    r"pharmacist|chemist|surgery|emergency|casualty|ambulance|paramedic)\b",
    r"\b(?:do|should) i (?:go|get myself) (?:to|into) (?:hospital|the hospital|a ?& ?e|casualty)\b",
    # a diagnosis: "what's wrong with me?", "is it serious?", "could it be a stroke?"
    r"\bwhat(?:'s| is) (?:wrong|the matter) with (?:me|my)\b",
    r"\b(?:is|could|might|can|would) (?:it|this|that|my \w+|these|they) (?:be )?(?:something )?"
    r"(?:serious|cancer|a stroke|a heart attack|an infection|infected|diabetes|dementia|"
    r"broken|fractured|sprained|shingles|arthritis|a clot|contagious|catching|dangerous|"
    r"something (?:serious|bad|to worry about)|anything (?:serious|bad|to worry about))\b",
    r"\bwhy (?:do|does|is|am|are|have|has|did|would|should) (?:i|my \w+)(?: \w+){0,3} "
    r"(?:hurt|hurting|ache|aching|sore|swollen|itch|itchy|bleed|bleeding|dizzy|giddy|numb|"
    r"tingl\w*|burn|burning|shak\w*|wobbl\w*|so tired|tired all|keep (?:\w+ing)|swell\w*|"
    r"cramp\w*|breathless|out of breath|high|low|up|down)\b",
    rf"\bis (?:it|this|that) (?:normal|bad|ok|okay|safe|serious) (?:for|to|when|if)\b.*{HEALTH}",
    # "is it safe to drink with my tablets?", "can I have a glass of wine on antibiotics?",
    # "can I take ibuprofen with my tablets?"
    rf"\b(?:can|could|may|should|shall) i (?:still )?(?:take|have|mix|combine|use|drink|eat|give|stop|"
    rf"skip|miss|crush|split|chew)\b.*{MEDICINE}",
    rf"\bis (?:it|that) (?:ok|okay|alright|all right|safe|fine|bad|dangerous|wise|a good idea)"
    rf"(?: for me)? to (?:take|have|mix|combine|use|drink|eat|stop|skip|miss|double)\b.*{MEDICINE}",
    rf"\b(?:am i|are we) (?:allowed|ok|okay|safe|supposed|meant) to (?:take|have|mix|drink|eat|stop)\b.*{MEDICINE}",
    rf"\bis (?:\w+ ){{1,3}}(?:good|bad|ok|okay|safe|dangerous|healthy) for (?:my |me with |people with |someone with )"
    rf"(?:\w+ ){{0,2}}{HEALTH[2:]}",
]
_ADVICE_EN_RE = [re.compile(p) for p in _ADVICE_EN]
#: A medicine named with a question about it ("can I take ibuprofen?" is in the list above;
#: "my tablets, should I …?" too). A question frame around a medicine word.
_ASKS_MEDICINE = re.compile(
    rf"{_CLAUSE}{_FILL}(?:should|shall|can|could|may|must|do|does|is|are|will|would|how|what|which|"
    rf"when) (?:i|it|they|these|those|this|that|my|the|you)\b.*{MEDICINE}"
)
#: What a question about a medicine may be that is no advice: whether it was taken
#: (medication_taken), fetched, collected, ordered, or a reminder.
_MEDICINE_NOT_ADVICE = re.compile(
    r"\b(?:did i|have i|had i)\b.{0,20}\b(?:take|taken|have|had)\b|\bremind|\b(?:collect|pick up|"
    r"order|fetch|get (?:my|the) prescription|delivered|run out|running out|where (?:are|is|did|have)"
    r"|where'?s)\b|\b(?:time for|taken (?:my|them|it))\b"
)
_ZH_MEDICINE = (
    "(?:药|片|粒|颗|胶囊|布洛芬|阿司匹林|扑热息痛|对乙酰氨基酚|胰岛素|维生素|钙片|止痛|安眠|"
    "抗生素|消炎|剂量|毫克|降压|降糖|他汀|氨氯地平|二甲双胍|华法林|感冒灵|头孢)"
)
_ZH_ADVICE_MARK = (
    "(?:能不能|可不可以|能|可以|该不该|应该|应不应该|该|要不要|需不需要|需要|用不用|行不行|"
    "几片|几粒|几颗|多少|怎么吃|什么时候吃|饭前|饭后|副作用|一起吃|同时吃|补吃|补上|多吃|"
    "少吃|两片|加倍|停药|减量|加量|空腹|有什么用|干什么用|治什么)"
)
_ZH_HEALTH = "(?:疼|痛|头晕|晕|咳嗽|发烧|发热|血压|血糖|心脏|胸口|肚子|拉肚子|便秘|失眠|睡不着|肿|痒|皮疹|感冒|病|难受|不舒服|伤口)"
_ADVICE_ZH_RE = [
    re.compile(rf"{_ZH_MEDICINE}.*{_ZH_ADVICE_MARK}|{_ZH_ADVICE_MARK}.*{_ZH_MEDICINE}"),
    re.compile(r"(?:吃|服|用|打)(?:几|多少)(?:片|粒|颗|次|毫克|支|包|单位|针)"),
    # 我那药一天吃两次还是一次？
    re.compile(r"(?:一天|每天|一日|每日).{0,4}(?:吃|服|用|打).{0,6}(?:还是|几次|几回|几片)"),
    re.compile(
        r"(?:要不要|需不需要|用不用|该不该|应不应该|是不是要|是不是该|要|需要|应该|该)(?:去)?"
        r"(?:看医生|去医院|上医院|看病|叫医生|找医生|看急诊|挂号)"
    ),
    re.compile(
        rf"{_ZH_HEALTH}.*(?:怎么办|怎么治|吃什么|严重吗|要紧吗|是什么病|怎么回事|是不是.{{0,6}}(?:病|癌|中风|心脏病))"
    ),
    re.compile(
        r"(?:我|这)(?:是不是|会不会|是)?(?:得了|有)?(?:什么病|癌|中风|心脏病|糖尿病)(?:吗|了吗|呢)"
    ),
]
#: Not advice: whether it was taken (medication_taken), a reminder, where the pills are.
_ZH_NOT_ADVICE = re.compile(r"(?:吃|喝)(?:过|了)?药(?:了)?(?:吗|没|没有)|提醒|药(?:放)?(?:在)?哪")

# --- the person's own past ----------------------------------------------------------------
_LIFE = (
    r"(?:grow up|grew up|born|live|lived|work|worked|meet|met|marry|married|get married|go to school|"
    r"went to school|study|studied|train|trained|retire|retired|move|moved|learn|learnt|learned|"
    r"lose|lost|buy|bought|start|started|go on (?:holiday|honeymoon)|put|leave|left|park|parked|"
    r"hide|hid|keep|kept|serve|served|emigrate|emigrated|come|came)"
)
_PAST_EN = [
    # "what was the name of my first dog?", "what were the names of my aunts?"
    r"\bwhat (?:was|were|is|are|'s) the names? of my\b",
    # "what was my first dog called?", "what was my husband's name?", "what was my first job?"
    r"\bwhat (?:was|were) my (?!(?:last |latest )?(?:blood|bp|pressure|oxygen|sugar|glucose|"
    r"weight|temp|heart|pulse|sats))[a-z' -]{2,40}$",
    # "where did I grow up?", "when did I get married?", "who did I marry?", "where was I born?"
    rf"\b(?:where|when|who|whom|how|why|which|what year|what age|how long ago) (?:did|was|were|had|have) "
    rf"(?:i|we|my husband and i|my wife and i)(?: first| last| ever| once| both)? {_LIFE}\b",
    r"\b(?:where|when|who|which|what year) (?:was|were) (?:i|we) (?:born|married|christened|evacuated)\b",
    r"\bwhat did i (?:do|use to do)(?: for a living| for work| before i retired| when i was)\b",
    r"\bwhat (?:was|were) (?:my|our) (?:jobs?|work|trade|job before|first job)\b",
    r"\bhow old (?:was i|were we|am i)\b",
    r"\bhow many (?:children|kids|grandchildren|grandkids|great[- ]grandchildren|brothers|sisters|"
    r"siblings|sons|daughters|cousins|nieces|nephews) (?:do|did|have|had) (?:i|we)\b",
    r"\bhow long (?:was i|were we|have i been|have we been|did i) (?:married|widowed|retired|"
    r"living here|lived here|work|working|in the)\b",
    r"\bwho (?:was|were) my (?:first |late |old |best |childhood )?[a-z' -]{2,30}$",
    # "who was the vicar at our wedding?", "who came to my 80th?"
    r"\bwho (?:was|were|came|sang|spoke|played) (?:the [a-z]+ )?(?:at|to|for) (?:my|our) [a-z0-9' -]{2,30}$",
    r"\bwhat(?:'s| is| was) my (?:maiden name|date of birth|address|old address|postcode|"
    r"phone number|telephone number|wedding anniversary|anniversary|first (?:job|house|car|"
    r"school|love|pet|dog|cat)|favourite [a-z]+|middle name|nhs number)\b",
    # "how tall was my Harold?", "what colour were my wedding flowers?"
    r"\b(?:how (?:tall|old|big|long|far)|what colou?r|what size) (?:was|were) my\b",
    # "what did the doctor say about my water tablets?": only the person was there
    r"\bwhat did (?:the|my) (?:doctor|gp|nurse|consultant|specialist|pharmacist|dentist|surgeon) "
    r"(?:say|tell me|tell you|think|reckon)\b",
    # "what did I use to sing in?", "where did I use to work?"
    r"\b(?:what|where|who|which|when) did (?:i|we) (?:use|used) to\b",
    # "what's our Anna's husband called?", "is Sophie having a boy or a girl, did I say?"
    r"\bwhat(?:'s| is| was) (?:our |my )?[a-z]+'s (?:husband|wife|partner|son|daughter|baby|dog|cat|"
    r"boyfriend|girlfriend|name)(?: called|'s name)?\b",
    r"\b(?:did i (?:say|tell you|mention)|have i (?:said|told you|mentioned))\W*$",
    # "what did Anna's husband do for a living?", "where does my grandson work?": the
    # family's lives are known only from what was told
    r"\b(?:what|where|who|when|how long|how old) (?:did|does|do|is|was|has|had) (?:our |my )?"
    r"(?:[a-z]+'s )?(?:husband|wife|partner|son|daughter|grandson|granddaughter|brother|sister|"
    r"niece|nephew|son-in-law|daughter-in-law|cousin|boyfriend|girlfriend)\b",
    # "do you know where I grew up?", "can you remember when I was married?"
    rf"\b(?:do you (?:know|remember)|can you (?:remember|tell me)|have you any idea|any idea) "
    rf"(?:where|when|who|which|what year|how) (?:i|we) (?:was |were |first |last )?{_LIFE}\b",
    # "I can't remember where I put my glasses", "I forgot where I left my purse": asked
    # in the telling (a model answered "I'm sorry for your loss")
    rf"\bi (?:can't|cannot|can not|don't|do not) (?:remember|recall) (?:where|when|who|which) "
    rf"(?:i|we) {_LIFE}\b",
    rf"\bi(?:'ve| have)? (?:forgot|forgotten) (?:where|when|who|which) (?:i|we) {_LIFE}\b",
]
_PAST_EN_RE = [re.compile(p) for p in _PAST_EN]
_PAST_ZH_RE = [
    re.compile(
        r"我(?:以前|小时候|年轻(?:的)?时(?:候)?|当年|原来|过去|那时候)?(?:是)?(?:在)?(?:哪里|哪儿|哪|什么地方)"
        r"(?:长大|出生|工作|上学|上班|住|结婚|读书|当兵)"
    ),
    re.compile(r"我(?:是)?(?:哪一?年|什么时候|几岁|多大)(?:出生|结婚|退休|搬|开始|上学|工作)"),
    re.compile(r"我(?:有|生了)(?:几个|多少个?)(?:孩子|孙子|孙女|儿子|女儿|兄弟|姐妹|外孙|外孙女)"),
    re.compile(
        r"我(?:的)?(?:生日|地址|电话|电话号码|老家|身份证号)(?:是)?(?:多少|哪天|什么|几号|在哪)"
    ),
    re.compile(r"我(?:以前|小时候|第一)(?:只|条|个|份)?.{0,6}(?:叫什么|是谁|是什么|在哪)"),
    # 我上个月体检查的胆固醇是多少？ (a result only the person was told)
    re.compile(r"(?:体检|化验|检查|复查|拍片|验血).{0,12}(?:多少|怎么样|结果|正常|高不高)"),
    # 我家以前那条大黄狗叫啥名来着？
    re.compile(r"(?:以前|从前|小时候|年轻时|当年|那时候).{0,10}(?:叫什么|叫啥|是谁|在哪)"),
    re.compile(
        r"我(?:的)?(?:孙子|孙女|外孙|外孙女|儿子|女儿|老伴|丈夫|妻子|哥哥|姐姐|弟弟|妹妹)"
        r"(?:今年)?(?:几岁|多大|哪年出生|生日是)"
    ),
]

# --- the world today ----------------------------------------------------------------------
_SPORT = (
    r"(?:match|game|football|footy|soccer|cricket|rugby|tennis|golf|snooker|darts|race|races|"
    r"grand national|derby|wimbledon|cup|final|league|olympics|world cup|test match|boxing|"
    r"england|scotland|wales|ireland|united|city|rovers|arsenal|chelsea|liverpool|spurs|everton|"
    r"celtic|rangers|villa|the reds|the blues|the team|the lads|the boys)"
)
_PRICE_THINGS = (
    r"(?:petrol|diesel|bread|a loaf|milk|a pint|eggs?|butter|a stamp|stamps|gas|electricity|"
    r"energy|a ticket|the bus|the train|a taxi|houses?|rent|gold|the pound|euros?|dollars?|"
    r"shopping|food|a paper|the paper|a newspaper|cigarettes|beer|coffee|tea|sugar|potatoes|"
    r"meat|a coffee|a haircut)"
)
_WORLD_EN = {
    "tv": [
        r"\bwhat(?:'s| is| was)? on (?:the )?(?:telly|tv|television|box|bbc|itv|channel \w+|radio)\b",
        r"\bwhat(?:'s| is) on (?:tonight|this evening|later)\b",
        r"\b(?:what time|when)(?:'s| is| does) (?!my\b)(?:\w+ ){1,4}(?:on|start|begin)(?: tonight| today| tomorrow| this evening| on (?:the )?(?:telly|tv|bbc|itv))?$",
        r"\bis (?!my\b|it\b|there\b)(?:\w+ ){1,3}on (?:tonight|today|tomorrow|this evening|later|the telly|tv|the tv|the box)\b",
        r"\b(?:any|anything) (?:good )?on (?:the )?(?:telly|tv|box|tonight)\b",
        r"\bwhat (?:programmes?|shows?|films?|movies?|soaps?) (?:are|is) on\b",
    ],
    "sport": [
        r"\bwho won\b",
        rf"\b(?:did|have|has) (?:\w+ ){{0,2}}{_SPORT} (?:win|won|lose|lost|draw|drawn|beat|score|scored)\b",
        r"\bwhat(?:'s| is| was) the (?:score|result|results|final score)\b",
        rf"\bhow did (?:\w+ ){{0,2}}{_SPORT} (?:do|get on|play|go)\b",
        rf"\b(?:is|was) (?:\w+ ){{0,2}}{_SPORT} (?:winning|losing|playing|on)\b",
    ],
    "prices": [
        rf"\bhow much (?:is|are|does|do|'s|did|would) (?:a |an |the )?{_PRICE_THINGS}\b",
        r"\bhow much (?:is|are|does|do|did) .{1,40} cost\b",
        r"\bwhat(?:'s| is| are) the (?:price|prices|cost) of\b",
        r"\bwhat (?:do|does|did) .{1,30} cost (?:now|these days|nowadays|today)\b",
        r"\b(?:price|prices|cost) of (?:living|petrol|food|energy|gas|electricity)\b.*\?",
        r"\b(?:interest rates?|exchange rate|inflation|stock market|share price|lottery numbers|"
        r"lotto numbers|euromillions|premium bonds?)\b",
    ],
    "news": [
        r"\bwho(?:'s| is) (?:the )?(?:prime minister|president|chancellor|pope|mayor|leader of)\b",
        r"\bhow old is (?:the )?(?:king|queen|prime minister|president|pope)\b",
        r"\bwhat(?:'s| is) (?:happening|going on) (?:in|with) (?:the world|the country|america|"
        r"london|parliament|the government|ukraine|the election|europe|china)\b",
        r"\b(?:any|anything) (?:new|happening) in the world\b",
        r"\b(?:election|strikes?|budget|government|parliament)\b.*\b(?:what|who|when|did|is|are|will)\b.*\?",
    ],
    "weather": [
        r"\bis it (?:nice|nasty|horrible|lovely|grey|dull|bright|wet|dry|miserable|fine|cloudy|"
        r"foggy|stormy) (?:out|outside|today|out there|this morning|this afternoon)\b",
        r"\bwhat(?:'s| is) it (?:like|doing) (?:out|outside|out there)\b",
    ],
}
_WORLD_EN_RE = {t: [re.compile(p) for p in ps] for t, ps in _WORLD_EN.items()}
_WORLD_ZH_RE = {
    "tv": [
        re.compile(
            r"电视(?:上|里)?(?:今天|今晚|晚上|现在)?(?:有什么|演什么|放什么|播什么|几点)|(?:节目|电视剧|连续剧|新闻联播|春晚)(?:几点|什么时候|今天有吗|演到)"
        )
    ],
    "sport": [
        re.compile(
            r"(?:比赛|球赛|足球|篮球|乒乓球|排球|世界杯|奥运|中国队|国足).{0,8}(?:谁赢|赢了吗|赢了没|结果|比分|输了吗|怎么样|几比几)|谁赢了"
        )
    ],
    "prices": [re.compile(r"多少钱|价格|物价|菜价|油价|房价|金价|汇率|股票|股市|彩票|开奖")],
    "news": [re.compile(r"(?:总统|主席|总理|首相)是谁|世界上.{0,6}(?:发生|怎么样)|国家大事")],
}
_ZH_QUESTION = re.compile(
    r"吗|呢|么|来着|啥|多少|几|什么|怎么|哪|谁|要不要|能不能|可不可以|是不是|该不该|行不行|有没有|？|\?"
)


@dataclass(frozen=True)
class Gated:
    """What the gate found: the intent and its slots (``reading``/``who``/``day`` of a
    reading, ``about`` of advice, ``query`` of the past, ``topic`` of the world)."""

    intent: str
    slots: dict[str, Any] = field(default_factory=dict)


def gate(text: str, raw: str = "") -> Gated | None:
    """The question ``text`` (normalized; ``raw`` as said, for its question mark) asks what
    the model cannot know, and which kind; None for anything else."""
    if not text:
        return None
    zh = bool(re.search(r"[\u3400-\u9fff]", text))
    return (_zh if zh else _en)(text, raw or text)


def _en(text: str, raw: str) -> Gated | None:
    asked = raw.rstrip().endswith("?") or bool(
        re.search(
            rf"{_CLAUSE}{_FILL}(?:what|how|is|was|are|were|should|shall|can|could|may|do|does|did|"
            r"will|would|who|when|where|which|why|have|has|am|any|tell me|do you know|i wonder)\b",
            text,
        )
    )
    asked = asked or bool(_WONDERING.search(text))
    if not asked:
        return None  # a statement ("I took my tablets", "my hip aches in this weather")
    if advice := _advice_en(text):
        return advice
    for pattern in _READING_EN_RE:
        if found := pattern.search(text):
            return Gated("honest.reading", _reading_slots(found, text))
    if any(p.search(text) for p in _PAST_EN_RE) and not _answered_itself(raw):
        return Gated("honest.past", {"query": raw.strip()})
    for topic, patterns in _WORLD_EN_RE.items():
        if any(p.search(text) for p in patterns):
            return Gated("info.offline", {"topic": topic})
    return None


#: A question put as a statement: "I can't remember where I put my glasses".
_WONDERING = re.compile(
    r"\bi (?:can't|cannot|can not|don't|do not) (?:remember|recall) (?:where|when|who|which)\b"
    r"|\bi(?:'ve| have)? (?:forgot|forgotten) (?:where|when|who|which)\b"
)


def _answered_itself(raw: str) -> bool:
    """ "Where did I put my glasses… oh, here they are, on the windowsill": the question was
    asked aloud and answered in the same breath; the last sentence is what is told."""
    sentences = [p for p in re.split(r"(?:[.!?…]+|\s-\s)\s*", raw.strip()) if p.strip()]
    if len(sentences) < 2 or raw.rstrip().endswith("?"):
        return False
    return bool(_FOUND.search(sentences[-1].lower()))


_FOUND = re.compile(
    r"\b(?:here (?:it is|they are)|there (?:it is|they are)|found (?:it|them)|got (?:it|them)|"
    r"(?:it|they)(?:'s|'re| is| are| was| were) (?:on|in|under|by|behind|next to|beside|in)\b|"
    r"(?:silly|daft|of course|that's it|now i remember|i remember now))"
)


def _advice_en(text: str) -> Gated | None:
    medicine = bool(_MEDICINE_RE.search(text))
    if medicine and _MEDICINE_NOT_ADVICE.search(text) and not _dose_asked(text):
        return None  # "did I take my tablets?", "remind me…", "where are my pills?"
    for pattern in _ADVICE_EN_RE:
        if pattern.search(text):
            return Gated("honest.advice", {"about": _about(text, medicine)})
    if medicine and _ASKS_MEDICINE.search(text):
        return Gated("honest.advice", {"about": "medicine"})
    return None


_DOSE_ASKED = re.compile(
    rf"\bhow (?:many|much)\b|\b(?:should|shall|can|may|must) i (?:take|have) {_DOSE_NUMBER}\b|\bdose\b|\bdouble\b"
)


def _dose_asked(text: str) -> bool:
    return bool(_DOSE_ASKED.search(text))


def _about(text: str, medicine: bool) -> str:
    """``dose`` (how many, how much, another), ``medicine`` (anything else about one), or
    ``health`` (a diagnosis, a doctor, a treatment)."""
    if _dose_asked(text) or re.search(rf"\b(?:take|have) {_DOSE_NUMBER}\b", text):
        return "dose"
    return "medicine" if medicine else "health"


def _reading_slots(found: re.Match[str], text: str) -> dict[str, Any]:
    groups = found.groupdict()
    sensor = next((k for k in READING_WORDS if groups.get(k)), None) or _by_device(text)
    slots: dict[str, Any] = {"reading": sensor}
    who = groups.get("who")
    if who and who not in ("today", "yesterday", "tonight", "morning", "evening", "night", "it"):
        slots["who"] = who
    if weekday := re.search(rf"\b({'|'.join(WEEKDAYS)})\b", text):  # "today's than Monday's"
        slots["day"] = weekday[1]
    elif re.search(r"\byesterday\b|last night", text):
        slots["day"] = "yesterday"
    elif re.search(r"\btoday\b|this (?:morning|afternoon|evening)", text):
        slots["day"] = "today"
    if re.search(r"\b(?:higher|lower|than|compared?|since)\b", text):
        slots["compare"] = True  # "is that higher than Monday's?": both readings, side by side
    if re.search(
        r"\b(?:ok|okay|alright|all right|normal|high|low|too|good|fine|bad|raised|better|worse)\b",
        text,
    ):
        slots["judge"] = True  # asked whether it is all right: the nurse's to say
    return slots


#: What a device measures, when the question names the device, not the reading.
_DEVICES = {
    "weight": r"\bscales?\b|\bweigh\b|\bheavy\b",
    "spo2": r"oximeter|finger",
    "temperature": r"thermometer",
    "glucose": r"\bmeter\b",
}


def _by_device(text: str) -> str:
    """ "what did the scales say?" → weight; the cuff (or anything else) → blood pressure."""
    return next((k for k, p in _DEVICES.items() if re.search(p, text)), "bp")


def _zh(text: str, raw: str) -> Gated | None:
    if not _ZH_QUESTION.search(text) and not raw.rstrip().endswith(("？", "?")):
        return None
    if not _ZH_NOT_ADVICE.search(text) and any(p.search(text) for p in _ADVICE_ZH_RE):
        medicine = bool(re.search(_ZH_MEDICINE, text))
        dose = bool(
            re.search(r"几片|几粒|几颗|多少|两片|加倍|补吃|多吃|(?:吃|服|用|打)(?:几|多少)", text)
        )
        return Gated(
            "honest.advice", {"about": "dose" if dose else "medicine" if medicine else "health"}
        )
    for pattern in _READING_ZH_RE:
        if found := pattern.search(text):
            groups = found.groupdict()
            sensor = next((k for k in READING_ZH if groups.get(k)), "weight")
            slots: dict[str, Any] = {"reading": sensor}
            if groups.get("who_zh"):
                slots["who"] = groups["who_zh"]
            if weekday := re.search("(?:星期|礼拜|周)([一二三四五六日天])", text):
                slots["day"] = WEEKDAYS[min("一二三四五六日天".index(weekday[1]), 6)]
            elif "昨天" in text:
                slots["day"] = "yesterday"
            elif re.search("今天|早上|上午|下午|晚上", text):
                slots["day"] = "today"
            if re.search("比|高了|低了|对比|相比", text):
                slots["compare"] = True
            if re.search("正常|高不高|低不低|高吗|低吗|还好|好不好|好吗", text):
                slots["judge"] = True
            return Gated("honest.reading", slots)
    if any(p.search(text) for p in _PAST_ZH_RE):
        return Gated("honest.past", {"query": raw.strip()})
    for topic, patterns in _WORLD_ZH_RE.items():
        if any(p.search(text) for p in patterns):
            return Gated("info.offline", {"topic": topic})
    return None


#: Cues a reading or an advice question goes before: "what's my temperature?" is no weather
#: question, "what time should I take my tablets?" no question of the time, "do you
#: remember what my blood pressure was?" is answered from the readings, not from words.
_BEFORE_CUES = frozenset(
    {"info.offline", "memory.recall", "clock.time", "clock.date", "clock.until", "timer.left"}
)


def gate_first(gated: Gated, cue_intent: str | None) -> bool:
    """Whether the gate's answer goes before the cue phrases' (a request — a reminder, a
    timer, "did I take my tablets?" — is always the cues')."""
    if cue_intent is None:
        return True
    if gated.intent == "honest.past":  # "what year did I get married?" asks no date of today
        return cue_intent in ("clock.time", "clock.date", "clock.until")
    return gated.intent in ("honest.reading", "honest.advice") and cue_intent in _BEFORE_CUES
