"""What the agent is given from outside, as plain types and Protocols: the engines it hears,
thinks and speaks with, and the devices it answers and acts on. ``fayd.service`` wires the
real ones in (the models it loaded; the device registry); nothing here imports them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from fayd.llm import ChatLlm
from fayd.protocol import Action, Alert
from fayd.speech import Asr, Tts

#: The administrator's own conversation (``fayd say``, ``fayd chat``, the API without a
#: device): behind the token, so its turns carry the authority of the user they name.
CLI = "cli"


@dataclass(frozen=True)
class AgentEngines:
    """None for a model that is missing (the turn then says so instead of answering)."""

    asr: Asr | None = None
    tts: Tts | None = None
    llm: ChatLlm | None = None


class CareDays(Protocol):
    """A household member's day in words, the caregivers' daily digest (fayd.care.daily
    serves it): what "how was Mum today?" is answered with."""

    async def about(self, who: str, day: date) -> str | None:
        """The digest of ``who``'s ``day``; None when no household member is called that."""
        ...

    async def watches(self, caregiver: str, person: str) -> bool:
        """Whether ``caregiver`` looks after ``person`` (docs/security.md, *Who is who*)."""
        ...

    async def person(self, word: str) -> str | None:
        """The household member ``word`` names, as kept ("Margaret" for "margaret"), or None."""
        ...

    async def looked_after(self, caregiver: str) -> list[str]:
        """The people ``caregiver`` looks after in particular: "Mum" said by a caregiver
        of one person is that person."""
        ...


@dataclass(frozen=True)
class Reading:
    """One stored sensor reading of a person (a care event): its sensor, when it was taken
    (Unix time) and its values ({"sys": 152, "dia": 96} for a blood pressure)."""

    sensor: str
    at: float
    values: dict[str, float]


class Readings(Protocol):
    """The readings the person's devices sent (the care events in SQLite; fayd.service
    serves it): what "what was my blood pressure?" is answered with, never the model."""

    async def latest(
        self, user: str, sensors: tuple[str, ...], after: float = 0.0, before: float | None = None
    ) -> Reading | None:
        """The newest reading of one of ``sensors`` from ``user``'s devices taken in
        [``after``, ``before``), with a value to say; None when there is none."""
        ...


@dataclass(frozen=True)
class RuleDraft:
    """A care rule a caregiver said, resolved against the household (fayd.service serves it
    on the care engine): the plain data ``rules.add`` takes, already checked as it would be
    kept — or why it cannot be."""

    rule: dict[str, Any] | None
    person: str = ""  # the household member it watches
    device: str | None = None  # the named room's sensor, when the household has one
    #: "" (it can be kept), "caregiver" (the speaker is not one), "person" (no such
    #: household member) or "rule" (the rule's own check refused it)
    problem: str = ""
    reason: str = ""  # one line: why not


class CareRules(Protocol):
    """Care rules said in words ("tell me if Mum hasn't moved by 10"), through the same
    checks as ``fayd care rules add``."""

    async def draft(
        self,
        caregiver: str,
        names: list[str],
        kind: str,
        spec: dict[str, Any],
        room: str | None = None,
    ) -> RuleDraft:
        """The rule for the first of ``names`` that is a household member (none: the owner
        of the room's sensor), told to ``caregiver``; nothing is stored."""
        ...

    async def add(self, rule: dict[str, Any]) -> list[str]:
        """Keep a drafted rule (checked again, one transaction); the names kept: its own, and
        with a person's first rule, the rule that sends their calls for help to the same
        caregivers. A FaydError with one line when it is refused now."""
        ...


class Devices(Protocol):
    """The household's devices as the agent sees them (``fayd.devices.actions`` serves it):
    whose each one is and what it can do, and the actions a skill may take on them."""

    def user_of(self, device: str) -> str | None:
        """The household member a device belongs to (its setting, else its hello)."""
        ...

    def vouches(self, device: str, user: str) -> bool:
        """Whether ``device`` is ``user``'s own, so a turn there carries their authority
        (over their care rules, the people they look after); a shared one never does."""
        ...

    def serves(self, device: str, user: str) -> bool:
        """Whether ``user``'s own words may be said on ``device``: theirs, a shared one that
        names them, or one nobody owns when they are the default user."""
        ...

    def has_role(self, device: str, role: str) -> bool: ...

    def audio_out_rate(self, device: str) -> int | None:
        """The rate its speaker wants (None: the voice's own)."""
        ...

    def language_of(self, device: str) -> str | None:
        """The language its speech is heard in ("en", "zh", "auto"; its ``language``
        setting); None: the household's ``speech.asr_language``."""
        ...

    def find(self, role: str | None = None, user: str | None = None) -> list[str]:
        """Online devices with ``role`` (any when None) belonging to ``user`` (any when
        None), sorted."""
        ...

    def act(self, device: str, action: Action) -> bool:
        """A semantic Action for a robot or screen, outside a reply."""
        ...

    def volume_of(self, device: str) -> int | None:
        """The speaker's volume as last set (None: never set, the device's own)."""
        ...

    def set_volume(self, device: str, volume: int) -> bool:
        """0-100, kept as the device's setting (it is told again when it reconnects)."""
        ...

    def set_brightness(self, device: str, level: int) -> bool: ...

    def sleep_until(self, device: str, until: float) -> None:
        """fayd starts no talk on the device before ``until`` (Unix time)."""
        ...

    def assigned(self, user: str, role: str) -> list[str]:
        """Every known device (online or not) with ``role`` that belongs to ``user``."""
        ...

    def asleep_until(self, device: str) -> float:
        """Until when fayd starts no talk on the device (Unix time; 0: awake)."""
        ...

    def raise_alert(self, alert: Alert) -> bool:
        """Tell the person's devices, their caregivers' and the household
        (``<prefix>/alerts/<id>``, retained) at once; True when a caregiver will be told too
        (a care rule watches the person's calls)."""
        ...


class Wellbeing(Protocol):
    """What a person says of how they feel, kept as a care event (sensor ``wellbeing``) the
    care rules, the daily digest and ``fayd today`` see; and a notice to the family who look
    after them, when the person wants it (fayd.service.wellbeing serves it)."""

    async def record(self, user: str, device: str, data: dict[str, Any], at: float) -> int:
        """Keep it as ``user``'s (on any device); the stored event's id."""
        ...

    async def family(self, user: str) -> list[str]:
        """The caregivers who look after ``user`` (none: there is no one to tell)."""
        ...

    async def tell_family(self, user: str, title: str, body: str) -> list[str]:
        """Queue a notice to them (the care outbox: retried until it goes); who it is for."""
        ...
