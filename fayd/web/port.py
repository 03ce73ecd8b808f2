"""What the web page's own routes ask of the daemon (fayd.service.web_door answers). The page
uses the control API's routes for everything else (status, care, reminders)."""

from __future__ import annotations

from typing import Any, Protocol


class Household(Protocol):
    async def people(self) -> list[str]:
        """The household's members: users with a device, a setting or a conversation."""

    async def conversations(self, limit: int) -> list[dict[str, Any]]:
        """The newest messages, newest first: user, device, role, text, created_at."""

    async def memory_search(self, query: str, user: str | None, n: int) -> list[dict[str, Any]]:
        """Memory nodes for ``query`` (ValueError: a bad query or user; LookupError: no
        memory in this daemon)."""

    async def quarantine(self) -> list[dict[str, Any]]:
        """Memory writes held for review (fayd.memory.quarantine), pending ones."""

    async def decide(self, item: int, approve: bool) -> dict[str, Any]:
        """Approve (into live memory) or reject a held item; ValueError if it cannot be."""

    async def set_device(self, device: str, pairs: list[str], wait_s: float) -> dict[str, Any]:
        """``fayd devices set DEVICE key=value …`` through the daemon: stored, applied, and
        the device's answer (as ``POST /api/devices/{device}/settings``). ValueError: a bad
        setting; LookupError: no such device."""
