"""From a question to what a turn does: the router's decision (docs/understanding.md), and
for everything but chit-chat the skill that serves it. A slot the sentence left ambiguous is
asked about; the answer, in that user's next turn on that device, completes it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import Any

from fayd.agent.care.skill import told_day
from fayd.agent.clock.pending import Pending
from fayd.agent.clock.times import Ambiguous, Impossible
from fayd.agent.expect import Expectations
from fayd.agent.language.declared import OWN, SKILL_OF
from fayd.agent.language.text import language, normalize
from fayd.agent.ports import CLI, CareDays, CareRules, Devices, Readings, Wellbeing
from fayd.agent.prefs import Preferences
from fayd.agent.skills import Context, Outcome, SkillError, Skills
from fayd.agent.smalltalk.told import Listening
from fayd.agent.understand.cues import named_day
from fayd.agent.understand.router import Decision, Router
from fayd.agent.understand.slots import pending_for
from fayd.logwords import words
from fayd.memory import Memory
from fayd.reminders import ReminderBook

log = logging.getLogger(__name__)


class Understanding:
    def __init__(
        self,
        router: Router,
        skills: Skills,
        devices: Devices,
        memory: Memory | None,
        prefs: Preferences,
        tz: tzinfo,
        clock: Callable[[], datetime] | None = None,
        reminders: ReminderBook | None = None,
        expectations: Expectations | None = None,
        days: CareDays | None = None,
        rules: CareRules | None = None,
        readings: Readings | None = None,
    ) -> None:
        """``clock``: the household's time now (tests give their own); ``expectations``:
        questions asked outside a turn (a medication check-in) whose answer may come;
        ``days``: the care digest, for "how was Mum today?"; ``rules``: care rules said
        by a caregiver ("tell me if Mum hasn't moved by 10")."""
        self.days = days
        self.rules = rules
        self.readings = readings  # the person's stored readings (fayd.agent.honest.skill)
        #: Feeling unwell kept as a care event, the family told (set by fayd.service).
        self.wellbeing: Wellbeing | None = None
        self.clock = clock or (lambda: datetime.now(tz))
        self.router = router
        self.skills = skills
        self.devices = devices
        self.memory = memory
        self.prefs = prefs
        self.tz = tz
        self.reminders = reminders
        self.expectations = expectations or Expectations()
        self._pending: dict[tuple[str, str], Pending] = {}
        self._listening = Listening()

    def now(self) -> datetime:
        return self.clock()

    def glance(self, text: str) -> Decision:
        """What the router makes of ``text`` alone, changing nothing (no open question is
        answered): semantic endpointing asks it of words still being spoken."""
        return self.router.route(text, self.now())

    def decide(self, question: str, user: str, device: str) -> Decision:
        """What the question is; an open question of a skill is answered or dropped here."""
        key = (user, device)
        answered = self._answered(question, user, device)
        if answered is not None:  # "yes" to "Did you take them?"
            return answered
        pending = self._pending.pop(key, None)
        if pending is not None and pending.expired(time.monotonic()):
            pending = None
        decision = self.router.route(question, self.now(), pending)
        if decision.intent == "chitchat" and decision.via != "smalltalk":
            # "it was only crumbs" after the smoke alarm: read once nothing else was found
            decision = self._answered(question, user, device, unrouted=True) or decision
        log.debug(  # the turn's INFO line (fayd.agent.conversation.log_turn) has no words
            "device %s: %s → %s (%s %.2f; runner-up %s %.2f)",
            device,
            words(question),
            decision.intent,
            decision.via,
            decision.score,
            decision.runner_up or "-",
            decision.runner_up_score,
        )
        return decision

    def _answered(
        self, question: str, user: str, device: str, unrouted: bool = False
    ) -> Decision | None:
        """The answer to an open question of fayd's, as a decision; None: no answer."""
        vouched = self.vouched(user, device)
        answered = self.expectations.take(user, question, vouched, device, unrouted)
        if answered is None:
            return None
        expected, value = answered
        slots = {"expected": expected, "value": value}
        return Decision("answer", "expected", 1.0, slots=slots, lang=language(question))

    async def act(
        self, decision: Decision, question: str, user: str, device: str
    ) -> Outcome | None:
        """The skill's outcome, or None when the model should answer (chit-chat)."""
        told = self._listening.follow_up((user, device), decision, question, time.monotonic())
        if told is not None:  # what the person tells after a loss or a low mood
            return await self._small_talk(decision.lang, told, user, device)
        if decision.intent == "chitchat" and (day := await self._named_day(question, user, device)):
            return day
        if decision.intent == "chitchat" and decision.via == "smalltalk":
            return await self._small_talk(decision.lang, decision.slots, user, device)
        if decision.intent == "answer":
            said = await decision.slots["expected"].then(decision.slots["value"])
            if isinstance(said, Outcome):  # the asker's own (remembered, with its detail)
                return said
            return Outcome(said, detail={"answer": str(decision.slots["value"])})
        if decision.intent in OWN:
            return None
        ctx = self.context(user, device, decision.lang)
        if decision.intent == "qa":
            return await self._qa(decision, ctx)
        args = dict(decision.slots)
        if decision.intent in ("emergency", "reminder.set", "timer.set", "medication.taken"):
            args["said"] = question
        asked = self._ask_or_refuse(decision, args, user, device)
        if asked is not None:
            return asked
        try:
            return await self.skills.run(SKILL_OF[decision.intent], _tool_args(args), ctx)
        except SkillError as exc:  # its message may quote what was said (a schema's check)
            log.error("skill for %s failed: %s", decision.intent, words(exc))
            log.debug("skill for %s failed: %s", decision.intent, words(exc))
            return Outcome(_sorry(decision.lang))

    async def _named_day(self, question: str, user: str, device: str) -> Outcome | None:
        """ "How was Rose today?" when the household has a Rose: her digest, to those who
        may hear it (else None: the model answers, as for "how was bingo today?")."""
        asked = named_day(normalize(question)) if self.days is not None else None
        if asked is None or self.days is None:
            return None
        name, which = asked
        day = self.now().date() - timedelta(days=1 if which == "yesterday" else 0)
        zh = language(question) == "zh"
        return await told_day(self.days, name, day, user, self.vouched(user, device), zh)

    def _ask_or_refuse(
        self, decision: Decision, args: dict[str, Any], user: str, device: str
    ) -> Outcome | None:
        """An impossible slot is said so (nothing is done); an ambiguous one is asked about."""
        for value in args.values():
            if isinstance(value, Impossible):
                return Outcome(value.reason, detail={"impossible": value.reason})
        pending = pending_for(decision.intent, args, decision.lang, time.monotonic())
        if pending is not None:
            self._pending[(user, device)] = pending
            question = args[pending.key]
            assert isinstance(question, Ambiguous)
            return Outcome(question.question, ask=pending, detail={"asked": pending.key})
        return None

    async def _small_talk(
        self, lang: str, slots: dict[str, Any], user: str, device: str
    ) -> Outcome | None:
        ctx = self.context(user, device, lang)
        try:
            return await self.skills.run("small_talk", dict(slots), ctx)
        except SkillError as exc:  # the model can still answer
            log.error("small talk failed: %s", exc)
            return None

    def vouched(self, user: str, device: str) -> bool:
        """The turn carries ``user``'s own authority (docs/security.md, *Who is who*)."""
        return device == CLI or self.devices.vouches(device, user)

    def context(self, user: str, device: str, lang: str) -> Context:
        """What a skill knows of a turn by ``user`` on ``device`` (also the tool loop's)."""
        return Context(
            user,
            device,
            lang,
            self.now(),
            self.devices,
            self.memory,
            self.prefs,
            self.reminders,
            self.expectations,
            self.days,
            self.rules,
            self.vouched(user, device),
            readings=self.readings,
            wellbeing=self.wellbeing,
        )

    async def _qa(self, decision: Decision, ctx: Context) -> Outcome:
        said = decision.answer
        skill = decision.slots.get("skill")
        if skill:
            try:
                done = await self.skills.run(skill, decision.slots.get("args") or {}, ctx)
                said = " ".join(x for x in (said, done.say) if x)
            except SkillError as exc:  # as above: the message may quote the arguments
                log.error("qa.csv's skill %s failed: %s", skill, words(exc))
                log.debug("qa.csv's skill %s failed: %s", skill, words(exc))
        return Outcome(said or _sorry(decision.lang), detail={"qa": decision.score})


def _tool_args(args: dict[str, Any]) -> dict[str, Any]:
    """Slots as a skill takes them (parsed objects stay objects; None is left out)."""
    return {k: v for k, v in args.items() if v is not None}


def _sorry(lang: str) -> str:
    return "对不起，我没做到。" if lang == "zh" else "Sorry, I couldn't do that."
