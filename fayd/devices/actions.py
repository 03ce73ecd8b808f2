"""The agent's view of the devices (``fayd.agent.ports.Devices``): the registry's answers
about a device, and the actions a skill may take on one outside a reply — move a robot,
stop playback, show text, set the volume or brightness, put it to sleep, raise an alert —
each sent as the device's own frames and, where it must last, kept in the database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from fayd.devices.registry import DeviceRegistry
from fayd.protocol import Action, Alert, Command, Human, Sender
from fayd.store import devices_records as reg
from fayd.store import prefs_records

log = logging.getLogger(__name__)


class DeviceActions:
    def __init__(
        self,
        registry: DeviceRegistry,
        sender: Sender,
        announce: Callable[[Alert], bool | None] | None = None,
    ) -> None:
        """``announce`` publishes an alert for the household (retained, on MQTT)."""
        self.registry = registry
        self.sender = sender
        self.announce = announce
        self._writes: set[asyncio.Task[Any]] = set()

    def user_of(self, device: str) -> str | None:
        return self.registry.user_of(device)

    def has_role(self, device: str, role: str) -> bool:
        return self.registry.has_role(device, role)

    def audio_out_rate(self, device: str) -> int | None:
        return self.registry.audio_out_rate(device)

    def find(self, role: str | None = None, user: str | None = None) -> list[str]:
        return self.registry.find(role, user)

    def language_of(self, device: str) -> str | None:
        state = self.registry.states.get(device)
        return state.settings.language if state else None

    def volume_of(self, device: str) -> int | None:
        state = self.registry.states.get(device)
        return state.settings.volume if state else None

    def act(self, device: str, action: Action) -> bool:
        """A bare Action (no text, no speech): a robot moves, a screen shows the affect."""
        return self.sender.send(device, Human(key="text", text="", is_first=True, action=action))

    def set_volume(self, device: str, volume: int) -> bool:
        if not 0 <= volume <= 100:
            raise ValueError(f"volume must be 0-100, not {volume}")
        state = self.registry.state(device)
        state.settings = type(state.settings)(**{**state.settings.__dict__, "volume": volume})
        self._keep(reg.set_settings, device, {"volume": volume})
        return self.sender.send(device, Command("volume", {"volume": volume}))

    def set_brightness(self, device: str, level: int) -> bool:
        if not 0 <= level <= 100:
            raise ValueError(f"brightness must be 0-100, not {level}")
        return self.sender.send(device, Command("brightness", {"level": level}))

    def sleep_until(self, device: str, until: float) -> None:
        self.registry.state(device).asleep_until = until
        self._keep(prefs_records.set_device_sleep, device, until)

    def assigned(self, user: str, role: str) -> list[str]:
        states = self.registry.states.values()
        return sorted(s.id for s in states if s.user == user and s.has_role(role))

    def asleep_until(self, device: str) -> float:
        state = self.registry.states.get(device)
        return state.asleep_until if state else 0.0

    def raise_alert(self, alert: Alert) -> bool:
        """To the household through ``announce`` (the person's devices and their
        caregivers'; True when a caregiver will be told); without it, to the person's own
        devices only."""
        if self.announce is not None:
            return bool(self.announce(alert))
        for device in self.registry.serving(alert.user):
            self.sender.send(device, alert)
        return False

    def vouches(self, device: str, user: str) -> bool:
        return self.registry.vouches(device, user)

    def serves(self, device: str, user: str) -> bool:
        state = self.registry.states.get(device)
        return bool(state and state.ownership.serves(user, self.registry.default_user))

    def _keep(self, write: Callable[..., Any], *args: Any) -> None:
        """A write to the database, in the background (the loop goes on; a failure is
        logged: the device was told already)."""

        async def run() -> None:
            try:
                await self.registry.store.run(write, *args)
            except Exception as exc:
                log.error("could not keep %s for %s: %s", write.__name__, args[0], exc)

        task = asyncio.get_running_loop().create_task(run())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
