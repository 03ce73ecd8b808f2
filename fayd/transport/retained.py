"""What a device may leave retained on fayd's own broker, and the clearing of the rest.

mosquitto's ACL cannot forbid the retain flag on a topic, so a device could leave a
retained message on any of its ``up`` topics, and the broker keeps it (in memory and in
mosquitto.db) and hands it to fayd at every connect. The protocol retains only a device's
``hello`` and ``presence`` (docs/protocol.md). fayd reads the broker's retained uplink
messages at each connect and again now and then (fayd.transport.mqtt,
``MqttLink.replay_retained``); any other one, or one over :data:`RETAINED_MAX` bytes, is
cleared with an empty retained message and not taken as a frame (docs/security.md,
"Quotas")."""

from __future__ import annotations

import logging
from collections.abc import Callable

from fayd.protocol import Hello, Presence, Topics
from fayd.protocol.text import shown

log = logging.getLogger(__name__)

#: The kinds a device publishes retained (its last will is a retained presence).
RETAINED_KINDS = frozenset({Hello.KIND, Presence.KIND})
#: The largest retained message kept: a hello is a few hundred bytes (its caps), and this
#: leaves it room to grow while a device's retained messages stay small.
RETAINED_MAX = 16 * 1024
#: How often fayd asks the broker for its retained uplink messages again (besides each
#: connect and each ``fayd devices add/remove``): what a device left retained meanwhile is
#: cleared within this time; until then the ACL bounds it to one message per kind.
REPLAY_S = 600.0
#: At most this many clearings awaited at once (their empty echo is dropped, see below).
PENDING_MAX = 4096

#: Publishes (topic, payload, retain) and says whether it was queued.
Publish = Callable[..., bool]


def allowed(kind: str, payload: bytes) -> bool:
    """Whether a retained message of ``kind`` may stay in the broker's store."""
    return kind in RETAINED_KINDS and len(payload) <= RETAINED_MAX


class RetainedJanitor:
    """Clears the retained uplink messages the protocol does not make. fayd's own
    subscription hears its empty clearing message as a frame from the device: :meth:`echo`
    says to drop it (it is not the device's, and an empty frame would be answered with an
    error frame)."""

    def __init__(self, topics: Topics, publish: Publish) -> None:
        self.topics = topics
        self.publish = publish
        self.cleared = 0
        self._pending: set[tuple[str, str]] = set()

    def check(self, device: str, kind: str, payload: bytes) -> bool:
        """A retained message from the broker's store: True when it may stay (a frame to
        handle); else it is cleared now and False."""
        if not payload or allowed(kind, payload):
            return True
        if len(self._pending) < PENDING_MAX:
            self._pending.add((device, kind))
        if self.publish(self.topics.up(device, kind), b"", retain=True):
            self.cleared += 1
            why = "over the size" if kind in RETAINED_KINDS else "not a retained kind"
            log.warning(
                "cleared the retained %s of device %s (%d bytes, %s)",
                kind,
                shown(device[:64]),
                len(payload),
                why,
            )
        return False

    def echo(self, device: str, kind: str, payload: bytes) -> bool:
        """Whether this live message is fayd's own clearing of (device, kind) coming back."""
        if payload or (device, kind) not in self._pending:
            return False
        self._pending.discard((device, kind))
        return True
