"""The daemon's side of the household page (fayd.web): its ``Household`` port, answered
from the store and the agent's parts, and the hooks that feed the page's live updates."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fayd.care import records as care_records
from fayd.devices.registry import DeviceRegistry, DeviceState
from fayd.errors import FaydError
from fayd.memory import Memory, quarantine
from fayd.protocol import Alert
from fayd.protocol.frames import check_device_id
from fayd.service.wiring import Parts
from fayd.store import Store, records
from fayd.store import devices_records as reg
from fayd.web import Live

log = logging.getLogger(__name__)


class DaemonHousehold:
    """fayd.web.Household, from the parts the daemon built (fayd.service.wiring.Parts)."""

    def __init__(self, store: Store, parts: Parts, default_user: str) -> None:
        self.store = store
        self.parts = parts
        self.default_user = default_user

    async def people(self) -> list[str]:
        known = await self.store.run(care_records.known, self.default_user)
        return sorted(known.users)

    async def conversations(self, limit: int) -> list[dict[str, Any]]:
        rows = await self.store.run(records.recent_turns, limit)
        return [{k: v for k, v in r.items() if k != "meta"} for r in rows]

    def _memory(self) -> Memory:
        if self.parts.memory is None:
            raise LookupError("this fayd runs without long-term memory")
        return self.parts.memory

    async def memory_search(self, query: str, user: str | None, n: int) -> list[dict[str, Any]]:
        memory = self._memory()
        return await asyncio.to_thread(memory.search, query, username=user, n=n, stateless=True)

    async def quarantine(self) -> list[dict[str, Any]]:
        return await asyncio.to_thread(quarantine.list_items, self._memory(), "pending")

    async def decide(self, item: int, approve: bool) -> dict[str, Any]:
        memory = self._memory()
        decide = quarantine.approve if approve else quarantine.reject
        done = await asyncio.to_thread(decide, memory, item)
        return {"id": done["id"], "status": done["status"]}

    async def set_device(self, device: str, pairs: list[str], wait_s: float) -> dict[str, Any]:
        try:
            device = check_device_id(device)
            changes = dict(reg.parse_setting(pair) for pair in pairs)  # all checked first
        except FaydError as exc:
            raise ValueError(str(exc)) from exc
        if device not in await self.store.run(reg.known_devices):
            raise LookupError(f"no device {device!r}")
        await self.store.run(reg.set_settings, device, changes)
        # Applied now, not at the next poll (confirm_settings reloads them first).
        answer = await self.parts.registry.confirm_settings(device, wait_s)
        row = next(r for r in await self.store.run(reg.registry) if r["id"] == device)
        log.info("web page: device %s settings %s", device, pairs)
        return {"device": device, "settings": row["settings"], **answer}


def feed_live(live: Live, registry: DeviceRegistry) -> None:
    """Device presence to the page, beside whatever else listens (Home Assistant)."""

    def seen(state: DeviceState) -> None:
        live.publish("device", {"device": state.id, "online": bool(state.online)})

    registry.on_seen.append(seen)


def alert_to_live(live: Live, alert: Alert) -> None:
    live.publish("alert", {"id": alert.id, "state": alert.state, "severity": alert.severity})
