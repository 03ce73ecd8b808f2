"""The daemon: opens the store, loads the models, starts the components under the
supervisor, says READY=1 when it can serve, and shuts everything down on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import gc
import json
import logging
import os
import secrets
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

from fayd import __version__
from fayd.auth import ensure_token, verify_ota_signature
from fayd.auth.tokens import state_mode
from fayd.care import admin as care_admin
from fayd.config import Config
from fayd.devices.ota import OtaError, OtaFile
from fayd.errors import ConfigError, FaydError
from fayd.homeassistant import HomeAssistantBridge, Naming
from fayd.logwords import hide_secrets
from fayd.protocol import Alert, Topics, encode
from fayd.protocol.text import shown
from fayd.service.api import ApiServer, build_app
from fayd.service.disk import DiskWatch
from fayd.service.doors import open_doors
from fayd.service.engines import Engines, load_engines
from fayd.service.health import assess
from fayd.service.heap import limit_arenas, trim_forever
from fayd.service.homeassistant import connect as connect_home_assistant
from fayd.service.homeassistant import naming as home_assistant_naming
from fayd.service.looplag import LoopLag
from fayd.service.model_watch import ModelWatch
from fayd.service.notify import Notifier
from fayd.service.preflight import Ports, check_files, check_ports
from fayd.service.supervisor import Supervisor, feed_watchdog
from fayd.service.web_door import alert_to_live
from fayd.service.wiring import Parts, Reminding, build
from fayd.service.workers import WorkerPool, worker_pool
from fayd.store import Store, records
from fayd.store import devices_records as reg
from fayd.store.backup import folder_of
from fayd.store.nightly import NightlyBackup
from fayd.store.recovery import open_checked
from fayd.store.reserve import Reserve
from fayd.transport.broker import EmbeddedBroker, broker_folder, stop_stale_broker
from fayd.transport.broker_files import ClientAccount, broker_account
from fayd.transport.broker_tls import default_names, ensure_tls
from fayd.transport.hotplug import SerialWatcher
from fayd.transport.mqtt import MqttLink
from fayd.transport.retained import REPLAY_S, RetainedJanitor
from fayd.transport.router import Router
from fayd.web import WebPage
from fayd.zone import household_zone

log = logging.getLogger(__name__)

#: The embedded mosquitto's pid while it runs, in the state folder (stop_stale_broker).
BROKER_PID = "broker.pid"


class RecentProblems(logging.Handler):
    """Keeps the last warnings and errors for ``fayd status``."""

    def __init__(self, size: int = 20) -> None:
        super().__init__(logging.WARNING)
        self.records: collections.deque[dict[str, Any]] = collections.deque(maxlen=size)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(
            {"at": record.created, "level": record.levelname, "message": record.getMessage()}
        )


def private_state_dir(state_dir: Path) -> None:
    """The state folder holds the household's memory, device keys and the API token: the
    daemon's user's alone (0700) or, under systemd, group fayd's too (0750: see
    fayd.auth.tokens.state_mode); one more open than that is closed."""
    most = state_mode()
    state_dir.mkdir(mode=most, parents=True, exist_ok=True)
    mode = state_dir.stat().st_mode & 0o777
    if mode & ~most:
        os.chmod(state_dir, mode & most)
        log.warning("%s was open to others (%04o); it is %04o now", state_dir, mode, mode & most)


def take_state_lock(state_dir: Path) -> IO[str]:
    """One daemon per state folder: two would fight over the database and the ports."""
    private_state_dir(state_dir)
    handle = (state_dir / "fayd.lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        handle.seek(0)
        other = handle.read().strip() or "?"
        handle.close()
        raise FaydError(f"another fayd (pid {other}) is already running on {state_dir}") from exc
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def embedded_broker(
    cfg: Config,
    port: int,
    secrets: Callable[[], Awaitable[dict[str, str]]],
    clients: tuple[ClientAccount, ...],
) -> EmbeddedBroker:
    """fayd's own mosquitto: the household's CA stays in the state folder (devices are
    given its ca.crt); mosquitto's own files may live elsewhere when it cannot reach that
    (root runs)."""
    mqtt = cfg.mqtt
    account = broker_account()
    tls = None
    if mqtt.tls_port:
        names = list(mqtt.tls_names) or default_names(mqtt.embedded_host)
        tls = ensure_tls(cfg.state_dir / "mosquitto" / "tls", mqtt.tls_port, names)
    folder, own = broker_folder(cfg.state_dir, account), cfg.state_dir / "mosquitto"
    return EmbeddedBroker(
        folder,
        mqtt.embedded_host,
        port,
        secrets,
        binary=mqtt.mosquitto_bin,
        prefix=mqtt.prefix,
        tls=tls,
        account=account,
        pid_file=cfg.state_dir / BROKER_PID,
        clients=clients,
        # A folder outside the state folder (in /tmp, when fayd is root) holds password
        # hashes and saved alerts: it goes when the broker stops; its database is kept in
        # the state folder meanwhile.
        kept_db=None if folder == own else own / "mosquitto.db",
    )


def serial_watcher(
    cfg: Config, store: Store, inbound: Callable[[str, str, bytes], Awaitable[None]]
) -> SerialWatcher | None:
    """The serial ports' watcher (serial.enabled), checking each board's proof with its
    device's key (fayd.transport.serial_auth)."""
    if not cfg.serial.enabled:
        return None

    async def device_key(device: str) -> str | None:
        return await store.run(reg.device_secret, device)

    return SerialWatcher(
        inbound,
        device_key,
        patterns=cfg.serial.patterns,
        interval=cfg.serial.poll_s,
        baudrate=cfg.serial.baudrate,
        queue_size=cfg.serial.queue_size,
        max_backoff=cfg.serial.max_backoff_s,
    )


def write_runtime(cfg: Config, api_url: str, broker_url: str, started_at: float) -> None:
    """<state>/runtime.json: where the CLI and `fayd sim` find this daemon (written whole)."""
    runtime = {
        "pid": os.getpid(),
        "version": __version__,
        "api": api_url,
        "mqtt": broker_url,
        "prefix": cfg.mqtt.prefix,
        "started": started_at,
    }
    path = cfg.runtime_path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(runtime, indent=2), encoding="utf-8")
    tmp.replace(path)


class Daemon:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.notifier = Notifier()
        self.supervisor = Supervisor()
        self.problems = RecentProblems()
        self.started_at = time.time()
        self.ready = False
        self.engines = Engines()
        #: Notices a model file that breaks while fayd runs (set once the models load).
        self.model_watch: ModelWatch | None = None
        self.parts: Parts | None = None
        #: Set once the parts are built: inbound frames wait for it.
        self._built = asyncio.Event()
        self.broker: EmbeddedBroker | None = None
        self.store: Store | None = None
        self.backups: NightlyBackup | None = None
        self.disk: DiskWatch | None = None
        self.loop_lag = LoopLag()
        #: The loop's default executor (set when run() starts).
        self.workers: WorkerPool | None = None
        #: The ports to listen on, and the defaults that were taken (preflight).
        self.ports = Ports(cfg.api.port, cfg.mqtt.embedded_port)
        #: What a user should know about this start (shown by ``fayd status``).
        self.notices: list[str] = []
        #: What the caregivers are told of a damaged database (fayd.store.recovery).
        self.damage_summary: str | None = None
        #: Home Assistant discovery (homeassistant.enabled) and its broker account.
        self.home_assistant: HomeAssistantBridge | None = None
        self.broker_clients: tuple[ClientAccount, ...] = ()
        self.ha_names: Naming | None = None
        #: The devices with a key: the only ones the embedded broker lets in.
        self.keyed: set[str] = set()
        #: Devices on a shared broker that are not this box's, each logged once.
        self._strangers: set[str] = set()
        #: Clears what devices leave retained beyond the protocol (embedded broker only).
        self.janitor: RetainedJanitor | None = None
        #: (device, kind) of retained hellos and presences logged as not of now since the
        #: link's last connect.
        self._told_replayed: set[tuple[str, str]] = set()
        #: The household page (fayd.web): its logins, and the live updates of open pages.
        self.web = WebPage.of(cfg.state_dir)

    async def run(self) -> None:
        logging.getLogger().addHandler(self.problems)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        limit_arenas()  # before the workers start: see heap.py
        # Model work (asyncio.to_thread) runs below the loop's priority: see workers.py.
        self.workers = worker_pool()
        loop.set_default_executor(self.workers)
        try:
            await self._serve(stop)
        finally:
            logging.getLogger().removeHandler(self.problems)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    async def _serve(self, stop: asyncio.Event) -> None:
        cfg = self.cfg
        try:
            lock = take_state_lock(cfg.state_dir)  # held (open) until this method returns
        except OSError as exc:
            raise ConfigError(
                f"{cfg.setting('paths.state_dir')}: cannot use {cfg.state_dir}: {exc.strerror}"
            ) from exc
        try:
            cfg.runtime_path.unlink(missing_ok=True)  # a killed fayd's: its URLs are dead
            # A broker left by a fayd that died without its cleanup would hold the port
            # with an old password (the lock says no fayd owns it now).
            stopped = await asyncio.to_thread(stop_stale_broker, cfg.state_dir / BROKER_PID)
            if stopped:
                log.warning("%s", stopped)
                self.notices.append(stopped)
            # Settings that name missing files, or ports that are taken, stop the start now,
            # before seconds of model loading.
            self.notifier.status("checking the settings")
            check_files(cfg)
            self.ports = check_ports(cfg)
            # A damaged database is moved aside and fayd starts from the last good backup
            # (fayd.store.recovery): said in the log and by `fayd status`.
            self.notifier.status("checking the database")
            self.store, found = await asyncio.to_thread(
                open_checked, cfg.db_path, folder_of(cfg.state_dir)
            )
            self.notices.extend(found)
            self.damage_summary = found.summary
        except BaseException:
            lock.close()
            raise
        try:
            # The broker first: devices reconnect (and queue their unacked events) while
            # the models load, instead of after (a restart's recovery, issue 14).
            await self._start_transport()
            self.notifier.status("loading models")
            self.engines = await asyncio.to_thread(load_engines, cfg)
            await self._start_components(stop)
            await stop.wait()
        finally:
            log.info("stopping")
            self.notifier.stopping()
            await self.supervisor.stop()
            if self.parts is not None:
                await self.parts.dialogue.close()
                if self.parts.tools is not None:
                    await asyncio.to_thread(self.parts.tools.close)
            with contextlib.suppress(FileNotFoundError):
                cfg.runtime_path.unlink()
            await asyncio.to_thread(self.store.close)
            lock.close()
            log.info("stopped")

    async def _start_transport(self) -> None:
        """The broker (when embedded) and fayd's link to it, and the serial watcher: frames
        that come in before the agent is built wait for it (``_inbound``)."""
        cfg = self.cfg
        self.link = MqttLink(
            Topics(cfg.mqtt.prefix),
            self._mqtt_inbound,
            # Not guessable from `fayd status` (an external broker without
            # use_username_as_clientid would let a client with that id kick fayd off).
            client_id=f"fayd-{secrets.token_hex(6)}",
            username=cfg.mqtt.username,
            password=cfg.mqtt.password,
            keepalive=cfg.mqtt.keepalive_s,
            queue_size=cfg.mqtt.queue_size,
        )
        assert self.store is not None
        self.serial = serial_watcher(cfg, self.store, self._inbound)
        if cfg.homeassistant.enabled:  # its account is on the broker from the start
            self.ha_names, account = home_assistant_naming(cfg, cfg.state_dir)
            self.broker_clients = (account,)
        if cfg.mqtt.url == "embedded":
            self.broker = await asyncio.to_thread(
                embedded_broker, cfg, self.ports.broker, self._device_secrets, self.broker_clients
            )
            # The broker admits fayd and the added devices only, each device to its own
            # topics; fayd logs in as its all-topics user.
            self.link.username, self.link.password = self.broker.credentials
            self.link.replayed = self._mqtt_replayed
            self.link.replay_s = REPLAY_S
            self.janitor = RetainedJanitor(self.link.topics, self.link.publish)
            # Each connect's replay is logged once again; the periodic ones in between not.
            self.link.on_connect.append(self._told_replayed.clear)
            self.supervisor.start("broker", self.broker.run)
        else:  # the household's broker: the devices this box answers (mqtt.only_added)
            await self._device_secrets()
        self.supervisor.start("mqtt", lambda: self.link.run(self._broker_url), self.link.pulse)

    async def _start_components(self, stop: asyncio.Event) -> None:
        cfg, store = self.cfg, self.store
        assert store is not None
        topics = self.link.topics

        def announce(alert: Alert) -> None:
            self.link.announce(topics.alert(alert.id), encode(alert))
            alert_to_live(self.web.live, alert)

        def conclude(alert: Alert) -> None:  # acknowledged or resolved (fayd.care)
            self.link.announce(topics.alert(alert.id), b"")
            self.link.publish(topics.alert(alert.id), encode(alert), retain=False)
            alert_to_live(self.web.live, alert)

        sender = Router(self.link, self.serial)
        parts = self.parts = build(cfg, store, self.engines, sender, announce, conclude)
        self.loop_lag.busy = lambda: parts.hub.talking or parts.dialogue.busy
        if self.workers is not None:  # doors' work waits for the room's (fayd.precedence)
            self.workers.room_busy = parts.dialogue.room_busy
        await parts.registry.load_known(fresh_broker=self.broker is not None)
        self._built.set()
        if self.ha_names is not None:
            known = await store.run(reg.known_devices)
            ha = connect_home_assistant(cfg, self.ha_names, self.link, parts, announce, known)
            self.home_assistant = ha
            await self.link.catch_up()  # its topics, on the connection made before it
            self.supervisor.start("homeassistant", ha.run)
        token = await asyncio.to_thread(ensure_token, cfg.state_dir)
        doors = open_doors(cfg, parts, store, self.web, self.started_at, self)
        self.api = ApiServer(
            build_app(self, doors.routes), cfg.api.host, self.ports.api, token, doors.lock
        )
        self.supervisor.start("mcp", doors.mcp.run)  # MCP's sessions: no lifespan on the API

        backups = folder_of(cfg.state_dir)
        self.backups = NightlyBackup(cfg.db_path, backups, cfg.backup, household_zone(cfg))
        self.supervisor.start("backup", self.backups.run)

        def alert_devices(alert: Alert) -> None:
            for device in parts.registry.find():
                sender.send(device, alert)
            announce(alert)

        self.disk = DiskWatch(
            cfg.state_dir,
            cfg.paths.disk_warn_mb,
            cfg.paths.disk_warn_percent,
            lambda: self.engines.files.values(),
            alert_devices,
            Reserve(cfg.state_dir, cfg.paths.disk_reserve_mb),
            parts.care.tell_everyone,
        )
        store.on_full = self.disk.reserve.release if self.disk.reserve else None
        self.supervisor.start("disk", self.disk.run)
        if self.damage_summary is not None:
            summary = self.damage_summary

            async def tell_damage() -> None:  # the caregivers, in plain words
                reached = await parts.care.tell_everyone("fayd: the database was damaged", summary)
                log.warning("the damaged database was told to %d caregivers", reached)

            self.supervisor.start("tell_damage", tell_damage)
        self.model_watch = ModelWatch(cfg, self.engines)
        self.supervisor.start("models", self.model_watch.run)
        pulses = parts.pulses()
        for name, task in parts.tasks(cfg, self.engines).items():
            self.supervisor.start(name, task, pulses.get(name))
        if self.serial is not None:
            self.supervisor.start("serial", self.serial.run)
        self.supervisor.start("api", self.api.run)
        self.supervisor.start("looplag", self.loop_lag.run)
        self.supervisor.start("heap", trim_forever)

        await self._until_listening()
        # Start-up leaves ~70,000 objects that live as long as the daemon (modules, models,
        # config). A full collection walked them all, holding the GIL: 85-160 ms of stalled
        # loop when their memory had gone cold, and the first one fell in the first idle
        # minute (measured). Frozen, the collector skips them; garbage is freed as before.
        gc.collect()
        gc.freeze()
        broker_url = self.broker.url if self.broker else hide_secrets(cfg.mqtt.url)
        write_runtime(cfg, self.api.url, broker_url, self.started_at)
        self.ready = True
        missing = ", ".join(sorted(self.engines.problems))
        fallen = ", ".join(sorted(self.engines.fallbacks))
        broker = "connected" if self.link.status.connected else "connecting"
        said = f"serving; broker {broker}; {len(parts.registry.states)} devices"
        said += f"; missing models: {missing}" if missing else ""
        said += f"; default models instead of your own: {fallen}" if fallen else ""
        self.notifier.ready(said)
        log.info("ready: %s", said)
        interval = self.notifier.watchdog_interval()
        if interval:  # systemd arms the watchdog at READY=1
            sup, ping = self.supervisor, self.notifier.watchdog
            self.supervisor.start("watchdog", lambda: feed_watchdog(sup, ping, interval))

    async def _until_listening(self) -> None:
        """Ready = the API answers and, when fayd owns the broker, devices can connect. If
        either fails before that, the start fails with its reason: under systemd a daemon
        that never gets ready is restarted, so say why and stop."""
        loop = asyncio.get_running_loop()
        listening = {"api": self.api.started}
        if self.broker:
            listening["broker"] = self.broker.ready
        failed: asyncio.Future[tuple[str, str]] = loop.create_future()

        def first_failure(name: str, error: str) -> None:
            if name in listening and not failed.done():
                failed.set_result((name, error))

        async def all_listening() -> None:
            for event in listening.values():
                await event.wait()

        self.supervisor.on_failure = first_failure
        for name in listening:  # the broker started before the models: it may have failed
            state = self.supervisor.states.get(name)
            if state is not None and state.failures:
                first_failure(name, state.last_error or "failed")
        started = asyncio.ensure_future(all_listening())
        try:
            await asyncio.wait({started, failed}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.supervisor.on_failure = None
        if not started.done():
            started.cancel()
            if not failed.done():
                log.error("not every component started within 15 s; serving what runs")
        if failed.done():
            name, error = failed.result()
            what = {"api": "the control API", "broker": "the embedded broker"}[name]
            raise FaydError(f"{what} could not start: {error.split(': ', 1)[-1]}")
        # A default port that was taken: where fayd listens instead (log and status).
        urls = {"api.port": self.api.url, "mqtt.embedded_port": self.broker and self.broker.url}
        for key, why in self.ports.moved.items():
            self.notices.append(f"{key} {why}: fayd listens on {urls[key]} instead")
            log.warning("%s", self.notices[-1])

    async def _device_secrets(self) -> dict[str, str]:
        assert self.store is not None
        found = await self.store.run(reg.device_secrets)
        self.keyed = set(found)
        return found

    async def reload_devices(self) -> dict[str, Any]:
        """``fayd devices add/remove`` changed the devices' keys: the broker's accounts are
        written again and reloaded (a removed device is disconnected at once), a serial
        board whose key is gone or new must prove itself again, and a removed device's Home
        Assistant entities go."""
        if self.serial is not None:
            dropped = await self.serial.recheck()
            if dropped:
                log.info("serial ports whose device's key changed: %s", ", ".join(dropped))
        if self.home_assistant is not None:
            assert self.store is not None
            self.home_assistant.forget_missing(await self.store.run(reg.known_devices))
        if self.broker is None:
            await self._device_secrets()  # a device added here is answered from now on
            return {"broker": "external", "accounts": None}
        accounts = await self.broker.reload()
        # What is retained is looked at again now: a removed device's hello goes at once.
        await self.link.replay_retained()
        return {"broker": "embedded", "accounts": accounts}

    async def confirm_settings(self, device: str, wait_s: float) -> dict[str, Any]:
        """``fayd devices set``: the stored settings applied now; the device's answer."""
        assert self.parts is not None
        return await self.parts.registry.confirm_settings(device, wait_s)

    async def release_serial(self, port: str, seconds: float) -> dict[str, Any]:
        """``fayd devices add NAME --port P``: the hot-plug watcher lets go of P for a while
        (fayd.transport.hotplug), so mpremote can copy the firmware through it."""
        if self.serial is None:  # serial.enabled = false: fayd holds no port
            return {"port": port, "released": False, "watched": False}
        return await self.serial.release(port, seconds)

    async def _mqtt_inbound(self, device: str, kind: str, payload: bytes) -> None:
        if self.janitor is not None and self.janitor.echo(device, kind, payload):
            return  # fayd's own clearing of a retained message, heard back
        if self.broker is not None and device not in self.keyed:
            # Only a device with a key logs in to the embedded broker as that device, so
            # this is either the retained hello of one removed (fayd devices remove) while
            # fayd was stopped, which must not bring it back (cleared; its clearing comes
            # back empty), or another account (Home Assistant's) writing under its own name.
            if kind == "hello" and payload:
                log.info("%s has no key: its retained hello is cleared", device)
                self.link.publish(self.link.topics.up(device, kind), b"", retain=True)
            return
        if self.broker is None and self.cfg.mqtt.only_added and device not in self.keyed:
            # A shared broker: another box's device, or one never added (docs/several-boxes.md).
            # No answer, no record: the box that added it answers it.
            if len(self._strangers) < 1000 and device not in self._strangers:
                self._strangers.add(device)
                log.info(
                    "device %s was not added on this box: its frames are ignored",
                    shown(device[:64]),
                )
            return
        await self._inbound(device, kind, payload)

    async def _mqtt_replayed(self, device: str, kind: str, payload: bytes) -> None:
        """A device's retained message from fayd's own broker's store (at each connect,
        and again every REPLAY_S): its hello and presence are of before, not of now (the
        device says them again when it connects), so they do not make it online; anything
        else the protocol does not retain, and is cleared (fayd.transport.retained)."""
        if self.janitor is not None and not self.janitor.check(device, kind, payload):
            return
        if kind in ("hello", "presence") and device in self.keyed:
            if (device, kind) not in self._told_replayed:  # once a connect, not every replay
                self._told_replayed.add((device, kind))
                log.info(
                    "device %s: its %s from before this start is not taken as now", device, kind
                )
            return
        await self._mqtt_inbound(device, kind, payload)

    async def _inbound(self, device: str, kind: str, payload: bytes) -> None:
        await self._built.wait()  # frames of the model-loading seconds wait here
        assert self.parts is not None
        await self.parts.hub.inbound(device, kind, payload)

    async def _broker_url(self) -> str:
        if self.broker is None:
            return self.cfg.mqtt.url
        await self.broker.ready.wait()
        return self.broker.url

    async def status(self, lag_since: float = 0.0) -> dict[str, Any]:
        assert self.store is not None and self.parts is not None
        devices = await self.store.run(records.list_devices)
        for device in devices:
            device.update(self.parts.device_status(device["id"]))
        models = models_status(self.cfg, self.engines, self.model_watch)
        components = self.supervisor.status()
        events = self.parts.events
        health = assess(
            serving=self.ready,
            connected=self.link.status.connected,
            link_error=self.link.status.last_error,
            components=components,
            embedded_ready=self.broker.ready.is_set() if self.broker else None,
            events_failing=events.failing,
            events_held=events.held,
            models=models,
        )
        return {
            "version": __version__,
            "pid": os.getpid(),
            **health,
            "uptime_s": round(time.time() - self.started_at, 1),
            "config": self.cfg.source or "(embedded defaults)",
            "state_dir": str(self.cfg.state_dir),
            "broker": {
                "embedded": self.broker is not None,
                # Where the embedded broker listens (`fayd homeassistant`, `fayd doctor`).
                "embedded_host": self.cfg.mqtt.embedded_host if self.broker else None,
                **vars(self.link.status),
            },
            "serial": self.serial.status() if self.serial else None,
            "models": models,
            "devices": devices,
            "components": components,
            "frames": self.parts.frame_stats(),
            "reminders": self.parts.reminders.status(),
            "loop_lag": self.loop_lag.summary(lag_since),
            "last_problems": list(self.problems.records),
            "notices": self.notices,
            "backup": self.backups.status() if self.backups else None,
            "disk": await asyncio.to_thread(self.disk.status) if self.disk else None,
            "care": await self.parts.care.status(),
            "digest": await self.parts.digest.status() if self.parts.digest else None,
            "homeassistant": self.home_assistant.status() if self.home_assistant else None,
            "tools": await asyncio.to_thread(self.parts.tools.status) if self.parts.tools else None,
        }

    async def care(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """``fayd care …`` and ``POST /api/care/<op>``: rules, caregivers, alerts, digest."""
        assert self.parts is not None
        return await care_admin.handle(self.parts.care, op, body)

    async def ota_push(
        self, device: str, version: str, files: list[OtaFile], signature: str
    ) -> dict[str, Any]:
        """``fayd devices ota``: a new app version to a device that has said hello, only
        when signed with the device's key (which the device checks again)."""
        assert self.store is not None
        secret = await self.store.run(reg.device_secret, device)
        if secret is None:
            raise OtaError(f"{device} has no key: give it one with fayd devices add {device}", 409)
        manifest = [(f.path, len(f.data), f.sha256) for f in files]
        if not verify_ota_signature(secret, device, version, manifest, signature):
            raise OtaError(
                "the update's signature is wrong: updates come from fayd devices ota", 403
            )
        rows = await self.store.run(records.list_devices)
        row = next((d for d in rows if d["id"] == device), None)
        if row is None:
            raise LookupError(f"no device {device!r} has said hello")
        if not row["online"]:
            raise LookupError(f"{device} is offline")
        assert self.parts is not None
        return await self.parts.ota.push(device, version, files, signature)

    @property
    def reminding(self) -> Reminding | None:
        return self.parts.reminders if self.parts is not None else None

    async def say(self, text: str, user: str | None, device: str | None) -> dict[str, Any]:
        """A typed turn from the API (``fayd say``/``chat``): the agent's one way of running
        a turn, spoken on ``device`` when one is named."""
        assert self.parts is not None
        if device is not None and device not in self.parts.registry.states:
            raise LookupError(f"no device {device!r} has said hello")
        turn = await self.parts.dialogue.say(text, user, device)
        if turn is None:
            raise LookupError("the turn was interrupted or failed; see the log")
        return {
            "reply": turn.answer,
            "sentences": turn.sentences,
            "timings": turn.timings,
            "decision": turn.decision,
        }

    async def start_over(self, user: str | None, device: str | None) -> dict[str, Any]:
        """``fayd chat --reset``: the next turn starts a new conversation; memory stays."""
        assert self.parts is not None
        user = user or self.cfg.agent.default_user
        await self.parts.dialogue.chat.start_over(user, device or "cli")
        return {"user": user, "device": device or "cli", "reset": True}


def models_status(
    cfg: Config, engines: Engines, watch: ModelWatch | None
) -> dict[str, dict[str, Any]]:
    """role → ok, file, problem (missing, broken at start or since: fayd.service.
    model_watch), fallback (why one's own model is not used) and own (it is)."""
    broken = watch.broken if watch else {}
    roles = ["vad", "asr", "llm", "tts", "embed"]
    if cfg.speech.wake_word:
        roles.append("wake")
    if "tts_zh" in engines.files:  # the Chinese voice, or espeak-ng's in its place
        roles.append("tts_zh")
    found = {}
    for role in roles:
        problem = broken.get(role) or engines.problems.get(role)
        found[role] = {
            "ok": problem is None,
            "file": engines.files.get(role),
            "problem": problem,
            "fallback": engines.fallbacks.get(role),
            "own": role in engines.own,
        }
    return found
