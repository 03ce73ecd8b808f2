"""An answer expected in a user's next turn: "Did you take them?" → yes / no / later, or
"Which one?" → the second. Whoever asked says how to read the answer and what to do with it;
a turn that is no answer goes on as usual (the question stays open until it expires).

The care engine's check-ins use the same port (:class:`YesNo`): ask a user a yes/no question
aloud and get "yes", "no", "later", or None when no answer came in time."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from fayd.agent.understand.text import normalize

#: An expected answer stays open this long unless the asker says otherwise.
TTL_S = 600.0

_YES = re.compile(
    r"^((oh|well|um|er|fay|dear)[ ,]+)*(yes|yeah|yep|yup|aye|i did|i have|done|already|"
    r"i('ve| have) (taken|had) (them|it|my \w+)|of course|sure|ok(ay)?|i took (them|it)|"
    r"took (them|it)|just did|all done)\b|^(吃了|吃过了|已经吃了|是的|对|嗯|好了|吃啦)"
)
_NO = re.compile(
    r"^((oh|well|um|er|fay|dear)[ ,]+)*(no|nope|not yet|i haven't|i didn't|i forgot|"
    r"nah|not today)\b|^(没有|还没|没吃|忘了|不)"
)
_LATER = re.compile(
    r"\b(later|in a (minute|bit|while|moment)|not now|remind me (again )?(later|in)|"
    r"give me (a|two|five|ten|fifteen|\d+) (minute|min)s?|"
    r"after (lunch|dinner|breakfast|tea)|snooze)\b"
    r"|(等一下|等会|待会|一会儿|稍后|晚点)"
)


def yes_no(text: str) -> str | None:
    """ "yes", "no", "later" — or None when the words are none of these."""
    said = normalize(text)
    if not said or len(said.split()) > 10:
        return None
    if _LATER.search(said):
        return "later"
    if _NO.search(said):
        return "no"
    if _YES.search(said):
        return "yes"
    return None


@dataclass
class Expected:
    read: Callable[[str], Any | None]  # the answer in the words, None: not an answer
    then: Callable[[Any], Awaitable[str]]  # what to say once answered
    until: float  # time.monotonic()
    #: Answered only on the person's own device (a care check-in: "I'm fine" stops the
    #: caregivers being told, so a shared device's claim of the person is not enough).
    own_device: bool = False


class Expectations:
    """Open questions, one per user (a newer one replaces the older)."""

    def __init__(self) -> None:
        self._open: dict[str, Expected] = {}

    def expect(
        self,
        user: str,
        read: Callable[[str], Any | None],
        then: Callable[[Any], Awaitable[str]],
        ttl_s: float = TTL_S,
        own_device: bool = False,
    ) -> None:
        self._open[user] = Expected(read, then, time.monotonic() + ttl_s, own_device)

    def is_open(self, user: str) -> bool:
        found = self._open.get(user)
        return found is not None and found.until > time.monotonic()

    def take(self, user: str, text: str, own_device: bool = False) -> tuple[Expected, Any] | None:
        """The open question ``text`` answers (closed now) and the answer, or None.
        ``own_device``: said on the user's own device (fayd.agent.ports.Devices.vouches)."""
        found = self._open.get(user)
        if found is None or (found.own_device and not own_device):
            return None
        if found.until <= time.monotonic():
            del self._open[user]
            return None
        value = found.read(text)
        if value is None:
            return None
        del self._open[user]
        return found, value

    def drop(self, user: str) -> None:
        self._open.pop(user, None)


class Say(Protocol):
    async def announce(
        self, user: str, text: str, *, urgent: bool = False, kind: str = "reminder"
    ) -> bool: ...


class YesNo(Protocol):
    """Ask a user a yes/no question aloud; their answer or None (no answer in time)."""

    async def ask(
        self, user: str, question: str, *, timeout_s: float, urgent: bool = False
    ) -> str | None: ...


_YES_NO_REPLY = {"yes": "Good.", "no": "All right.", "later": "All right, later then."}


class AskYesNo:
    """:class:`YesNo` on an announcer (says the question) and the expectations (hear the
    answer in the user's next turn). ``timeout_s`` is real time."""

    def __init__(
        self,
        say: Say,
        expectations: Expectations,
        read: Callable[[str], str | None] = yes_no,
        reply: Callable[[str], str] | None = None,
        own_device: bool = False,
    ) -> None:
        self.say = say
        self.expectations = expectations
        #: The answer in the user's words (None: not an answer), and what fayd says to it.
        self.read = read
        self.reply = reply or _YES_NO_REPLY.__getitem__
        self.own_device = own_device

    async def ask(
        self, user: str, question: str, *, timeout_s: float, urgent: bool = False
    ) -> str | None:
        got: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def then(answer: str) -> str:
            if not got.done():
                got.set_result(answer)
            return self.reply(answer)

        self.expectations.expect(user, self.read, then, timeout_s, self.own_device)
        await self.say.announce(user, question, urgent=urgent, kind="question")
        try:
            async with asyncio.timeout(timeout_s):
                return await got
        except TimeoutError:
            self.expectations.drop(user)
            return None
