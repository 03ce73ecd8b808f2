"""Cue phrases: the words that, on their own, say what a request is ("remind me", "how many
days until", "louder", "提醒我", "几点"), checked before the nearest-example guess. They
are how people phrase each request in general — not sentences to match — so a request in
words no example has still lands, and the meaning-based guess decides only the rest.

Each intent has patterns on the normalized text (lower case; Chinese as is). When several
intents' cues match, the first in ORDER (the declarations' order, intents.toml) wins: a question about what was said ("remind me,
what's the cat's name?") before a reminder, a reminder before a timer, and so on."""

from __future__ import annotations

import re

from fayd.agent.care import rule_words as care_rule
from fayd.agent.language.declared import CUE_ORDER, with_mood
from fayd.agent.language.phrases import FAMILY, FAMILY_ZH, MEDICINE
from fayd.agent.language.text import language
from fayd.agent.reminders import everyday
from fayd.agent.understand.slots import INTRODUCTION, INTRODUCTION_ZH

#: A request's opening: "can you", "please", "Fay," … at the start of a sentence or clause.
_ASKING_FOR = r"(^|[,.;!?] |\b(and|so|but) )((can|could|would|will) you |please |fay,? |oh,? |go on,? |just )*"
#: A light or appliance named, with up to three words before it ("the big kitchen light").
_APPLIANCE = (
    r"([a-z']+ ){0,3}?(lights?|lamps?|heating|heater|radiators?|fire|tv|telly|television|radio|"
    r"kettle|oven|cooker|fan|boiler|hoover|dishwasher|washing machine|air con|aircon)\b"
)
_NUM = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|forty|forty-five|half an?|a couple of|a few)"
_ZH_NUM = r"[\d一二两三四五六七八九十半几]+"

CUES: dict[str, list[str]] = {
    "reset": [
        r"\b(start|begin|go) (it |this |all this |everything |that )?(all )?(over|again|afresh)\b",
        r"\b(fresh|clean) start\b",
        r"\b(start|begin|go)\b.{0,20}\b(from the (top|beginning)|from scratch)\b",
        r"\b(new|fresh) (chat|conversation|start)\b",
        r"\b(wipe|clear|forget) (all )?(that|this|what (we|i) (just )?said)\b.*\b(start|begin|again|fresh|new)\b",
        r"\bforget (this|that|our) (conversation|chat)\b",
        r"\blost the thread\b",
        r"(重新开始|重来|从头(再)?(来|开始|说)|重新说|换个话题重新)",
    ],
    "memory.recall": [
        # What the person did: only memory can know ("did I take my pills?"), never the model.
        r"^((oh|so|um|fay|now)[ ,]+)*(did|have) i (already |just )?(take|taken|have|had|eat|eaten|"
        r"lock|locked|turn|turned|switch|switched|feed|fed|call|called|ring|rung|rang|pay|paid|"
        r"put|water|watered|shut|close|closed|do|done)\b",
        r"我(今天|刚才|早上|中午|晚上)?(吃|喝)(过|了)?药(了)?(吗|没|没有)",
        r"\b(did|have) i (tell|told|mention|mentioned|say|said)\b.*\b(you|before)\b",
        r"\bwhat did i (tell|say to|ask) you\b",
        r"\b(do you|can you) remember (what|who|when|where|my|the)\b",
        r"^(remind me|tell me again|refresh my memory)[, ]+(what|who|when|where|which|how)\b",
        r"\bwhat(?:'s| is| was) (my|the) [a-z' -]+?(?:'s)? (name|called)( again)?\b",
        r"\bwhat(?:'s| is| was) (my|the) [a-z' -]+? called\b",
        r"\bwho(?:'s| is) my (doctor|carer|nurse|neighbour|neighbor|dentist|gp)\b",
        r"\b(where|when|what|which|who)\b.*\b(i told you|did i tell you|i said|i mentioned)\b",
        r"\bwhat do you know about (me|my)\b",
        # What the person did: "what did I have for breakfast?" (only what they told can say).
        r"^((oh|so|um|fay|now|and)[ ,]+)*what did i (have|eat|do|watch|buy|make|cook)\b",
        # The person's own name: "what's my name?", "do you know who I am?", "我叫什么名字".
        r"\b(what(?:'s| is| was)|do you (know|remember)|have you forgotten|say|tell me) my name\b",
        r"^((oh|so|um|fay|now|and)[ ,]+)*(who am i|what am i called)\b",
        r"\bdo you (know|remember) who i am\b",
        r"我(叫什么|的名字(是|叫)什么)|你(知道|记得)我(是谁|叫什么)",
        # 我孙子叫啥来着？我老伴叫啥？我钥匙搁哪儿了？: what the person told
        r"我(的|家)?(那个|那只|那条)?[\u4e00-\u9fff]{1,4}(叫啥|叫什么|叫个啥)",
        r"我(的|那|那个)?[\u4e00-\u9fff]{1,4}(放|搁|收)(在)?(哪|哪儿|哪里|什么地方)",
        r"(我跟你说过|我告诉过你|我说过|让你记(住|的|下)|你还记得|我上回|我上次).*(什么|吗|哪|几|谁|啥|来着|\?|？)",
        r"\b(who|what|when|where|which) did i (say|tell you|ask you|mention)\b",
        r"\b(when|where)(?:'s| is| are| was) my\b",
        r"\bwhat(?:'s| is| am) (my [a-z' -]+|i) allergic to\b",
        r"我(的)?\w{1,6}?(叫什么|是谁|是哪天|在哪|放哪)",
        # "Who's coming on Sunday?": only what the person told can say.
        r"^((oh|so|um|fay|now|and)[ ,]+)*who(?:'s| is| are| was)( coming| visiting| due| popping"
        r" (in|round|over)| coming (round|over|to see me))\b",
        r"^((oh|so|um|fay|now|and)[ ,]+)*what(?:'s| is) (happening|going on|planned) (on|this|next|"
        r"tomorrow|at the weekend)\b",
    ],
    "memory.remember": [
        r"^(please |could you |can you |would you |i want you to |you must |oh,? )?(remember|memorise|memorize)\b(?! (what|who|when|where|which|how|my \w+'?s? name\?))",
        r"\b(i'd like|i would like|i want|i need) you to (remember|make a note|note|keep in mind)\b",
        r"(?<!do you )(?<!can you )(?<!did you )\bremember that\b",
        r"^(please |and )?(don't|do not) forget(,| that| this|:)",
        r"\b(make|take) a note\b",
        r"\b(jot|write|put) (it |this |that )?down\b",
        r"\bkeep (it )?in (your |mind|your head|your memory)",
        r"\bnote (that|this|down)\b",
        r"\bfor the record\b",
        # Introductions: "my name is Margaret", "I'm called Bill", "我叫小红".
        INTRODUCTION + "[a-z]",
        INTRODUCTION_ZH,
        r"(记住|记一下|(?<!惦)记着|记下来|记好了|你要记得|帮我记|别忘了我)",
    ],
    "reminder.set": [
        r"\bremind me\b",
        # "remind Mum to drink some water at three": for someone the speaker looks after
        r"\bremind (my |our )?(?!(me|you|us|him|her|them|myself|everyone)\b)[a-z]+ (to|about|that)\b",
        rf"提醒{FAMILY_ZH}",
        r"\b(don't|do not) let me forget\b",
        r"\bset (me )?(a|up a) reminder\b",
        r"\breminder (for|to|about|at|on)\b",
        r"\b(tell|wake|call|nudge|ping|give me a (shout|nudge|call)) (me )?(at|on|tomorrow|tonight|every)\b.*\bto\b",
        r"\bat \d.* (tell|nudge|wake) me to\b",
        r"(提醒我|提醒一下|到时候(叫|告诉)我|记得叫我|别让我忘了)",
    ],
    "timer.set": [
        r"\btimer\b",
        rf"\b(count ?down|time) {_NUM} (minute|min|second|hour)s?\b",
        rf"\b(tell|let|give|shout|call|wake)\b.*\bin {_NUM} (minutes?|mins?|seconds?|hours?)\b",
        rf"\bin {_NUM} (minutes?|mins?|seconds?|hours?)\b.*\b(tell|let me know|give me a shout|call me)\b",
        rf"\bwhen {_NUM} (minutes?|hours?) (are|is|have) (up|passed|gone)\b",
        r"(计时|定时器|倒计时)",
        rf"{_ZH_NUM}(分钟|个?小时|个?钟头|秒)(以?后|之后)(告诉|叫|喊)我",
    ],
    # Music and phone calls: fayd has neither, and the model would pretend ("No, no.").
    "info.cannot": [
        _ASKING_FOR
        + r"(play|put on) (me |us )?(some |a |the |my )?(\w+ )?(music|song|songs|tunes?|"
        r"radio|hymns?|records?)\b",
        _ASKING_FOR + r"(call|ring|phone|dial|video call|facetime|skype) (my |our |the )?(?!me\b)"
        r"(\w+)\b(?! (me|you|back|later|at|in|on|tomorrow|tonight)\b)",
        r"(放|播|来)(点|一首|首)?(音乐|歌|曲子|戏)|给(我)?(女儿|儿子|老伴|孙子|孙女)打(个)?电话",
        r"(放|播|来)(一)?(段|首|个|点|出)?.{0,4}(京剧|评剧|越剧|黄梅戏|豫剧|相声|评书|戏曲|小曲|歌曲)",
    ],
    # Lights and appliances: nothing of the kind is connected, and the model would pretend.
    "home.control": [
        rf"\b(turn|switch|put|flick|shut) (on|off) (the |my |all the )?{_APPLIANCE}",
        rf"\b(turn|switch|put|flick) (the |my |all the )?{_APPLIANCE} (on|off|up|down)\b",
        rf"\b(turn|put) (up|down) (the |my )?{_APPLIANCE}",
        r"\b(open|close|shut|draw) (the |my )?(curtains|blinds)\b",
        r"(开|关|打开|关掉|关上)(一下)?(客厅|卧室|厨房|厕所|卫生间)?的?(灯|电视|空调|暖气|风扇|窗帘|热水器)",
        r"把(客厅|卧室|厨房|厕所|卫生间)?的?(灯|电视|空调|暖气|风扇|窗帘|热水器)(打开|关掉|关上|关了|开开)",
    ],
    "medication.taken": [
        r"\b(did|have) i (already |just )?(take|taken|have|had) (my |the |all my )?(morning |evening |night |blood pressure |heart )?(pills?|tablets?|medicines?|medication|meds|insulin|capsules?)\b",
        r"我(今天|刚才|早上|中午|晚上)?(吃|喝)(过|了)?药(了)?(吗|没|没有)",
    ],
    "reminder.cancel": [
        r"\b(cancel|delete|remove|forget|scrap|drop|clear|get rid of|turn off|switch off)\b.*\breminders?\b",
        r"^((oh|ok|okay|fay|and|actually|no)[ ,]+)*(cancel|scrap|forget|drop) (that|the|my) "
        r"([a-z']+ ){0,2}(one|reminder|alarm)\b",
        r"\b(don't|do not|no) (need to )?remind me\b",
        r"(取消|删除|删掉|不要).{0,12}提醒|不用提醒|提醒.{0,4}(删掉|删了|取消|去掉)",
    ],
    "reminder.snooze": [
        r"^((oh|ok|okay|fay|please|yes|right)[ ,]+)*snooze\b",
        r"\bsnooze (it|that|this|the reminder)\b",
        r"\bremind me (again )?(later|in a (bit|while|minute|few minutes))\b",
        r"\bremind me again in\b",
        r"(等会|待会|晚点|稍后|过一会)再?提醒我",
    ],
    "reminder.list": [
        r"\bwhat(?:'s| is)? (on|happening|planned|in the diary) (for )?(today|tomorrow|this week)\b",
        r"\b(what|which|any) (are )?(my )?reminders?\b",
        r"\b(list|read|tell me|read out|go through) (me )?(my |the |all )?(my )?reminders\b",
        r"\bwhat (do i have|have i got) (on )?(today|tomorrow|this week)\b",
        r"\b(do i have|have i got|are there) any reminders\b",
        r"(有什么|有哪些|有没有)提醒|今天有什么安排|今天有什么事",
    ],
    "timer.cancel": [
        r"\b(cancel|stop|delete|remove|turn off|switch off|scrap|forget)\b.*\btimers?\b",
        r"(取消|关掉|停止|停掉).{0,6}(计时|定时)|(计时|定时).{0,3}(关掉|关了|取消|停掉)",
    ],
    "timer.left": [
        r"\bhow (long|much time|many minutes)\b.*\b(left|remaining|to go)\b",
        r"\bhow(?:'s| is) (my |the )?\w* ?timer( doing| going)?\b",
        r"\b(time|minutes) left on (my |the )\w* ?timer\b",
        r"(计时|定时).{0,4}(还剩|还有)(多久|多少|几)|^(还剩|还有)(多久|多少时间|几分钟)",
    ],
    "clock.until": [
        r"\bhow (many|much) (days|weeks|sleeps)\b.*\b(until|till|til|to|before|left)\b",
        r"\bhow long (is it )?(until|till|til|to go|before)\b",
        r"\bhow (many|long) .* (to go|left) (until|till|before)\b",
        r"(还有|还剩)(几|多少)(天|个星期|周)",
        r"离.{1,12}(还有|有)(几|多少)天",
    ],
    "clock.time": [
        r"\bwhat(?:'s| is)? the time\b",
        r"\bwhat time it is\b",
        r"\bwhat time (is it|have we got|do you make it)\b",
        r"\btell me the time\b",
        r"\bgot the time\b",
        r"\bwhat o'clock\b",
        r"\bis it (lunch|tea|dinner|supper|bed|breakfast) ?time( yet)?\b",
        r"\bhow late is it\b",
        r"(几点|什么时间了|什么时候了|几点钟)",
    ],
    "clock.date": [
        r"\bwhat(?:'s| is) (the |today's )?date\b",
        r"\bwhat (day|date|month|year) (of the week )?(is it|it is|is today|is it today|are we|we're)\b",
        r"\bwhat(?:'s| is) the day\b",
        r"\bwhich day (is it|of the week)\b",
        r"\bis (it|today) (still )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)\b",
        r"\bwhat(?:'s| is) today\b",
        r"(几号|星期几|礼拜几|周几|几月|哪一年|哪年|什么日子)",
    ],
    "device.volume": [
        r"\b(volume|louder|quieter|softer)\b",
        r"\bspeak (up|louder|more quietly|softer)\b",
        r"\b(turn|crank|pump|bring) (it |yourself |the sound |that )?(up|down)\b",
        r"\b(can't|cannot|can not|couldn't) (quite )?hear (you|what you)\b",
        r"\b(you're|you are|that's|it's) (too|ever so|very|a bit) (loud|quiet|soft)\b",
        r"\b(un)?mute\b",
        r"\b(sound|voice) (off|on|back on)\b",
        r"\bnot so loud\b",
        r"(声音|音量|大声|小声|听不清|听不见|太响|太吵|静音)",
    ],
    "device.brightness": [
        r"\b(brightness|brighter|dimmer)\b",
        r"\b(screen|display)('s)?\b.*\b(dark|bright|dim|light|dazzl\w*|glar\w*|turn it (up|down))\b",
        r"\b(dim|brighten) (the |your )?(screen|display)\b",
        r"(亮度|屏幕.*(亮|暗))",
    ],
    "device.sleep": [
        r"\b(go to sleep|have a (nap|kip|rest|snooze|lie down)|take a (nap|rest|break))\b",
        r"\b(go|be|stay|keep) (quiet|silent) (for|until|till|til)\b",
        r"\b(don't|do not) (bother|disturb|talk to|interrupt) me (for|until|till|til|the next)\b",
        r"\bleave me (alone|be|in peace) (for|until|till)\b",
        r"(?<!to )\b(sleep|snooze|rest) (for|until|till)\b",
        r"(睡一会|睡会儿|你先睡|歇会儿|休息一?会|休息一?下|先休息|别打扰我|以前别出声|安静一?(个|会))",
        r"^(你)?(先)?(睡|歇|休息)(一)?(会儿?|下|半个?(小时|钟头)|[\d一二两三四五六七八九十]+(分钟|个?小时|个?钟头))",
    ],
    "preference.quiet": [
        r"\b(don't|do not|no) (talk|talking|speak|speaking|chat|chatter|chatting|announcements?|noise|pipe up|say anything|make a sound|a peep|disturb me|wake me)\b.*\b(after|before|at night|in the (morning|night|evening)|every (night|evening|morning)|between)\b",
        r"\b(after|before) \S+ .*\b(don't|do not|no) (talk|speak|chat)",
        r"\b(peace and quiet|quiet)\b.*\b(every (night|evening|morning)|at night|after \d)\b",
        r"\b(don't|do not) wake me( up)? before\b",
        r"(以后|以前|之后|之前|夜里|半夜|晚上).{0,6}(别|不要)(跟我)?(说话|讲话|出声|打扰|吵)",
        r"到.{1,10}(别|不要)(跟我)?(说话|讲话|出声|打扰|吵我)",
    ],
    "info.offline": [
        r"\b(weather|forecast|rain|raining|snow|frost|frosty|icy|windy|sunny|scorcher|umbrella|brolly|temperature|degrees)\b",
        r"\bhow (cold|hot|warm) (is it|will it be)\b",
        r"\b(cold|hot|warm|chilly|freezing|mild|nippy) (out|outside|today|tonight|tomorrow)\b",
        r"\bneed (my|a) (big |warm |winter )?(coat|jumper|scarf|umbrella|brolly|gloves)\b",
        r"\b(news|headlines)\b",
        r"\bwho won\b",
        r"\b(football|footy|cricket|rugby|match|the game|the races)\b.*\b(won|score|result|go|going)\b",
        r"\bwhat(?:'s| is) on (the )?(telly|tv|television|bbc|itv|channel)\b",
        r"\b(stock|share)s? (market|price)\b",
        r"(天气|下雨|下雪|降温|冷不冷|热不热|多少度|气温|新闻|刮风)",
    ],
    "device.gesture": [
        r"\b(wave|nod|bow|dance|jig|cheer(?! (me|us|him|her) up)|jump|shake your head)\b",
        r"\blook (over |round |this way |over here )?(at|towards) me\b|\blook (over )?(here|this way)\b|\bturn (round |around )?(and look|to face) me\b",
        r"\b(show me|pull|make|do) (me )?(a |your )?(happy|sad|surprised|funny|thinking|silly|cross|angry) (face|look)\b",
        r"\blook like you're (thinking|surprised|happy|sad)\b",
        r"\b(do|give me|have) a (little )?(celebration|cheer|twirl|spin)\b",
        r"(挥手|招手|点头|点个头|摇头|摇个头|鞠躬|鞠一躬|跳舞|跳个舞|看看我|看着我|转过来)",
    ],
}
CUES["care.day"] = [
    # "How was Mum today?", "how's dad been today", "how was grandma's day", "how did mum get
    # on yesterday": the daily digest of that person (docs/care.md).
    rf"(?:^|[.!?] )((so|oh|and|um|well|fay|hi|hey)[ ,]+)*how(?:'s| is| was| has| did)( my| our)? {FAMILY}"
    r"(?:'s)?( been| doing| getting on| get on| do)?( (today|yesterday|day|this evening))?\b"
    r"(?!.*\b(feeling|taste|look|sound)\b)",
    r"(?:^|[.!?] )((so|oh|and|um|well|fay)[ ,]+)*how(?:'s| is| was) (\w+)'s day\b",
    rf"{FAMILY_ZH}(今天|昨天)(怎么样|过得怎么样|还好吗|好吗|好不好)",
    # "Did Mum have a fall today?", "has dad eaten?", "was nan up and about?": her day says
    rf"^((so|oh|and|fay)[ ,]+)*(did|has|have|was|is)( my| our)? {FAMILY} (had|have|been|fallen|"
    r"fall|fell|eaten|eat|slept|sleep|got up|get up|gone out|go out|up and about|moved|out)\b",
    # "Has Mum taken her tablets today?": her day says what the check-ins heard
    rf"\b(has|did|have)( my| our)? {FAMILY} (taken|take|had|have|remembered)( to take)? (her|his) "
    rf"({MEDICINE})\b",
    rf"{FAMILY_ZH}(今天)?(吃药了(吗|没有|没)|药吃了(吗|没有|没))",
]
#: "Tell me if Mum hasn't moved by 10": a caregiver's care rule (fayd.agent.care.rule_words).
CUES["care.rule"] = care_rule.CUES
ORDER = CUE_ORDER
_COMPILED = {intent: [re.compile(p) for p in CUES[intent]] for intent in ORDER}

# Requests that are only requests when asked or told: "what's the weather" is one, "my hip
# plays up in this cold weather" is not; "do a little dance" is one, "I met him at a dance"
# is not.
ASKED = with_mood("asked")
TOLD = with_mood("told")
#: Only someone else's doing ("my daughter set a reminder on her phone") is not a request.
NOT_THEIRS = with_mood("not_theirs")
_QUESTION = re.compile(
    r"^((so|oh|and|um|er|erm|hey|well|fay|love|dear|now)[ ,]+)*"
    r"(what|what's|whats|how|is|isn't|will|won't|are|any|anything|should|shall|do i|does|did|who|when|"
    r"where|which|tell me|let me know|can you tell|could you tell|have you (heard|got)|"
    r"i wonder|is there|will there|has|have)\b"
    r"|(吗|么|呢|没有|怎么样|多少|什么|有没有|会不会|要不要|冷不冷|热不热|啥|"
    r"(下雨|下雪|刮风|冷|热|晴)(不|没)$)"
)
_STATEMENT = re.compile(
    r"^((so|oh|and|um|er|well|yes|no|sure|ah|right)[ ,]+)*(i|i'm|i've|i'd|i was|my|we|we're|"
    r"he|she|they|it|it's|the|there|that|this|his|her|our|their|yesterday|today i|last|"
    r"you always|you're|you've|you make|you really)\b"
    r"|^(我|他|她|它|我们|他们|昨天|那)"
)
_THIRD_PERSON = re.compile(
    r"^((so|oh|and|um|er|well)[ ,]+)*(my (?!own)\w+(-in-law)? (set|has set|had|did|does|told)|he|she|they|his|her|their|"
    r"yesterday|last)\b|^(他|她|他们|昨天)"
)


#: "Who's coming on Sunday?", "what's happening on Friday?": about the day's plans, not
#: the date or the time.
_PLANS = re.compile(
    r"^((oh|so|um|fay|now|and)[ ,]+)*who\b|\bwhat(?:'s| is| are)? (happening|going on|planned)\b|"
    r"\bwhat (am i|are we) doing\b"
)


#: "What time is it in Tokyo?": the clock knows only the time here (a household's MCP time
#: server, or nobody, answers that; never the local time said as Tokyo's).
_ELSEWHERE = re.compile(
    r"\b(in|over in|out in) (?!the (morning|afternoon|evening|night)|here\b|this\b|bed\b)"
    r"(new |los |san |hong |the )?[a-z]{3,}( [a-z]{3,})?( right now| now| at the moment| today)?"
    r"[ ,]*(love|dear|please)?\s*[?.!]*$"
    r"|\bthere( right)?( now| at the moment)?[ ,]*(love|dear|please)?\s*[?.!]*$"
)


def told(text: str, question: str) -> bool:
    """Said as a statement, not asked: no question mark and no question's frame ("the
    plumber is coming on Tuesday", 我女儿周六来)."""
    if "?" in question or "？" in question or _QUESTION.search(text):
        return False
    return bool(_STATEMENT.search(text))


def fits_mood(intent: str, text: str) -> bool:
    """Asked or told as a request (a statement about a dance is not a request to dance)."""
    if intent in ("clock.date", "clock.time", "clock.until") and _PLANS.search(text):
        return False
    if intent in ("clock.date", "clock.time") and _ELSEWHERE.search(text):
        return False
    if intent in TOLD and intent not in ASKED and _STATEMENT.search(text):
        return False
    if intent in ASKED and not _QUESTION.search(text):
        return False
    return not (intent in NOT_THEIRS and _THIRD_PERSON.search(text))


#: "How was Rose today?": someone's day by name. Not a cue of its own (any word fits the
#: name): the turn is care.day only when the household has someone called that.
_NAMED_DAY = re.compile(
    r"^((so|oh|and|um|well|fay|hi|hey)[ ,]+)*how(?:'s| is| was| has| did) (?P<name>[a-z]{2,30})"
    r"(?:'s)?( been| doing| getting on| get on| do)? (?P<day>today|yesterday|day)\b"
)


def named_day(text: str) -> tuple[str, str] | None:
    """(name, "today"/"yesterday") of "how was Rose today?" (normalized), else None."""
    found = _NAMED_DAY.search(text)
    if found is None or found.group("name") in ("you", "your", "it", "that", "this", "the"):
        return None
    return found.group("name"), "yesterday" if found.group("day") == "yesterday" else "today"


def cue(text: str) -> str | None:
    """The intent whose cue phrases ``text`` (normalized) holds, by ORDER; None if none."""
    lang = language(text)
    for intent in ORDER:
        if intent == "reminder.set":  # "give me a shout at 3"; not "you remind me of her"
            if (said := everyday.asked(text, lang)) is not None:
                return said
            if everyday.told_of(text, lang):
                continue
        if fits_mood(intent, text) and any(p.search(text) for p in _COMPILED[intent]):
            return intent
    return None
