"""Reminder and timer requests in everyday words: "give me a shout at 3", "ping me in half
an hour", "jog my memory about the bins on Thursday", "can you holler at me in 20 minutes so
I don't burn the cookies?", 到时候叫我一声, 过二十分钟喊我 (docs/understanding.md, "Everyday
reminders").

Not a list of sentences: a request is a *call-on-me* phrase (a nudge, a shout, a buzz, ping
me, tap me on the shoulder, tell me, let me know, make sure I …, 叫我, 喊我, 提醒我) at the
start of what is asked (only polite words or the time before it), with a time, or with
words that are about remembering on their own (jog my memory, make sure I, don't let me
forget or miss). The same words said of someone else or of the past ("my son gave me a
shout yesterday", "you remind me of my sister", 我女儿昨天提醒我吃药了) ask for nothing.

A relative time with nothing to do ("ping me in half an hour", "… so I don't burn the
cookies") is a timer (it rings until answered: the kitchen's way); anything else a
reminder. :func:`task` is what to remind of, in the person's words, and how it is said back
("to take my tablets", "about the bins", "not to burn the cookies")."""

from __future__ import annotations

import re

from fayd.agent.clock.times import parse_duration, time_spans

# What may come before the request in its clause: "can you", "please", "Fay,", "oh, and"…
_OPENER = (
    r"^(?:(?:so|oh|and|then|now|well|ok|okay|right|fay|love|dear|please|pls|just|go on|hey|"
    r"um|er|erm|also|sorry)\b[ ,]*"
    r"|(?:can|could|would|will|won't|wouldn't|can't) (?:you|ya|u)\b(?: please| just)*[ ,]*"
    r"|if you (?:could|would|can|wouldn't mind)\b[ ,]*|would you mind\b[ ,]*"
    r"|do me a favou?r and\b[ ,]*|mind (?:you|and)\b[ ,]*|be a dear and\b[ ,]*"
    r"|i(?:'d| would) like you to\b[ ,]*|i (?:want|need) you to\b[ ,]*)*"
)
_ME = r"(?:me|us)"
#: Words that call on the person: something to do for them at a time.
_CALL = (
    rf"(?P<call>give {_ME} (?:a |an )?(?:little |quick |wee |gentle |friendly |small )?"
    r"(?:nudge|shout|buzz|bell|prod|poke|knock|call|ring|holler|yell|heads[- ]?up|tinkle|tap|"
    r"reminder|wake[- ]?up call|shake|hoy|yoo-?hoo|dig)"
    rf"|(?:nudge|ping|buzz|poke|prod|bug|alert|warn|wake|rouse|shout|tap|knock) {_ME}"
    r"(?: up)?(?: on the (?:shoulder|arm))?"
    rf"|(?:holler|yell|shout|call|sing out|call out|give a shout) (?:at|for|to|out to|up to) {_ME}"
    rf"|call {_ME}(?= (?:at|in|on|when|to|about|so)\b)"
    r"|jog (?:my|our) memory"
    rf"|(?:tell|let) {_ME}(?: know)?(?=\s*(?:$|when\b|that\b|to\b|about\b|so\b|,|\.|\?))"
    r"|make (?:sure|certain) (?:i|we)(?: (?:remember|don't forget|do not forget|dont forget))?"
    rf"|(?:don't|do not|dont) let {_ME} (?:forget|miss)"
    rf"|keep {_ME} right|remind us|(?:be|act as) my (?:reminder|alarm))"
)
#: Words that ask to be reminded with or without a time ("jog my memory about the bins").
_ON_THEIR_OWN = re.compile(r"^(?:jog|make|don't|do not|dont|keep|remind)", re.I)
_CALLED = re.compile(_OPENER + _CALL, re.I)
_CLAUSES = re.compile(r"[,;.!?]+\s*|\s+(?=(?:and|then|but)\s)", re.I)

_ZH_CALL = (
    r"(?P<call>别让(?:我们|我)忘(?:了|记)?"
    r"|(?:叫|喊|告诉|催|招呼|通知)(?:一下|一声)?(?:我们|我)(?:一下|一声)?"
    r"|提醒(?:一下|一声)?(?:我们|我)?(?:一下|一声)?)"
)
# Before the call, only polite words (the time is taken out first): "到时候叫我一声".
_ZH_POLITE = r"^(?:请|你|您|麻烦你|麻烦|帮我|能不能|能|可以|可不可以|到时候|到时|到点|记得|记着|一定|要|就|再|等|[，,。\s])*"
_ZH_CALLED = re.compile(_ZH_POLITE + _ZH_CALL)
_ZH_ANY_CALL = re.compile(_ZH_CALL)
#: Said of someone else or of the past: "我女儿昨天提醒我吃药了", "他老是叫我…".
_ZH_TOLD = re.compile(
    r"(他|她|它|女儿|儿子|老伴|孙子|孙女|医生|护士|妈|爸|邻居|朋友|老师|人家|别人|谁|"
    r"昨天|前天|上次|以前|那天|刚才|总是|老是|从来|经常|每次)"
)
#: "You remind me of my sister", "he never reminds me of anything": a likeness, no request.
_LIKENESS = re.compile(
    r"\b(?:you|he|she|it|they|that|this|which|who|[a-z]+s)\b(?: \w+)? remind(?:s|ed)? (?:me|us) of\b",
    re.I,
)
_ASKED_LIKENESS = re.compile(
    r"\b(?:can|could|will|would|please) (?:you )?remind (?:me|us) of\b", re.I
)
#: "Don't let me forget how lovely it was": a feeling, not a task (when no time is said).
_FEELING = re.compile(
    r"^(?:please |oh,? )?(?:don't|do not|dont) let (?:me|us) forget (?:how|what|when|where|who|"
    r"the way|those|the day|that (?:day|time|night|moment))\b",
    re.I,
)


def _without_times(text: str, lang: str) -> str:
    for start, end in sorted(time_spans(text, lang), reverse=True):
        text = text[:start] + " " + text[end:]
    return re.sub(r"\s+", " ", text).strip()


def told_of(text: str, lang: str) -> bool:
    """Reminder words that ask for nothing: a likeness ("you remind me of my sister"), a
    feeling ("don't let me forget how lovely it was"), someone else's reminding or the
    past (我女儿昨天提醒我吃药了)."""
    if lang == "zh":
        found = _ZH_ANY_CALL.search(text)
        return bool(found and _ZH_TOLD.search(text[: found.start()]))
    if _LIKENESS.search(text) and not _ASKED_LIKENESS.search(text):
        return True
    return bool(_FEELING.search(text.strip()) and not time_spans(text, lang))


def _call(text: str, lang: str) -> tuple[re.Match[str], str] | None:
    """The call-on-me phrase at the start of a clause of ``text`` (times taken out), with
    the text after it."""
    bare = _without_times(text, lang)
    if lang == "zh":
        found = _ZH_CALLED.search(bare)
        return (found, bare[found.end() :]) if found else None
    start = 0
    for cut in [*(m for m in _CLAUSES.finditer(bare)), None]:
        end = cut.start() if cut else len(bare)
        clause = bare[start:end]
        if (found := _CALLED.search(clause)) is not None:
            return found, bare[start + found.end() :]
        start = cut.end() if cut else len(bare)
    return None


def asked(text: str, lang: str) -> str | None:
    """ "reminder.set" or "timer.set" when ``text`` asks in everyday words to be called on
    at a time, else None."""
    if told_of(text, lang):
        return None
    found = _call(text, lang)
    if found is None:
        return None
    call, rest = found
    timed = bool(time_spans(text, lang))
    if not timed and not (lang == "zh" or _ON_THEIR_OWN.search(call.group("call"))):
        return None
    if lang == "zh" and not timed and not call.group("call").startswith(("提醒", "别让")):
        return None
    if not timed:
        return "reminder.set"
    what, how = _rest(call.group("call"), rest, lang)
    relative = parse_duration(text, lang) is not None
    if relative and (not what or how in ("not", "that")):
        return "timer.set"  # "ping me in half an hour", "… so I don't burn the cookies"
    return "reminder.set"


def task(text: str, lang: str) -> tuple[str, str] | None:
    """(what, how) of an everyday request, or None when ``text`` is not one: what to
    remind of, in the person's words and without the time or the call ("take my tablets",
    "the bins", "burn the cookies"); how it is said back: "to", "about", "not" (to), "that"
    or "" (nothing to do: "give me a shout at 3")."""
    found = _call(text, lang)
    if found is None:
        return None
    return _rest(found[0].group("call"), found[1], lang)


#: Said after the request and asking nothing more: "shout me in forty minutes, would you?".
_TAGS = re.compile(
    r"^(?:(?:would|will|could|can) you|please|love|dear|pet|duck|for me|thanks|ta|if you "
    r"(?:would|could|don't mind)|there's a (?:love|dear|good girl|good lad))\b[ ,.!?]*$",
    re.I,
)

# After the call: how the task is introduced.
_SO_NOT = re.compile(
    r"^(?:so|so that|in case) (?:i|we) (?:don't|do not|dont|won't|will not|can't|cannot) "
    r"(?P<forget>forget (?:to |about )?)?(?P<x>.+)",
    re.I,
)
_SO_CAN = re.compile(
    r"^(?:so|so that) (?:i|we) (?:can|could|will|remember to|have time to) (?P<x>.+)", re.I
)
_TO = re.compile(r"^(?:to|and) (?:remember (?:to )?)?(?P<x>.+)", re.I)
_ABOUT = re.compile(r"^(?:about|for|re|regarding|with|of) (?P<x>.+)", re.I)
_THAT = re.compile(r"^that (?P<x>.+)", re.I)
_WHEN = re.compile(r"^(?:when|once|as soon as)\b", re.I)
_NOT = re.compile(r"^(?:don't|do not|dont|never) (?P<x>.+)", re.I)


#: The request itself, and clauses that are no task: "到时候提醒一下我", "她是我外孙女".
_ZH_CALL = re.compile(
    r"(?:请|帮我|麻烦你|你)?(?:到时候|到点)?(?:记得)?(?:提醒一下我?|提醒我|叫我一声|叫我|喊我一声|喊我)"
)
_ZH_ASIDE = re.compile(r"^(?:她|他|它|这|那)(?:是|可是|就是)|^因为")
_ZH_NOTHING = re.compile(
    r"(?:到时候|到点|那时候|一声|一下|我们|我|记得|别忘了|别忘记了?|啊|呀|吧|哦)*"
)


def zh_task(text: str) -> str:
    """A Chinese reminder's task without the request or an aside ("下午三点半提醒我去接妞妞
    放学，她是我外孙女" → 去接妞妞放学; "要去医院复查，到时候提醒一下我" → 去医院复查)."""
    kept = []
    for clause in re.split(r"[，。！？,.!?；;、\s]+", text):
        clause = _ZH_CALL.sub("", clause)
        clause = re.sub(r"^(?:一声|一下)?(?:我们|我)?(?:要|得|该)?", "", clause)
        clause = re.sub(r"(?:啊|呀|哦|吧|哈|嘛|好吗|好不好|行吗|可以吗)+$", "", clause)
        if clause and not _ZH_ASIDE.search(clause) and not _ZH_NOTHING.fullmatch(clause):
            kept.append(clause)
    return "".join(kept)


def _rest(call: str, rest: str, lang: str) -> tuple[str, str]:
    if lang == "zh":
        return zh_task(rest), ""
    rest = _TAGS.sub("", rest.strip(" ,.!?")).strip(" ,.!?")  # "shout me … would you?"
    low = call.lower()
    if low.endswith("miss"):
        return (f"miss {rest}", "not") if rest else ("", "")
    if low.startswith("make") and (found := _NOT.match(rest)):
        return found["x"], "not"
    if _WHEN.match(rest) or not rest:
        return "", ""
    if found := _SO_NOT.match(rest):
        return found["x"], ("to" if found["forget"] else "not")
    for pattern, how in ((_SO_CAN, "to"), (_TO, "to"), (_ABOUT, "about"), (_THAT, "that")):
        if found := pattern.match(rest):
            return found["x"], how
    # "make sure I take my pills", "don't let me forget my tablets", ", the potatoes will be
    # done": a verb after "make sure I", else a thing.
    if low.startswith("make") and "forget" not in low and "remember" not in low:
        return rest, "to"
    return rest, "about" if not re.search(r"\b(is|are|will|'ll)\b", rest) else "that"


#: What a timer is for: "so I don't burn the cookies", "the potatoes will be done".
_THING = re.compile(
    r"\b(?:the|my|our|those|these|that|this)\s+(?P<n>[a-z]+(?:\s+[a-z]+)?)"
    r"(?=\s+(?:will|are|is|should|out|off|up|in|on)\b|\s*$)",
    re.I,
)


def timer_name(text: str, lang: str) -> str:
    """The name of a timer asked for in everyday words ("cookies"), or ""."""
    if lang == "zh":
        return ""
    said = task(text, lang)
    found = _THING.search(said[0]) if said and said[0] else None
    found = found or _COOKING.search(text)  # "I'm putting a pie in the oven, shout me in 40"
    return found["n"].lower() if found else ""


#: Something put on to cook, said before the call: "I'm putting a pie in the oven".
_COOKING = re.compile(
    r"\b(?:putting|put|popped|popping|pop|got|have|'ve got|just put) (?:a|the|my|some|our) "
    r"(?P<n>[a-z]+(?: [a-z]+)?) (?:in|on|under) (?:the )?(?:oven|hob|stove|cooker|pan|"
    r"microwave|grill|aga|slow cooker)\b",
    re.I,
)
