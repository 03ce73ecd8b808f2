"""An answer expected in a user's next turn: "Did you take them?" → yes / no / later, or
"Which one?" → the second. Whoever asked says how to read the answer and what to do with it;
a turn that is no answer goes on as usual (the question stays open until it expires).

The care engine's check-ins use the same port (:class:`YesNo`): ask a user a yes/no question
aloud and get "yes", "no", "later", or None when no answer came in time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

#: An expected answer stays open this long unless the asker says otherwise.
TTL_S = 600.0


@dataclass
class Expected:
    read: Callable[[str], Any | None]  # the answer in the words, None: not an answer
    #: What to say once answered: the words, or a skill's Outcome (fayd.agent.skills) when
    #: the exchange is also to be remembered ("My hip hurts" after a fall).
    then: Callable[[Any], Awaitable[Any]]
    until: float  # Expectations.clock()
    #: Answered only on the person's own device (a care check-in: "I'm fine" stops the
    #: caregivers being told, so a shared device's claim of the person is not enough).
    own_device: bool = False
    #: Answered only on these devices (a care check-in: where the question was said).
    on: frozenset[str] | None = None
    #: Read only when the router found nothing else in the words (an open "Can you tell me
    #: what you're feeling?" must not swallow "stop" or "what time is it?").
    last: bool = False


class Expectations:
    """Open questions, one per user (a newer one replaces the older)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._open: dict[str, Expected] = {}
        #: Seconds, for the questions' lifetimes (the daemon's test clock moves it on).
        self.clock = clock

    def expect(
        self,
        user: str,
        read: Callable[[str], Any | None],
        then: Callable[[Any], Awaitable[Any]],
        ttl_s: float = TTL_S,
        own_device: bool = False,
        on: frozenset[str] | None = None,
        last: bool = False,
    ) -> None:
        self._open[user] = Expected(read, then, self.clock() + ttl_s, own_device, on, last)

    def is_open(self, user: str) -> bool:
        found = self._open.get(user)
        return found is not None and found.until > self.clock()

    def take(
        self,
        user: str,
        text: str,
        own_device: bool = False,
        device: str | None = None,
        unrouted: bool = False,
    ) -> tuple[Expected, Any] | None:
        """The open question ``text`` answers (closed now) and the answer, or None.
        ``own_device``: said on the user's own device (fayd.agent.ports.Devices.vouches);
        ``device``: where it was said (a question asked on some devices is answered there);
        ``unrouted``: the router found nothing else in the words (see Expected.last)."""
        found = self._open.get(user)
        if found is None or (found.own_device and not own_device) or found.last > unrouted:
            return None
        if found.on is not None and device not in found.on:
            return None
        if found.until <= self.clock():
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
    answer in the user's next turn). ``read``: the answer in the user's words, or None
    (``fayd.agent.care.answers.yes_no``); ``timeout_s`` is real time."""

    def __init__(
        self,
        say: Say,
        expectations: Expectations,
        read: Callable[[str], str | None],
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
