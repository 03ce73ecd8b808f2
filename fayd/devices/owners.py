"""Whose a device is, and whom its frames speak for (docs/security.md, *Who is who*).

- A **personal** device (``fayd devices set NAME user=mum``, or the user of its first hello)
  speaks for its owner only: a frame that names anyone else is refused.
- A **shared** device (``shared=alice,bob``: a kitchen speaker) may name one of its members;
  a frame that names nobody is its ``user``'s (else the household's default user). It never
  carries anyone's authority over others (their health, their alerts, their care rules).
- A device nobody was given to speaks for the household's default user (with their
  authority: in a home of one, it is theirs), and may name no one.

Plain data: the registry holds each device's :class:`Ownership`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fayd.errors import ProtocolError

#: The error code of a refused claim (docs/protocol.md, *error*).
CLAIM = "user-claim"


class ClaimRefused(ProtocolError):
    """A device named a person it may not speak for."""

    def __init__(self, message: str) -> None:
        super().__init__(message, CLAIM)


@dataclass(frozen=True)
class Ownership:
    owner: str | None = None
    shared: tuple[str, ...] = ()

    @property
    def personal(self) -> bool:
        """One person's own device: it carries that person's authority."""
        return bool(self.owner) and not self.shared

    def speaker(self, claim: str | None) -> str | None:
        """Whom a frame that names ``claim`` (None: nobody) speaks for; None: the household's
        default user. ClaimRefused when the device may not speak for ``claim``."""
        if claim is None:
            return self.owner
        if claim == self.owner or claim in self.shared:
            return claim
        if self.shared:
            members = ", ".join(self.shared)
            raise ClaimRefused(f"this shared device speaks for {members} only, not {claim!r}")
        if self.owner:
            raise ClaimRefused(f"this device is {self.owner}'s: it cannot speak for {claim!r}")
        raise ClaimRefused(
            f"this device belongs to nobody, so it cannot speak for {claim!r}"
            " (fayd devices set DEVICE user=NAME)"
        )

    def vouches(self, user: str, default_user: str) -> bool:
        """Whether a turn on this device as ``user`` carries ``user``'s own authority: their
        personal device, or one nobody was given to for the household's default user."""
        if self.shared:
            return False
        return (self.owner or default_user) == user

    def serves(self, user: str | None, default_user: str) -> bool:
        """Whether ``user``'s alerts may be shown on this device."""
        who = user or default_user
        return (self.owner or default_user) == who or who in self.shared
