"""No reply claims what did not happen (issue 21, build item 6).

Only a skill does things (keeps a reminder, starts a timer, tells a caregiver), and only a
skill may say it did, after it did (``fayd.agent.skills``). The chit-chat model does
nothing, yet the small one says it did: "You've brought a nudge, I'll make one for you" to
a reminder request it was never able to keep. So every piece of a model reply is checked
(:func:`claims`, called by ``fayd.agent.guard.ReplyGuard``): a sentence that claims an
action ("I'll remind you", "I've set", "I've told", "I'll let them know", "I've called",
"I'll remember that", 我会提醒你, 已经设置, 我已经告诉 …) is not said. When the person had
asked for something, what is said instead is honest (:func:`instead`): how to ask for a
reminder when it looks like one, else "I can't do that from here."."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

_WE = r"\b(?:i|we)"
_WILL = r"(?:'ll|’ll| will| shall|'m going to| am going to|'m gonna| can now)"
#: Whom the model would tell: "them", "your son", "the doctor".
_WHO = r"(?:them|him|her|you|everyone|everybody|someone|somebody|(?:your|the|my) [a-z-]+)"
_HAVE = r"(?:'ve|’ve| have)(?: just| already| now| gone and)?"
#: Things the model would say it is going to do (none of which it can).
_WILL_DO = (
    r"(?:remind|set|set up|tell (?:them|him|her|your|the|my|everyone|everybody|someone|somebody)|"
    rf"let {_WHO} know|"
    r"pass (?:it|that|this|the message) on|call|ring|phone|text|message|e-?mail|send|book|order|"
    r"arrange|schedule|make (?:a|an|one|that|it|the|you|sure)|note|jot|write|save|add|"
    r"put (?:it|that|this|a|the|you)|turn|switch|lock|unlock|contact|alert|notify|wake|"
    r"remember|keep (?:a note|track|that in mind|it in mind|a record)|log|record|"
    r"check (?:on|in|for|with|that|back)|look (?:it|that|into)|get (?:help|someone|somebody|"
    r"an ambulance|a doctor|the doctor|a nurse|in touch)|give you a (?:shout|call|ring|nudge|"
    r"buzz|bell)|nudge|ping|buzz|start (?:a|the) timer|sort (?:it|that) out)\b"
)
#: Things the model would say it has done.
_HAVE_DONE = (
    rf"(?:set|set up|told|let {_WHO} know|called|"
    r"rung|rang|phoned|texted|messaged|e-?mailed|sent|booked|ordered|arranged|scheduled|made|"
    r"noted|jotted|written|saved|added|put|turned|switched|locked|unlocked|passed|contacted|"
    r"alerted|notified|reminded|remembered|created|started|logged|recorded|"
    r"informed|asked (?:them|him|her|your|the|someone)|sorted)\b"
)
_CLAIM = re.compile(
    rf"{_WE}{_WILL} (?:just |now |also |definitely |certainly |be sure to |make sure to )?"
    rf"{_WILL_DO}"
    rf"|{_WE}{_HAVE} {_HAVE_DONE}"
    r"|\b(?:your |a |the )?(?:reminder|timer|alarm|appointment|message|call)s? "
    r"(?:is|are|has been|have been|'s) (?:now )?(?:set|booked|made|saved|sent|on|scheduled|"
    r"arranged|added)\b"
    r"|^(?:ok(?:ay)?,? |right,? |sure,? )?(?:done|all set|consider it done|it's done)\b"
    # 我会提醒你, 我已经告诉, 已经设置好了, 帮你记下了, 我这就打电话
    r"|(?:我会|我来|我就|我这就|我马上|我已经|我已|已经|已|帮你|给你|我帮你|我给你)"
    r"(?:帮你|给你|替你)?(?:提醒|设置|设好|设定|设了|定好|定了|告诉|转告|通知|打电话|打给|"
    r"联系|叫你|喊你|记住|记下|记好|记着|安排|预约|发了|发给|发送|关掉|关上|打开|叫人|叫救护车)",
    re.IGNORECASE,
)


#: Consent to a request is a claim too: "Of course." to "could you ring my neighbour?".
_CONSENT = re.compile(
    r"^\W*(?:of course|sure|certainly|okay|ok|will do|no problem|right away|absolutely|gladly|"
    r"consider it done|yes,? (?:of course|i will|i can|sure))\b"
    r"|^(?:好的|好|没问题|行|可以)[，,。！!]",
    re.IGNORECASE,
)


def claims(text: str, question: str = "") -> bool:
    """The words claim an action taken or promised ("I'll remind you", "I've told your
    daughter", 我会提醒你; "Of course." when ``question`` asked for something): only a skill
    that did it may say that."""
    if _CLAIM.search(text):
        return True
    return bool(question and _CONSENT.search(text) and asked_for(question) is not None)


# A question that asks for something to be done.
_REMINDER_ASKED = re.compile(
    r"\b(remind|reminder|forget|forgetting|nudge|shout|ping|buzz|holler|alarm|wake me|"
    r"timer|jog my memory|let me know|tell me when|call me|give me a (?:bell|ring|knock))\b"
    r"|(提醒|别忘|忘了|叫我|喊我|闹钟|计时|到时候)"
)
_REQUEST = re.compile(
    r"^\W*(?:(?:oh|so|and|fay|please|love|dear)[ ,]+)*"
    r"(?:can|could|would|will|won't) (?:you|ya)\b|\b(?:please|for me)\b|^\W*(?:i want you to|"
    r"i need you to|i'd like you to|go and|make|book|order|send|call|ring|phone|tell|let|set|"
    r"turn|switch|lock|put|get)\b"
    r"|(请|帮我|你能|能不能|可以帮|给我|替我|麻烦你)",
    re.IGNORECASE,
)
_HONEST = {
    "reminder": (
        "Did you want me to set a reminder? Say 'remind me to …, at …'.",
        "你是想让我设个提醒吗？可以说：几点提醒我做什么。",
    ),
    "cannot": ("I can't do that from here.", "这个我在这里做不了。"),
}


class _Judged(Protocol):
    problem: str | None
    cut: str | None


def asked_for(question: str) -> str | None:
    """ "reminder" when the question reads like a reminder or timer request the router
    did not take; "cannot" when it asks for some other thing to be done; else None."""
    if _REMINDER_ASKED.search(question.lower()):
        return "reminder"
    return "cannot" if _REQUEST.search(question.strip()) else None


def instead(question: str, guards: Sequence[_Judged]) -> str | None:
    """The honest line to say when a guard stopped the model for a claim and the person had
    asked for something; None otherwise (then the sentence is only dropped)."""
    if not any("claim" in (g.problem, g.cut) for g in guards):
        return None
    kind = asked_for(question)
    if kind is None:
        return None
    zh = re.search(r"[\u3400-\u9fff]", question) is not None
    return _HONEST[kind][zh]
