"""Chaos: faults a home throws at fayd, injected in turn while devices keep talking (issue 14).

    .venv/bin/python benchmarks/chaos.py [--quick] [--devices 3]

The real daemon runs on a state folder of its own tmpfs (root: the full-disk fault mounts
one), with its embedded mosquitto on fixed ports, as systemd would restart it. The real
firmware on MicroPython's unix port is one more sensor device (motion triggers injected
twice a second, each numbered in its data). Protocol clients (aiomqtt, logged in as added
devices) stream numbered sensor events at QoS 1 and
resend the unacked as the firmware does (after RESEND_S, oldest first, a few per scan),
reconnecting whenever the broker goes; a text turn (``POST /api/say``) is made every
second; ``fayd status --json`` is polled every STATUS_EVERY_S (2 s). Faults, each followed
by a recovery window:

- ``kill_daemon``: kill -9 of the daemon alone, then a start on the same state folder;
- ``kill_broker``: kill -9 of the embedded mosquitto (the daemon restarts it);
- ``full_disk``: the state tmpfs filled with a file for 20 s, then the file removed; a
  panic button (a device of its own, mum's) is pressed 2 s into it, and the caregiver's
  notification (Apprise json:// to an HTTP server here) is timed: ``alert_during_full_disk_s``
  (press to caregiver notified), with what she was sent;
- ``poison``: a rogue device sends lone surrogates, oversize frames and wrong types;
- ``broken_model``: the VAD model file (a copy, first on the daemon's PYTHONPATH, so the
  shared install is untouched) overwritten with garbage, then a device speaks;
- ``sigstop``: SIGSTOP of the daemon for longer than the systemd watchdog (WatchdogSec=30),
  then SIGCONT (there is no systemd here to restart it; a frozen daemon's status does not
  answer, which is counted apart from a lie: ``status_unanswered_s``).

``--quick`` (about 2.5 min instead of 3.5): the disk full for 8 s and a SIGSTOP of 12 s
(shorter than the watchdog), shorter recovery windows.

Recovery of a fault = from its end (for kill -9, the restart) until a text turn begun after
it is answered and an event is acked after it; a fault with no recovery within 60 s is a
hang. Prints one JSON object; ``status_lies`` counts the seconds in which
``fayd status`` said ready while a turn begun in that poll period failed.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import httpx
import numpy as np

from fayd.auth import read_token
from fayd.models.manifest import default_paths, load_manifest
from fayd.protocol import SensorEvent, Topics, decode, encode
from fayd.testing.care import Posts
from fayd.testing.disk import NoTmpfs, fill, small_disk, truncate_wal
from fayd.testing.firmware import FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess, free_port
from fayd.testing.simulator import SimDevice

TOPICS = Topics()
#: As firmware/fayd_fw/sensor.py: unacked events sent again after resend_s (3), oldest
#: first, at most 8 each 250 ms scan (new and never-sent ones included here).
RESEND_S = 3.0
RESEND_PER_SCAN = 8
RESEND_SCAN_S = 0.25
TURN_TIMEOUT_S = 15.0
STATUS_TIMEOUT_S = 5.0
#: A ``fayd status`` is a Python start (~0.5 s of CPU): every second would load the 2 cores.
STATUS_EVERY_S = 2
WATCHDOG_S = 30.0  # systemd/fayd.service WatchdogSec
DISK_MB = 64
VAD_PACKAGE, VAD_FILE = "silero_vad", "data/silero_vad.onnx"
#: The real firmware's device, and its motion triggers a second.
FIRMWARE_DEVICE = "chaos-fw"
PANIC_DEVICE = "chaos-pendant"
FIRMWARE_RATE = 2.0
GARBAGE = b"not a model \x00\xff" * 64
#: Poison: valid JSON with a lone surrogate, oversize frames, wrong types.
POISON = [
    ("hello", b'{"v":1,"device":"rogue-1","roles":["sensor"],"user":"\\udfff"}'),
    ("event", b'{"v":1,"seq":1,"sensor":"door","data":{"note":"\\ud800"}}'),
    ("text", b'{"v":1,"text":"hi \\udfff","id":"t1"}'),
    ("text", b'{"v":1,"text":"' + b"a" * 70000 + b'"}'),
    ("event", b'{"v":1,"seq":"x","sensor":7,"data":[1,2]}'),
    ("heartbeat", b'{"v":1,"seq":{"a":1},"uptime_s":"long"}'),
    ("hello", b'{"v":1,"device":"rogue-1","roles":"sensor"}'),
    ("event", b"[" * 5000 + b"]" * 5000),
    ("audio", b"\xff" * 40000),
]


@dataclass
class Log:
    """What happened, with monotonic times: the benchmark's raw record."""

    sent: dict[str, set[int]] = field(default_factory=dict)
    acks: list[tuple[float, str, int]] = field(default_factory=list)
    turns: list[tuple[float, float, bool]] = field(default_factory=list)  # start, end, ok
    turn_errors: dict[str, int] = field(default_factory=dict)  # why a turn failed → count
    #: (answered at, ready/not-ready/none, asked at)
    statuses: list[tuple[float, str, float]] = field(default_factory=list)
    faults: dict[str, dict[str, Any]] = field(default_factory=dict)


class Chaos:
    def __init__(self, root: Path, quick: bool, devices: int) -> None:
        self.root = root
        self.quick = quick
        self.devices = [f"chaos-{i}" for i in range(devices)]
        self.state = root / "state"
        self.overlay = root / "models"
        self.mqtt_port, self.api_port = free_port(), free_port()
        self.daemon: DaemonProcess | None = None
        self.log = Log()
        self.stop = asyncio.Event()
        self.passwords: dict[str, str] = {}
        self.fault_times: list[float] = []  # when each fault was injected
        self.give_up = False  # the devices stop resending (the final wait ran out)
        self.firmware: FirmwareProcess | None = None
        self.firmware_sent = 0
        self.firmware_skipped: str | None = None
        self.posts = Posts()  # the caregiver's phone

    # --- the daemon --------------------------------------------------------------------

    def make_daemon(self) -> DaemonProcess:
        path = os.pathsep.join(filter(None, [str(self.overlay), os.environ.get("PYTHONPATH")]))
        env = {
            "FAYD_MQTT_EMBEDDED_PORT": str(self.mqtt_port),
            "FAYD_API_PORT": str(self.api_port),
            "FAYD_PATHS_DISK_WARN_MB": "8",
            "PYTHONPATH": path,
        }
        daemon = DaemonProcess(self.state, env)
        daemon.log = self.root / "daemon.log"  # not on the disk that is filled (journald)
        return daemon

    def prepare_vad_copy(self) -> Path:
        """A good copy of the VAD model, first on the daemon's path: the one to break."""
        package = self.overlay / VAD_PACKAGE
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        real = default_paths(load_manifest().role("vad"))["model"]
        shutil.copyfile(real, package / VAD_FILE)
        return package / VAD_FILE

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    # --- the devices -------------------------------------------------------------------

    async def device(self, name: str, rate: float) -> None:
        """Numbered events at ``rate`` a second, kept until acked and resent, like the
        firmware's ring; reconnects (after 0.5 s) whenever the broker or the link goes."""
        sent = self.log.sent.setdefault(name, set())
        unacked: dict[int, float] = {}  # seq → when last sent (0: never)
        seq = 0
        started = time.monotonic()

        async def produce() -> None:
            nonlocal seq
            while not self.stop.is_set():
                seq += 1
                sent.add(seq)
                unacked[seq] = 0.0
                await asyncio.sleep(max(0.0, started + seq / rate - time.monotonic()))

        producer = asyncio.create_task(produce())
        try:
            while not (self.stop.is_set() and not unacked) and not self.give_up:
                with contextlib.suppress(aiomqtt.MqttError, OSError, TimeoutError):
                    await self.device_session(name, unacked)
                await asyncio.sleep(0.5)
        finally:
            producer.cancel()

    async def device_session(self, name: str, unacked: dict[int, float]) -> None:
        host, port = "127.0.0.1", self.mqtt_port
        client = aiomqtt.Client(
            host, port, identifier=name, username=name, password=self.passwords[name], timeout=5
        )
        async with client:
            await client.subscribe(TOPICS.down(name, "ack"), qos=1)
            hello = {"v": 1, "device": name, "roles": ["sensor"]}
            await client.publish(TOPICS.up(name, "hello"), json.dumps(hello).encode(), qos=1)
            for seq in unacked:
                unacked[seq] = 0.0  # a new session: all sent again

            async def read() -> None:
                async for message in client.messages:
                    ack = decode("ack", bytes(message.payload))
                    ref = int(ack.ref)  # type: ignore[attr-defined]
                    self.log.acks.append((time.monotonic(), name, ref))
                    unacked.pop(ref, None)

            reader = asyncio.create_task(read())
            try:
                while not (self.stop.is_set() and not unacked) and not self.give_up:
                    if reader.done():
                        reader.result()  # the link went: its error ends the session
                        return
                    now = time.monotonic()
                    due = [s for s, last in sorted(unacked.items()) if now - last >= RESEND_S]
                    for s in due[:RESEND_PER_SCAN]:  # oldest first, a few a scan
                        unacked[s] = now
                        event = SensorEvent(seq=s, sensor="motion", ts=time.time(), data={})
                        await client.publish(TOPICS.up(name, "event"), encode(event), qos=1)
                    await asyncio.sleep(RESEND_SCAN_S)
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    async def firmware_device(self, rate: float) -> None:
        """The real firmware (MicroPython's unix port) as a sensor: a motion trigger
        injected ``rate`` times a second, each numbered in its data (``n``); the firmware
        numbers, rings, resends and reconnects on its own."""
        fw = self.firmware
        assert fw is not None
        n = 0
        started = time.monotonic()
        while not self.stop.is_set():
            n += 1
            fw.inject(sensor="motion", data={"n": n})
            self.firmware_sent = n
            await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))

    def start_firmware(self) -> None:
        assert self.daemon is not None
        if micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists():
            self.firmware_skipped = (
                "MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh"
            )
            return
        key = self.daemon.add_device(FIRMWARE_DEVICE)["key"]
        config = {
            "device": FIRMWARE_DEVICE,
            "key": key,
            "roles": ["sensor"],
            "transport": "mqtt",
            "mqtt": {
                "host": "127.0.0.1",
                "port": self.mqtt_port,
                "keepalive_s": 10,
                "backoff_max_s": 1,
            },
            "heartbeat_s": 5,
            "sensor": {"resend_s": 1},
        }
        # Its flash (the ring) is not on the state tmpfs that the full-disk fault fills.
        self.firmware = FirmwareProcess(self.root / "firmware", config).start()

    async def turns(self) -> None:
        token = read_token(self.state)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=TURN_TIMEOUT_S, headers=headers) as http:
            while not self.stop.is_set():
                began = time.monotonic()
                ok, why = False, ""
                try:
                    done = await http.post(f"{self.api}/api/say", json={"text": "what time is it?"})
                    body = done.json() if done.status_code == 200 else {}
                    ok = bool(body.get("reply")) and "failed" not in body
                    why = "" if ok else f"HTTP {done.status_code}: {done.text[:80]}"
                except httpx.HTTPError as exc:
                    why = type(exc).__name__
                self.log.turns.append((began, time.monotonic(), ok))
                if why:
                    self.log.turn_errors[why] = self.log.turn_errors.get(why, 0) + 1
                await asyncio.sleep(max(0.0, began + 1.0 - time.monotonic()))

    async def statuses(self) -> None:
        """``fayd status --json`` every STATUS_EVERY_S: ready, not-ready, or none (no answer)."""
        assert self.daemon is not None
        while not self.stop.is_set():
            began = time.monotonic()
            said = "none"
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "fayd",
                "status",
                "--json",
                env=self.daemon.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), STATUS_TIMEOUT_S + 5)
                if proc.returncode == 0:
                    status = json.loads(out)
                    stalled = any(c.get("state") == "stalled" for c in status["components"])
                    said = "ready" if status["ready"] and not stalled else "not-ready"
            except (TimeoutError, ValueError, KeyError):
                proc.kill()
                await proc.wait()
            # When it answered: what it said was true then (the CLI takes ~1 s to start, and
            # a start-up's API comes up meanwhile).
            self.log.statuses.append((time.monotonic(), said, began))
            await asyncio.sleep(max(0.0, began + STATUS_EVERY_S - time.monotonic()))

    # --- the faults --------------------------------------------------------------------

    def pid(self) -> int:
        assert self.daemon and self.daemon.proc
        return self.daemon.proc.pid

    async def kill_daemon(self) -> dict[str, Any]:
        os.kill(self.pid(), signal.SIGKILL)
        assert self.daemon and self.daemon.proc
        self.daemon.proc.wait(10)
        await asyncio.sleep(1.0)  # systemd's RestartSec-like pause
        self.daemon = self.make_daemon()
        began = time.monotonic()
        await asyncio.to_thread(self.daemon.start)
        # The fault ends when the new daemon is started (systemd's restart): its start-up
        # time is part of the recovery.
        return {"restart_to_runtime_s": round(time.monotonic() - began, 1), "ended": began}

    async def kill_broker(self) -> dict[str, Any]:
        pid = int(json.loads((self.state / "broker.pid").read_text())["pid"])
        os.kill(pid, signal.SIGKILL)
        return {"broker_pid": pid}

    async def full_disk(self) -> dict[str, Any]:
        seconds = 8.0 if self.quick else 20.0
        await asyncio.to_thread(truncate_wal, self.state / "fayd.db")
        filler = await asyncio.to_thread(fill, self.state)
        began = time.monotonic()
        await asyncio.sleep(2.0)
        told = await self.press_panic(within_s=max(2.0, seconds - 2.0))
        await asyncio.sleep(max(0.0, began + seconds - time.monotonic()))
        # The disk's own notice comes from a check every few seconds, after the press.
        disk = [p["message"] for p in self.posts.to("anna") if "disk" in p["message"]]
        filler.unlink()
        return {"full_for_s": seconds, **told, "caregiver_told_disk_full": disk[:1]}

    def add_caregiver(self) -> None:
        """Anna (this script's HTTP server) is told of mum's panic button at once."""
        assert self.daemon is not None
        for args in (
            ("devices", "set", PANIC_DEVICE, "user=mum"),
            ("care", "caregivers", "add", "anna", self.posts.url("anna")),
            ("care", "rules", "add", "panic", "--user", "mum", "--kind", "event",
             "--sensor", "panic", "--ladder", "anna"),
        ):  # fmt: skip
            done = self.daemon.cli(*args, timeout=60)
            if done.returncode != 0:
                raise RuntimeError(f"fayd {' '.join(args[:3])}: {done.stderr.strip()}")

    async def press_panic(self, within_s: float) -> dict[str, Any]:
        """Press mum's pendant; seconds until Anna is sent it (None: not within_s)."""
        assert self.daemon is not None
        before = len(self.posts.to("anna"))
        url = f"mqtt://127.0.0.1:{self.mqtt_port}"
        async with SimDevice(url, PANIC_DEVICE, password=self.passwords[PANIC_DEVICE]) as sim:
            await sim.hello(roles=("sensor",), user="mum")
            pressed = time.monotonic()
            await sim.publish("event", encode(SensorEvent(int(time.time()), "panic", time.time())))
            while time.monotonic() - pressed < within_s:
                if len(self.posts.to("anna")) > before:
                    break
                await asyncio.sleep(0.05)
        got = self.posts.to("anna")[before:]
        took = round(time.monotonic() - pressed, 2) if got else None
        return {
            "alert_during_full_disk_s": took,
            "caregiver_received": [p["message"] for p in got if "disk" not in p["message"]],
        }

    async def poison(self) -> dict[str, Any]:
        password = (await asyncio.to_thread(self.daemon_add, "rogue-1"))["mqtt_password"]
        sent = 0
        async with aiomqtt.Client(
            "127.0.0.1", self.mqtt_port, identifier="rogue-1", username="rogue-1",
            password=password, timeout=10,
        ) as client:  # fmt: skip
            for _ in range(3 if self.quick else 10):
                for kind, payload in POISON:
                    await client.publish(TOPICS.up("rogue-1", kind), payload, qos=1)
                    sent += 1
                # A retained poisoned hello, as the issue found it coming back at a restart.
                hello = TOPICS.up("rogue-1", "hello")
                await client.publish(hello, POISON[0][1], qos=1, retain=True)
                sent += 1
                await asyncio.sleep(1.0)
            await client.publish(TOPICS.up("rogue-1", "hello"), b"", qos=1, retain=True)
        body = b'{"text":"hi \\udfff"}'
        api_status = None
        with contextlib.suppress(httpx.HTTPError):
            done = await asyncio.to_thread(self.raw_post, "/api/say", body)
            api_status = done.status_code
        return {"frames_sent": sent, "api_surrogate_say_status": api_status}

    def daemon_add(self, device: str) -> dict:
        assert self.daemon is not None
        return self.daemon.add_device(device)

    def raw_post(self, path: str, body: bytes) -> httpx.Response:
        headers = {
            "Authorization": f"Bearer {read_token(self.state)}",
            "Content-Type": "application/json",
        }
        return httpx.post(self.api + path, content=body, headers=headers, timeout=30)

    async def broken_model(self) -> dict[str, Any]:
        """The VAD file becomes garbage (an SD card's doing), then a device speaks: it must
        get words or an error frame, never silence."""
        assert self.daemon is not None
        self.vad.write_bytes(GARBAGE)
        got: list[str] = []
        password = (await asyncio.to_thread(self.daemon_add, "speaker-1"))["mqtt_password"]
        began = time.monotonic()
        async with SimDevice(self.daemon.runtime["mqtt"], "speaker-1", password=password) as sim:
            await sim.hello()
            noise = np.random.default_rng(1).normal(0, 0.3, 16000 * 2).astype(np.float32)
            await sim.speak(noise)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    kind, frame, _ = await asyncio.wait_for(sim.received.get(), 1.0)
                except TimeoutError:
                    continue
                got.append(kind)
                if kind == "error" or (kind == "human" and getattr(frame, "is_end", False)):
                    break
        answered = bool({"error", "human"} & set(got))
        return {
            "device_answered": answered,
            "answer_s": round(time.monotonic() - began, 1) if answered else None,
            "frames": got[:10],
        }

    async def sigstop(self) -> dict[str, Any]:
        seconds = 12.0 if self.quick else WATCHDOG_S + 5
        pid = self.pid()
        os.kill(pid, signal.SIGSTOP)
        await asyncio.sleep(seconds)
        os.kill(pid, signal.SIGCONT)
        return {"stopped_s": seconds, "watchdog_s": WATCHDOG_S}

    # --- the run -----------------------------------------------------------------------

    async def recovery(self, ended: float, within_s: float) -> float | None:
        """Seconds from ``ended`` until a turn begun after it is answered and an event is
        acked after it; None if not within ``within_s``."""
        deadline = ended + within_s
        while time.monotonic() < deadline:
            turn = next((t for t in self.log.turns if t[0] >= ended and t[2]), None)
            ack = next((a for a in self.log.acks if a[0] >= ended), None)
            if turn and ack:
                return round(max(turn[1], ack[0]) - ended, 1)
            await asyncio.sleep(0.2)
        return None

    async def run(self) -> dict[str, Any]:
        self.vad = self.prepare_vad_copy()
        self.daemon = self.make_daemon()
        began = time.monotonic()
        await asyncio.to_thread(self.daemon.start)
        self.first_start_s = round(time.monotonic() - began, 1)
        for name in [*self.devices, PANIC_DEVICE]:
            self.passwords[name] = (await asyncio.to_thread(self.daemon_add, name))["mqtt_password"]
        await asyncio.to_thread(self.add_caregiver)
        await asyncio.to_thread(self.start_firmware)
        started = self.started = time.monotonic()
        rate = 5.0
        workers = [asyncio.create_task(self.device(n, rate)) for n in self.devices]
        if self.firmware is not None:
            workers.append(asyncio.create_task(self.firmware_device(FIRMWARE_RATE)))
        turns = asyncio.create_task(self.turns())
        statuses = asyncio.create_task(self.statuses())
        settle = 8.0 if self.quick else 12.0
        await asyncio.sleep(5.0)
        faults = [
            ("kill_daemon", self.kill_daemon),
            ("kill_broker", self.kill_broker),
            ("full_disk", self.full_disk),
            ("poison", self.poison),
            ("broken_model", self.broken_model),
            ("sigstop", self.sigstop),
        ]
        for name, inject in faults:
            began = time.monotonic()
            self.fault_times.append(began)
            try:
                detail = await inject()
            except Exception as exc:  # a fault the script could not make: said, not hidden
                detail = {"error": f"{type(exc).__name__}: {exc}"}
            ended = detail.pop("ended", None) or time.monotonic()
            recovered = await self.recovery(ended, 60.0)
            self.log.faults[name] = {
                **detail,
                "began_s": round(began - started, 1),
                "lasted_s": round(ended - began, 1),
                "recovery_s": recovered,
            }
            await asyncio.sleep(max(0.0, ended + settle - time.monotonic()))
            window = [ok for b, _, ok in self.log.turns if began <= b < ended + settle]
            self.log.faults[name]["turns_failed"] = window.count(False)
        self.stop.set()  # no new events or turns; the devices resend until all are acked
        self.stopped = time.monotonic()
        await asyncio.gather(turns, statuses)
        try:
            await asyncio.wait_for(asyncio.gather(*workers), 60)
        except TimeoutError:
            self.give_up = True
            await asyncio.gather(*workers, return_exceptions=True)
        await self.firmware_drained(60.0)
        return self.result(time.monotonic() - started)

    async def firmware_drained(self, within_s: float) -> None:
        """Until every injected trigger is stored (the firmware resends what is unacked)."""
        deadline = time.monotonic() + within_s
        while self.firmware is not None and time.monotonic() < deadline:
            if len(set(self.firmware_stored())) >= self.firmware_sent:
                return
            await asyncio.sleep(0.5)

    def firmware_stored(self) -> list[int]:
        """The ``n`` of each event of the firmware stored (a repeat is a duplicate)."""
        conn = sqlite3.connect(self.state / "fayd.db", timeout=30)
        try:
            rows = conn.execute(
                "SELECT data FROM device_events WHERE device = ? AND sensor = 'motion'",
                [FIRMWARE_DEVICE],
            ).fetchall()
        finally:
            conn.close()
        return [json.loads(data).get("n") for (data,) in rows if '"n"' in data]

    def result(self, seconds: float) -> dict[str, Any]:
        assert self.daemon is not None
        conn = sqlite3.connect(self.state / "fayd.db", timeout=30)
        try:
            query = "SELECT seq FROM device_events WHERE device = ?"
            stored = {d: [s for (s,) in conn.execute(query, [d])] for d in self.devices}
        finally:
            conn.close()
        sent = sum(len(s) for s in self.log.sent.values())
        lost = sum(len(self.log.sent[d] - set(stored[d])) for d in self.devices)
        dups = sum(len(stored[d]) - len(set(stored[d])) for d in self.devices)
        firmware: dict[str, Any] = {"skipped": self.firmware_skipped}
        if self.firmware is not None:
            got = self.firmware_stored()
            fw_lost = len(set(range(1, self.firmware_sent + 1)) - set(got))
            fw_dups = len(got) - len(set(got))
            firmware = {
                "events_sent": self.firmware_sent,
                "events_stored": len(set(got)),
                "lost": fw_lost,
                "duplicates": fw_dups,
            }
            sent += self.firmware_sent
            lost += fw_lost
            dups += fw_dups
            stored[FIRMWARE_DEVICE] = got
        recoveries = [f["recovery_s"] for f in self.log.faults.values()]
        alert_s = self.log.faults.get("full_disk", {}).get("alert_during_full_disk_s")
        degraded = self.degraded_but_ready()
        lies = self.status_lies(self.started)
        hangs = sum(1 for r in recoveries if r is None)
        status_log = daemon_status(self.daemon)
        text = self.daemon.log_text()
        return {
            "events_sent": sent,
            "events_stored": sum(len(s) for s in stored.values()),
            "lost": lost,
            "duplicates": dups,
            "turns_sent": len(self.log.turns),
            "turns_answered": sum(1 for t in self.log.turns if t[2]),
            "turn_errors": self.log.turn_errors,
            "recovery_s_max": max((r for r in recoveries if r is not None), default=None),
            "hangs": hangs,
            "status_lies": len(lies) * STATUS_EVERY_S,
            "status_lie_at_s": lies,
            "alert_during_full_disk_s": alert_s,
            "degraded_but_ready_s": len(degraded) * STATUS_EVERY_S,
            "degraded_but_ready_at_s": degraded,
            "status_unanswered_s": STATUS_EVERY_S
            * sum(1 for _, s, _ in self.log.statuses if s == "none"),
            "faults": self.log.faults,
            "targets_met": {
                "lost": lost == 0,
                "duplicates": dups == 0,
                "hangs": hangs == 0,
                "status_lies": not lies and not degraded,
                "alert_during_full_disk_2s": alert_s is not None and alert_s <= 2,
                "recovery_10s": {
                    n: f["recovery_s"] is not None and f["recovery_s"] <= 10
                    for n, f in self.log.faults.items()
                },
            },
            "firmware_device": firmware,
            "first_start_s": self.first_start_s,
            "seconds": round(seconds, 1),
            "quick": self.quick,
            "components_at_end": status_log,
            "log_tracebacks": text.count("Traceback"),
            "daemon_up": self.daemon.proc is not None and self.daemon.proc.poll() is None,
        }

    def status_lies(self, started: float) -> list[float]:
        """When (s from the start) a status said ready while a turn begun after it, within
        a poll period, failed; each stands for STATUS_EVERY_S seconds. An unanswered status is
        no lie (it said nothing), nor is a turn begun while the daemon was frozen that
        timed out after it woke."""
        failed = [(b, e) for b, e, ok in self.log.turns if not ok]

        def lied(when: float, asked: float) -> bool:
            near = [(b, e) for b, e in failed if when <= b <= when + STATUS_EVERY_S]
            # A fault injected after the status was asked, before the turn ended: it was
            # true when asked (a kill -9 while `fayd status` was on its way back).
            return any(not any(asked < f < e for f in self.fault_times) for _, e in near)

        return [
            round(when - started, 1)
            for when, said, asked in self.log.statuses
            if said == "ready" and lied(when, asked)
        ]

    def degraded_but_ready(self) -> list[float]:
        """When (s from the start) a status said ready while events were not being saved:
        devices had events waiting, and none was acked from when it was asked until a poll
        period after (events saved are acked within a second of arriving)."""
        acks = sorted(a[0] for a in self.log.acks)

        def saving(asked: float, when: float) -> bool:
            i = bisect.bisect_left(acks, asked - 1.0)
            return i < len(acks) and acks[i] <= when + STATUS_EVERY_S

        return [
            round(when - self.started, 1)
            for when, said, asked in self.log.statuses
            if said == "ready" and not saving(asked, when) and when < self.stopped
        ]


def daemon_status(daemon: DaemonProcess) -> Any:
    done = daemon.cli("status", "--json", timeout=30)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-300:]}
    status = json.loads(done.stdout)
    return {
        "ready": status["ready"],
        "components": {
            c["name"]: {"state": c.get("state"), "restarts": c["restarts"]}
            for c in status["components"]
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter faults (for a test)")
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--keep-log", type=Path, help="copy the daemon's log here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fayd-chaos-") as tmp:
        root = Path(tmp)
        chaos = Chaos(root, args.quick, args.devices)
        try:
            with small_disk(chaos.state, DISK_MB):
                try:
                    result = asyncio.run(chaos.run())
                finally:
                    chaos.posts.close()
                    if chaos.firmware is not None:
                        chaos.firmware.stop()
                    code = chaos.daemon.stop() if chaos.daemon else None
                    if chaos.daemon and chaos.daemon.proc and chaos.daemon.proc.poll() is None:
                        chaos.daemon.proc.kill()
        except NoTmpfs as exc:
            raise SystemExit(
                f"chaos: cannot mount a tmpfs for the state folder (root?): {exc}"
            ) from None
        result["daemon_exit"] = code
        if args.keep_log:
            shutil.copyfile(root / "daemon.log", args.keep_log)
            if chaos.firmware is not None:  # its log, beside the daemon's
                shutil.copyfile(chaos.firmware.log, f"{args.keep_log}.firmware")
        print(json.dumps(result))


if __name__ == "__main__":
    main()
