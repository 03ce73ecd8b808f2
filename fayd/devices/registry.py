"""The devices fayd knows while it runs: each one's hello, presence, settings and error
budget. Settings (``fayd devices set``) live in SQLite; the registry reads them at start
and polls for changes every SETTINGS_POLL_S (a query only when the database files changed),
so the CLI works with or without the daemon. It also answers the agent's questions about a
device (whose it is, what it can do: ``fayd.agent.ports.Devices``)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fayd.beat import until_beat
from fayd.devices.owners import ClaimRefused, Ownership
from fayd.devices.settings_acks import SettingsAcks, report
from fayd.errors import ProtocolError, StoreError
from fayd.protocol import Command, Error, Hello, Sender
from fayd.protocol.budget import ErrorBudget
from fayd.store import Store, prefs_records, records
from fayd.store import devices_records as reg
from fayd.store.devices_records import DeviceSettings

log = logging.getLogger(__name__)

SETTINGS_POLL_S = 2.0
#: Settings are read at least this often, even when the database files look unchanged.
SETTINGS_FULL_S = 30.0
#: The settings a device is told about (``command`` "settings"); ``user`` stays in fayd.
DEVICE_SIDE = ("wake", "wake_threshold", "volume", "barge_in")
#: Error budgets kept for ids that never said anything valid.
MAX_STRANGERS = 1024


def db_files(path: Path) -> tuple[Any, ...]:
    """(mtime, size) of an SQLite database and its WAL: a write changes one of them."""
    out: list[Any] = []
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


@dataclass
class DeviceState:
    """What the registry knows of a device while the daemon runs."""

    id: str
    hello: Hello | None = None
    online: bool = False
    settings: DeviceSettings = field(default_factory=DeviceSettings)
    errors: ErrorBudget = field(default_factory=ErrorBudget)
    #: fayd starts no talk on it before this (Unix time; "sleep for an hour").
    asleep_until: float = 0.0

    @property
    def user(self) -> str | None:
        """The registry's setting wins over what the device says in its hello."""
        if self.settings.user:
            return self.settings.user
        return self.hello.user if self.hello else None

    @property
    def ownership(self) -> Ownership:
        return Ownership(self.user, self.settings.shared or ())

    def has_role(self, role: str) -> bool:
        return bool(self.hello and role in self.hello.roles)


#: Called when a device's settings changed: (its state, the settings it had before).
SettingsChanged = Callable[[DeviceState, DeviceSettings], Awaitable[None]]
#: Called after a device's hello or presence was taken in (it must not block).
Seen = Callable[[DeviceState], None]


class DeviceRegistry:
    def __init__(self, store: Store, sender: Sender, default_user: str = "User") -> None:
        self.store = store
        self.sender = sender
        #: Whom a device nobody was given to speaks for (``agent.default_user``).
        self.default_user = default_user
        self.states: dict[str, DeviceState] = {}
        self.settings: dict[str, DeviceSettings] = {}
        self.settings_rev = 0
        #: Told when a device's settings change (the microphones update wake word, barge-in).
        self.on_settings: SettingsChanged | None = None
        #: Told of each hello and presence once stored (Home Assistant's entities, the
        #: household page's live updates).
        self.on_seen: list[Seen] = []
        #: Told of each hello once taken in (the open alerts the device may see).
        self.on_hello: Seen | None = None
        #: The settings commands sent and the devices' answers (``fayd devices set``).
        self.acks = SettingsAcks()
        self._strangers: dict[str, ErrorBudget] = {}
        #: Hellos the disk refused, by device: written by the settings poll once it can.
        self.unsaved: dict[str, Hello] = {}

    def state(self, device: str) -> DeviceState:
        """The device's state, made on its first valid frame."""
        found = self.states.get(device)
        if found is None:
            found = DeviceState(device, settings=self.settings.get(device, DeviceSettings()))
            if device in self._strangers:
                found.errors = self._strangers.pop(device)
            self.states[device] = found
        return found

    def budget(self, device: str) -> ErrorBudget:
        """The device's error budget; an id that never sent a valid frame gets one too."""
        found = self.states.get(device)
        if found is not None:
            return found.errors
        if len(self._strangers) > MAX_STRANGERS:
            self._strangers.clear()
        return self._strangers.setdefault(device, ErrorBudget())

    async def hello(self, state: DeviceState, hello: Hello) -> None:
        if hello.device != state.id:
            raise ProtocolError(
                f"hello names device {hello.device!r} on the topic of {state.id!r}", "bad-id"
            )
        owner = state.user
        if hello.user and owner and hello.user != owner:
            # A device's owner is the household's choice (its setting, else its first hello),
            # not what a later hello claims: it keeps its owner, and is told unless the name
            # is one of a shared device's members.
            try:
                state.ownership.speaker(hello.user)
            except ClaimRefused as exc:
                self._refuse_claim(state, exc)
            hello = dataclasses.replace(hello, user=owner)
        state.hello, state.online = hello, True
        log.info(
            "device %s: hello (roles %s, fw %s)", hello.device, ",".join(hello.roles), hello.fw
        )
        self._tell_settings(state)  # first: a disk that refuses the row costs it nothing
        if self.on_hello is not None:
            self.on_hello(state)
        try:
            await self.store.run(records.upsert_device, hello)
        except (StoreError, OSError):  # a full disk: held in memory, written later
            self.unsaved[hello.device] = hello
            raise
        self.unsaved.pop(hello.device, None)
        for told in self.on_seen:
            told(state)

    async def presence(self, device: str, online: bool) -> None:
        state = self.state(device)
        state.online = online
        await self.store.run(records.set_presence, device, online)
        for told in self.on_seen:
            told(state)

    async def load_known(self, fresh_broker: bool = False) -> None:
        """Devices seen before this start keep their roles until they say hello again;
        the registry's settings apply from the start. ``fresh_broker``: fayd's own broker
        has just started, so no device is connected yet, whatever was stored (a fayd killed
        -9 took its broker along before any last will was said)."""
        await self.reload_settings()
        for row in await self.store.run(records.list_devices):
            try:
                known = {k: v for k, v in row.items() if v is not None}
                hello = Hello.from_dict({**known, "device": row["id"]})
            except ProtocolError:
                continue
            state = self.state(row["id"])
            state.hello, state.online = hello, bool(row["online"]) and not fresh_broker
            if fresh_broker and row["online"]:
                await self.store.run(records.set_presence, state.id, False)
        for device, until in (await self.store.run(prefs_records.device_sleep)).items():
            self.state(device).asleep_until = until

    async def poll_settings(self) -> None:
        """Forever: apply settings changed by ``fayd devices set`` (a supervised task)."""
        seen: tuple[Any, ...] | None = None
        asked = time.monotonic()
        while True:
            await asyncio.sleep(until_beat(SETTINGS_POLL_S))  # with the other pollers
            # Settings change only by a write to the database files: while their sizes and
            # times stay the same, skip the query (and waking the store's thread, which an
            # idle daemon should not). Asked anyway every SETTINGS_FULL_S, in case a write
            # came within the file clock's resolution of the last look.
            files = db_files(self.store.path)
            if files == seen and not self.unsaved and time.monotonic() - asked < SETTINGS_FULL_S:
                continue
            try:
                await save_unsaved(self.store, self.unsaved)
                await self.reload_settings()
                seen, asked = files, time.monotonic()
            except Exception as exc:  # a busy or broken disk: try again next time
                log.warning("could not read device settings: %s", exc)

    async def reload_settings(self) -> None:
        """Apply settings changed since the last look."""
        self.settings_rev, changed = await self.store.run(reg.settings_since, self.settings_rev)
        for device, settings in changed.items():
            self.settings[device] = settings
            state = self.states.get(device)
            if state is None or state.settings == settings:
                continue
            old, state.settings = state.settings, settings
            log.info("device %s: settings %s", device, settings.to_dict() or "cleared")
            if self.on_settings is not None:
                await self.on_settings(state, old)
            if state.hello is not None:
                self._tell_settings(state)

    def live_status(self, device: str) -> dict[str, Any]:
        """What ``fayd status`` adds to a device's stored row from the registry."""
        state = self.states.get(device)
        if state is None:
            return {}
        out: dict[str, Any] = {
            "user": state.user,
            "settings": state.settings.to_dict(),
            "errors_suppressed": state.errors.suppressed,
        }
        if state.asleep_until > time.time():
            out["asleep_until"] = state.asleep_until
        return out

    # --- the agent's questions (fayd.agent.ports.Devices) ------------------------------------
    def user_of(self, device: str) -> str | None:
        state = self.states.get(device)
        return state.user if state else None

    def vouches(self, device: str, user: str) -> bool:
        state = self.states.get(device)
        return bool(state and state.ownership.vouches(user, self.default_user))

    def serving(self, user: str | None) -> list[str]:
        """Online devices on which ``user``'s alerts may be shown (docs/security.md)."""
        return sorted(
            s.id
            for s in self.states.values()
            if s.online and s.ownership.serves(user, self.default_user)
        )

    def personal_owner(self, device: str) -> str | None:
        """The owner of ``device`` when it is one person's own, else None."""
        state = self.states.get(device)
        return state.user if state and state.ownership.personal else None

    def _refuse_claim(self, state: DeviceState, exc: ClaimRefused) -> None:
        if state.errors.take(time.monotonic()):
            log.warning("device %s: refused: %s", state.id, exc)
            self.sender.send(state.id, Error.of(exc))

    def has_role(self, device: str, role: str) -> bool:
        state = self.states.get(device)
        return bool(state and state.has_role(role))

    def audio_out_rate(self, device: str) -> int | None:
        state = self.states.get(device)
        hello = state.hello if state else None
        return hello.audio_out.rate if hello and hello.audio_out else None

    def find(self, role: str | None = None, user: str | None = None) -> list[str]:
        return sorted(
            s.id
            for s in self.states.values()
            if s.online and (role is None or s.has_role(role)) and (user is None or s.user == user)
        )

    def _device_side(self, state: DeviceState) -> dict[str, Any]:
        return {k: v for k, v in state.settings.to_dict().items() if k in DEVICE_SIDE}

    def _tell_settings(self, state: DeviceState) -> None:
        """The device-side settings (volume, wake word) as a ``settings`` command with an
        id: the device's ack says which it applied (SettingsAcks)."""
        args = self._device_side(state)
        if args:
            ref = self.acks.sending(state.id, args)
            if not self.sender.send(state.id, Command("settings", args, ref)):
                self.acks.not_sent(state.id)

    async def confirm_settings(self, device: str, wait_s: float) -> dict[str, Any]:
        """``fayd devices set`` wrote settings: apply them now (not at the next poll), and
        wait up to ``wait_s`` for the device to acknowledge them. ``state`` is "applied"
        (the device acked), "refused" (it answered with an error), "offline", "silent" (no
        answer in time) or "fayd" (nothing for the device: fayd alone applies them)."""
        await self.reload_settings()
        state = self.states.get(device)
        args = self._device_side(state) if state else {}
        if state is None or not state.online or state.hello is None:
            return {"state": "offline" if args else "fayd", "device_side": args}
        if not args:
            return {"state": "fayd", "device_side": args}
        sent = self.acks.sent.get(device)
        if sent is None or sent.args != args:  # not told yet (the poller may have been first)
            self._tell_settings(state)
        sent, answer = await self.acks.wait(device, wait_s)
        if sent is None:
            return {"state": "offline", "device_side": args}
        if answer is None:
            return {"state": "silent", "device_side": args, "wait_s": wait_s}
        return {**report(sent.args, answer), "device_side": sent.args}


async def save_unsaved(store: Store, unsaved: dict[str, Hello]) -> None:
    """Write the hellos the disk refused (their devices are linked to their people in
    memory meanwhile: ``DeviceRegistry.user_of``)."""
    for device, hello in list(unsaved.items()):
        await store.run(records.upsert_device, hello)
        if unsaved.get(device) is hello:
            del unsaved[device]
        log.info("device %s: its hello is written now", device)
