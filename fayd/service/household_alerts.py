"""Who hears of an alert: the devices of its person and the own devices of their
caregivers, and the retained copy on the broker (docs/security.md, *Who is who*)."""

from __future__ import annotations

from collections.abc import Callable

from fayd.care.effects import on_the_wire
from fayd.care.household import Household
from fayd.devices.registry import DeviceRegistry, DeviceState
from fayd.protocol import Alert, Sender


class HouseholdAlerts:
    """Alerts to the household (the care engine's Publisher, and the emergency skill's):
    each goes, as ``on_the_wire`` shows it, to the devices of its person and to the own
    devices of the caregivers who look after them (docs/security.md, *Who is who*), and
    retained on ``<prefix>/alerts/<id>``, which only fayd's and Home Assistant's accounts
    read. An acknowledged or resolved one: its retained message cleared and its last state
    told once (docs/protocol.md). A device that says hello is told the open ones it may see."""

    def __init__(
        self,
        registry: DeviceRegistry,
        sender: Sender,
        announce: Callable[[Alert], None] | None,
        conclude: Callable[[Alert], None] | None,
    ) -> None:
        self.registry, self.sender = registry, sender
        self.announce, self.conclude = announce, conclude
        #: Who looks after whom (the care engine's, set once it is built).
        self.household: Callable[[], Household] = Household
        self.open: dict[str, Alert] = {}

    def recipients(self, alert: Alert) -> list[str]:
        if alert.user is None:  # the household's own (the disk)
            return self.registry.find()
        found = set(self.registry.serving(alert.user))
        watchers = self.household().watchers(alert.user)
        found.update(d for d in self.registry.find() if self.registry.personal_owner(d) in watchers)
        return sorted(found)

    def publish(self, alert: Alert) -> None:
        shown = on_the_wire(alert)
        # An alert the devices have open already (the emergency skill's, kept by the care
        # engine under the same id; a second call of the same incident) is not sent again:
        # a screen would show it twice and a pendant beep twice.
        again = alert.state == "open" and alert.id in self.open
        for device in [] if again else self.recipients(alert):
            self.sender.send(device, shown)
        if alert.state == "open":
            self.open[alert.id] = alert
        else:
            self.open.pop(alert.id, None)
        tell = self.announce if alert.state == "open" else self.conclude
        if tell is not None:
            tell(shown)

    def said_hello(self, state: DeviceState) -> None:
        for alert in list(self.open.values()):
            if state.id in self.recipients(alert):
                self.sender.send(state.id, on_the_wire(alert))
