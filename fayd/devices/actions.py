"""The agent's view of the devices (``fayd.agent.ports.Devices``): the registry's answers
about a device, and the actions a skill may take on one outside a reply — move a robot,
stop playback, show text, set the volume — each sent as the device's own frames."""

from __future__ import annotations

from fayd.devices.registry import DeviceRegistry
from fayd.protocol import Action, Command, Human, Sender


class DeviceActions:
    def __init__(self, registry: DeviceRegistry, sender: Sender) -> None:
        self.registry = registry
        self.sender = sender

    def user_of(self, device: str) -> str | None:
        return self.registry.user_of(device)

    def has_role(self, device: str, role: str) -> bool:
        return self.registry.has_role(device, role)

    def audio_out_rate(self, device: str) -> int | None:
        return self.registry.audio_out_rate(device)

    def find(self, role: str | None = None, user: str | None = None) -> list[str]:
        return self.registry.find(role, user)

    def act(self, device: str, action: Action) -> bool:
        """A bare Action (no text, no speech): a robot moves, a screen shows the affect."""
        return self.sender.send(device, Human(key="text", text="", is_first=True, action=action))

    def stop_playback(self, device: str) -> bool:
        return self.sender.send(device, Command("stop", {"reason": "asked"}))

    def show_text(self, device: str, text: str) -> bool:
        shown = self.sender.send(device, Human(key="text", text=text, is_first=True))
        return shown and self.sender.send(device, Human(key="text", text="", is_end=True))

    def set_volume(self, device: str, volume: int) -> bool:
        if not 0 <= volume <= 100:
            raise ValueError(f"volume must be 0-100, not {volume}")
        return self.sender.send(device, Command("volume", {"volume": volume}))
