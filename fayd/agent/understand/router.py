"""The router: what a question is, decided in code before any LLM call, in a fixed order —
emergency, stop, the answer to a question a skill asked, qa.csv, the declarations' sentence
templates, what the model cannot know (the gate), cue phrases, feeling
unwell (fayd.agent.care.symptoms), small talk (written answers), intents by nearest
example, chit-chat (docs/understanding.md). Every decision keeps its score and the runner-up,
for ``fayd say --explain`` and the stored turn."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from fayd.agent.care.emergency import EmergencyDetector
from fayd.agent.care.symptoms import Symptom, SymptomsByMeaning, better, symptom
from fayd.agent.clock.pending import Pending
from fayd.agent.honest.gate import gate, gate_first
from fayd.agent.language.declared import Templates, with_mood
from fayd.agent.language.intents import Guess, IntentClassifier
from fayd.agent.language.text import language, normalize
from fayd.agent.smalltalk.kinds import SmallTalkByMeaning, small_talk
from fayd.agent.understand.cues import cue, fits_mood, told
from fayd.agent.understand.qa import HouseholdQa, QaTable
from fayd.agent.understand.slots import extract_slots
from fayd.embedding import EmbedderLike
from fayd.memory.mentioned import mentions

# Stop is said in a few words, the whole utterance, and must never wait for a guess.
_FILLER = r"(ok(ay)?|oh|do|please|fay|hey|alright|all right|right|now|dear|love|yes|no|well|enough|thank you|thanks|will you|would you|you can|for now|a minute|a moment|for a (minute|moment|bit)|i've heard enough|i('ve| have) had enough|that's plenty|that'll do|i don't want to hear (any more|anymore|it)|not now)"
_STOP = re.compile(
    rf"^({_FILLER}[ ,]*)*(stop|stop it|stop talking|stop there|be quiet|quiet|shush|shh+|hush|"
    r"shut up|enough|that's enough|that'll do|that's plenty|pause|silence|no more|"
    r"pipe down|give it a rest|stop now|hold on|wait)"
    rf"([ ,]*({_FILLER}|stop|quiet|shh+|shush|.{{0,30}}(doorbell|phone|door|telly|tv)('s)? (going|ringing)))*$"
    r"|^(你)?(先)?(停|停下|停一下|停停|别说了|不要说了|别念了|别讲了|闭嘴|安静|暂停|好了别说了|嘘|别出声了?)[，,。.！! 嘘]*((别|不要)(说|出声|念)了?)?$"
)


def is_stop(question: str) -> bool:
    """ "Stop", "be quiet", 别说了 …: the whole utterance asks fayd to stop talking."""
    return bool(_STOP.match(normalize(question)))


#: Feeling unwell (the ``symptom`` skill): recorded for the care digest, help offered.
SYMPTOM = "wellbeing.symptom"

#: Intents that keep something for later: only asked for in so many words (their cue
#: phrases), never on a guess ("my granddaughter visits on Sundays" is conversation).
ASKED_FOR = with_mood("asked_for")


@dataclass(frozen=True)
class Decision:
    intent: str  # "emergency", "stop", a skill's intent, or "chitchat"
    #: "emergency", "stop", "follow-up", "qa", "template", "gate", "cue", "symptom",
    #: "smalltalk", "told"
    #: (a fact said in passing), "intent" or "default"
    via: str
    score: float = 0.0
    runner_up: str = ""
    runner_up_score: float = 0.0
    slots: dict[str, Any] = field(default_factory=dict)
    lang: str = "en"
    #: qa.csv's fixed answer, when a row matched.
    answer: str = ""
    ms: float = 0.0

    def explain(self) -> dict[str, Any]:
        """What ``fayd say --explain`` prints and the stored turn keeps."""
        out = {
            "intent": self.intent,
            "via": self.via,
            "score": round(self.score, 3),
            "runner_up": self.runner_up,
            "runner_up_score": round(self.runner_up_score, 3),
            "ms": round(self.ms, 2),
        }
        return out


class Router:
    def __init__(
        self,
        embedder: EmbedderLike | None,
        intents: IntentClassifier | None,
        qa: QaTable | HouseholdQa | None = None,
    ) -> None:
        self.embedder = embedder
        self.intents = intents
        self.qa = qa
        self.templates = Templates()
        self.emergency = EmergencyDetector(embedder)
        self.small_talk = SmallTalkByMeaning(embedder) if embedder is not None else None
        self.symptoms = SymptomsByMeaning(embedder) if embedder is not None else None

    def route(self, question: str, now: datetime, pending: Pending | None = None) -> Decision:
        """``pending``: the question a skill asked this user and device, if still open."""
        started = time.perf_counter()
        decision = self._route(question, now, pending)
        ms = (time.perf_counter() - started) * 1000
        return Decision(**{**decision.__dict__, "ms": ms})

    def _route(self, question: str, now: datetime, pending: Pending | None) -> Decision:
        text, lang = normalize(question), language(question)
        vector = self.embedder.embed([text])[0] if self.embedder and text else None
        emergency = self.emergency.detect(text, vector)
        if emergency is not None:
            slots = {"kind": emergency.kind}
            return Decision("emergency", "emergency", emergency.score, slots=slots, lang=lang)
        if is_stop(question):
            return Decision("stop", "stop", 1.0, lang=lang)
        if pending is not None and (slots := pending.complete(question, now)) is not None:
            return Decision(pending.intent, "follow-up", 1.0, slots=slots, lang=pending.lang)
        if self.qa is not None and (hit := self.qa.match(text)) is not None:
            entry, score = hit
            slots = {"skill": entry.skill, "args": entry.args} if entry.skill else {}
            return Decision("qa", "qa", score, slots=slots, lang=lang, answer=entry.answer)
        if (matched := self.templates.match(text, lang)) is not None:  # a whole sentence
            return Decision(matched.intent, "template", 1.0, slots=matched.slots, lang=lang)
        guess = self.intents.guess(vector, text) if self.intents and vector is not None else None
        if guess is not None and (guess.intent in ASKED_FOR or not fits_mood(guess.intent, text)):
            guess = None  # "I'm not much of a dancer": a statement, not a request
        if guess is not None and guess.intent == "memory.recall" and told(text, question):
            # "the plumber is coming on Tuesday": told, not asked: kept, never "you haven't
            # told me that" to someone telling it
            guess = replace(guess, intent="memory.remember", runner_up="memory.recall")
        intent, gated = cue(text), gate(text, question)
        if gated is not None and gate_first(gated, intent):  # what the model cannot know
            return Decision(gated.intent, "gate", 1.0, slots=gated.slots, lang=lang)
        if intent is not None:
            slots = extract_slots(intent, question, now, lang)
            second, score = "", 0.0  # the meaning-based guess, when it differs
            if guess is not None:
                other = guess.intent != intent
                second = guess.intent if other else guess.runner_up
                score = guess.score if other else guess.runner_up_score
            return Decision(intent, "cue", 1.0, second, score, slots, lang)
        if (felt := symptom(text)) is not None:  # feeling unwell: before small talk's "ache"
            return _symptom(felt, question, lang)
        if better(text):  # "I'm much better, the dizziness has passed": glad, nothing kept
            return Decision(SYMPTOM, "symptom", 1.0, slots={"symptom": "better"}, lang=lang)
        if (topic := small_talk(text)) is not None:  # said, not asked: before any guess
            second, score = (guess.intent, guess.score) if guess is not None else ("", 0.0)
            return Decision("chitchat", "smalltalk", 1.0, second, score, topic, lang)
        if mentions(question):  # "my glasses are on the windowsill": kept and said back, never
            slots = {"query": question}  # left to a model that would put them on the floor
            return Decision("memory.recall", "told", 1.0, slots=slots, lang=lang)
        if guess is None or guess.intent == "chitchat" or not guess.confident:
            if self.symptoms is not None and vector is not None:
                if (felt := self.symptoms.guess(vector, text)) is not None:
                    return _symptom(felt, question, lang)
            if self.small_talk is not None and vector is not None:
                if (near := self.small_talk.guess(vector, text)) is not None:
                    second = guess.intent if guess is not None else ""
                    score = guess.score if guess is not None else 0.0
                    return Decision("chitchat", "smalltalk", near[1], second, score, near[0], lang)
            return _chitchat(lang, guess)
        slots = extract_slots(guess.intent, question, now, lang)
        return Decision(
            guess.intent, "intent", guess.score, guess.runner_up, guess.runner_up_score, slots, lang
        )


def _symptom(felt: Symptom, question: str, lang: str) -> Decision:
    """Feeling unwell, said without an emergency (fayd.agent.care.symptoms)."""
    slots = {"symptom": felt.kind, "words": felt.words, "said": question, "tell": felt.tell}
    if felt.where:
        slots["where"] = felt.where
    return Decision(SYMPTOM, "symptom", felt.score, slots=slots, lang=lang)


def _chitchat(lang: str, guess: Guess | None) -> Decision:
    """Talk for the model. A guess not confident enough to act on stays as the runner-up."""
    if guess is None:
        return Decision("chitchat", "default", lang=lang)
    if guess.intent == "chitchat":
        return Decision(
            "chitchat", "intent", guess.score, guess.runner_up, guess.runner_up_score, lang=lang
        )
    return Decision("chitchat", "default", 0.0, guess.intent, guess.score, lang=lang)
