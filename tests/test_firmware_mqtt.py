"""The MicroPython firmware (firmware/) on the real unix port, against the real daemon and
its mosquitto: hello and presence, a text turn moving the robot shim by the action rules,
the screen and speaker shims, and sensor events surviving a broker restart, a long outage
with a reboot in it, and an outage longer than the ring (one summary event)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fayd.agent.expression import load_rules
from fayd.testing.firmware import FIRMWARE, FirmwareProcess
from fayd.testing.harness import DaemonProcess

from .conftest import ANY_DEVICE

MOTIONS = json.loads((FIRMWARE / "fayd_fw" / "motions.json").read_text())["behaviors"]
SERVOS = {
    "head_pan": {"idle": 90, "min": 30, "max": 150, "speed": 240},
    "head_tilt": {"idle": 90, "min": 60, "max": 130, "speed": 180},
    "arm_l": {"idle": 100, "min": 0, "max": 180, "speed": 300},
    "arm_r": {"idle": 100, "min": 0, "max": 180, "speed": 300},
}


def mqtt_config(url: str, device: str, roles: list[str], **extra: object) -> dict:
    host, port = url.removeprefix("mqtt://").rsplit(":", 1)
    return {
        "device": device,
        "key": "",
        "roles": roles,
        "transport": "mqtt",
        "mqtt": {"host": host, "port": int(port), "keepalive_s": 10, "backoff_max_s": 1},
        "heartbeat_s": 5,
        "robot": {"servos": SERVOS, "idle_ms": 300},
        "screen": {"size": [128, 64]},
        "speaker": {"rate": 16000},
        "sensor": {"resend_s": 1},
        **extra,
    }


def daemon_config(daemon: DaemonProcess, device: str, roles: list[str], **extra: object) -> dict:
    """A device added to the daemon (``fayd devices add``), with its key in its config."""
    key = daemon.add_device(device)["key"]
    return mqtt_config(daemon.runtime["mqtt"], device, roles, **{"key": key, **extra})


def expected_keyframes(behavior: str, intensity: float) -> dict[str, list[tuple[float, int]]]:
    """What the robot must command for one action: the template's offsets from the idle
    pose scaled by intensity, clamped to each servo's range, durations stretched so no
    servo moves faster than its speed limit."""
    out = {}
    for ch, frames in MOTIONS[behavior].items():
        s = SERVOS[ch]
        angle = s["idle"]
        steps = []
        for offset, ms in frames:
            target = max(s["min"], min(s["max"], round(s["idle"] + offset * intensity, 1)))
            need = int(abs(target - angle) * 1000 / s["speed"] + 0.999)
            steps.append((target, max(ms, need)))
            angle = target
        out[ch] = steps
    return out


def status_device(daemon: DaemonProcess, device: str) -> dict | None:
    status = json.loads(daemon.cli("status", "--json").stdout)
    return next((d for d in status["devices"] if d["id"] == device), None)


def test_hello_text_turn_moves_the_robot(make_daemon, firmware) -> None:
    # Greedy decoding: the reply (and so whether it names a gesture) is the same every run;
    # sampled, it was sometimes a greeting no action rule knows ("Howdy there!").
    daemon = make_daemon({"FAYD_LLM_TEMPERATURE": "0"})
    fw: FirmwareProcess = firmware(daemon_config(daemon, "robo-1", ["robot", "screen", "speaker"]))
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    device = None
    for _ in range(50):  # the daemon stores the hello asynchronously; bounded
        device = status_device(daemon, "robo-1")
        if device and device["online"]:
            break
    assert device and device["online"], daemon.log_text()
    assert device["fw"] == "0.1.0" and device["roles"] == ["robot", "screen", "speaker"]
    assert sorted(device["caps"]["servos"]) == sorted(SERVOS) and device["caps"]["screen"] == [
        128,
        64,
    ]
    assert len(device["caps"]["behaviors"]) >= 12

    fw.inject(text="Hello!")  # small talk: a written greeting, the same every run
    done = fw.wait_for(
        lambda rows: [r for r in rows if r["hw"] == "rx" and r["key"] == "audio" and r["end"]],
        within_s=120,
        what="end of the reply",
    )
    assert done
    rows = fw.records()
    rx = [r for r in rows if r["hw"] == "rx"]
    spoken = [r for r in rx if r["key"] == "audio" and r["text"]]
    assert spoken, rx
    rules = load_rules()
    for r in spoken:  # the daemon's Action for each chunk is the rules' match of its text
        match = rules.match(r["text"])
        assert r["action"] == (
            [match.code, match.behavior, match.affect, match.intensity, match.priority]
            if match
            else None
        )
    actions = [r["action"] for r in spoken if r["action"]]
    assert actions, f"the reply matched no action rule: {spoken}"

    # Each action started a motion, or was dropped for a higher-priority one still running.
    def all_motions_over(rows: list[dict]) -> bool:
        # Every action started a motion or was dropped, every motion finished (or was
        # pre-empted), and the robot is back in its idle pose: a reply may hold several.
        robot = [r for r in rows if r["hw"] == "robot"]
        started = sum("behavior" in r for r in robot)
        over = sum("done" in r or "preempted" in r for r in robot)
        handled = started + sum("ignored" in r for r in robot)
        return handled == len(actions) and over == started and bool(robot[-1].get("idle"))

    fw.wait_for(all_motions_over, within_s=60, what="every motion over, then the idle pose")
    rows = fw.records()
    robot = [r for r in rows if r["hw"] == "robot"]
    motions = [r for r in robot if "behavior" in r]
    dropped = [r for r in robot if "ignored" in r]
    assert len(motions) + len(dropped) == len(actions)
    assert [[m["code"], m["behavior"], m["intensity"], m["priority"]] for m in motions] == [
        [a[0], a[1], a[3], a[4]]
        for a in actions
        if [a[0], a[1], a[3], a[4]]
        in [[m["code"], m["behavior"], m["intensity"], m["priority"]] for m in motions]
    ]
    for r in dropped:
        assert r["why"] == "lower priority" and r["priority"] < next(
            a[4] for a in actions if a[1] == r["running"]
        )
    # The last motion ran in full (template x intensity within the limits), then idle.
    last = motions[-1]
    tag = last["motion"]
    got: dict[str, list[tuple[float, int]]] = {}
    for r in rows:
        if r["hw"] == "servo" and r["tag"] == tag:
            got.setdefault(r["ch"], []).append((r["angle"], r["ms"]))
    assert got == expected_keyframes(last["behavior"], last["intensity"])
    idle = [r for r in rows if r["hw"] == "servo" and r["tag"] == "idle"]
    assert {r["ch"]: r["angle"] for r in idle[-4:]} == {ch: s["idle"] for ch, s in SERVOS.items()}

    # Screen: the reply wrapped to 16 columns, the affect's face, a mouth moving with Lips.
    texts = " ".join(r["text"] for r in rx if r["key"] == "text" and r["text"])
    screen = [r for r in rows if r["hw"] == "screen"]
    shown = [r["lines"] for r in screen if "lines" in r][-1]
    assert all(len(line) <= 16 for line in shown)
    assert " ".join(shown) == " ".join(texts.split())[-len(" ".join(shown)) :]
    assert any(r.get("face") not in (None, "neutral") for r in screen)
    assert any(r.get("mouth", 0) > 0 for r in screen)
    # Speaker: every PCM byte of the reply reached the I2S shim.
    speaker = [r for r in rows if r["hw"] == "speaker"]
    assert speaker[0].get("start") is not None and speaker[-1].get("end") is not None
    pcm = (fw.folder / "speaker.pcm").stat().st_size
    assert pcm > 16000  # at least half a second of 16 kHz speech


def events_in_db(daemon: DaemonProcess, device: str) -> list[tuple[int, str, float | None]]:
    with sqlite3.connect(daemon.state / "fayd.db") as conn:
        return conn.execute(
            "SELECT seq, sensor, ts FROM device_events WHERE device = ? ORDER BY seq", [device]
        ).fetchall()


def wait_events(daemon: DaemonProcess, fw: FirmwareProcess, device: str, n: int) -> list:
    def check(_rows: list) -> list | None:
        stored = events_in_db(daemon, device)
        return stored if len(stored) >= n else None

    return fw.wait_for(check, within_s=30, what=f"{n} events stored")  # type: ignore[return-value]


def test_sensor_events_survive_a_broker_restart(make_daemon, broker, firmware) -> None:
    daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    config = mqtt_config(broker.url, "sensor-1", ["sensor"])
    fw: FirmwareProcess = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    for i in range(5):
        fw.inject(sensor="door", data={"open": i % 2 == 0})
    wait_events(daemon, fw, "sensor-1", 5)

    broker.stop()  # the device and fayd both lose the broker
    fw.wait_for(
        lambda rows: any(r["hw"] == "link" and r["up"] is False for r in rows), what="link down"
    )
    for i in range(5):  # made while offline: buffered in the ring file
        fw.inject(sensor="bp", data={"sys": 120 + i, "dia": 80})
    fw.wait_for(lambda rows: sum(r["hw"] == "sensor" and "seq" in r for r in rows) == 10)
    assert len(events_in_db(daemon, "sensor-1")) == 5
    broker.start()
    stored = wait_events(daemon, fw, "sensor-1", 10)
    assert [seq for seq, _, _ in stored] == list(range(1, 11))  # no loss, no duplicates
    assert [s for _, s, _ in stored] == ["door"] * 5 + ["bp"] * 5
    assert all(ts and ts > 1.7e9 for _, _, ts in stored)  # the device clock
    fw.wait_for(
        lambda rows: any(r["hw"] == "sensor" and r.get("pending") == 0 for r in rows[-10:]),
        what="every event acked",
    )

    # A reboot keeps the sequence number: the next event is 11, stored once.
    fw.stop()
    fw.start()
    fw.inject(sensor="panic", data={"pressed": True})
    stored = wait_events(daemon, fw, "sensor-1", 11)
    assert [seq for seq, _, _ in stored] == list(range(1, 12))
    fw.wait_for(
        lambda rows: any(r["hw"] == "sensor" and r.get("acked") == 11 for r in rows),
        what="ack of event 11",
    )
    assert unacked_on_flash(fw.folder) == set()


def unacked_on_flash(folder: Path) -> set[int]:
    """The seqs the firmware's ring (events/<n>.log, firmware/fayd_fw/ring.py) still holds
    unacked: every event line minus every ack line. A running firmware may remove a segment
    meanwhile: it does so once every event in it is acked, so it is rightly skipped."""
    events, acks = set(), set()
    for log in (folder / "events").glob("*.log"):
        try:
            lines = log.read_bytes().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            if line.startswith(b"a"):
                acks.add(int(line[1:]))
            elif line.strip():
                events.add(json.loads(line)["seq"])
    return events - acks


def stored_rows(daemon: DaemonProcess, device: str) -> list[tuple[int, str, dict]]:
    with sqlite3.connect(daemon.state / "fayd.db") as conn:
        rows = conn.execute(
            "SELECT seq, sensor, data FROM device_events WHERE device = ? ORDER BY seq", [device]
        ).fetchall()
    return [(seq, sensor, json.loads(data) if data else {}) for seq, sensor, data in rows]


def sensor_seqs(rows: list[dict]) -> list[int]:
    return [r["seq"] for r in rows if r["hw"] == "sensor" and "seq" in r]


def go_offline(broker, fw: FirmwareProcess) -> None:
    broker.stop()
    fw.wait_for(
        lambda rows: any(r["hw"] == "link" and r["up"] is False for r in rows), what="link down"
    )


def inject_many(fw: FirmwareProcess, sensors: list[str]) -> None:
    """Many sensor triggers at once (one write to the inbox)."""
    lines = "".join(
        json.dumps({"sensor": s, "data": {"n": i}}) + "\n" for i, s in enumerate(sensors)
    )
    with (fw.folder / "inbox.jsonl").open("a") as f:
        f.write(lines)


def test_a_long_outage_with_a_reboot_in_it_is_delivered_once(make_daemon, broker, firmware) -> None:
    """Events the old 32-slot ring lost after 32: 1,000 made offline (the ring's default
    holds ~3,900), half before a reboot that leaves them unacked, all stored once."""
    daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    fw: FirmwareProcess = firmware(mqtt_config(broker.url, "sensor-2", ["sensor"]))
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    go_offline(broker, fw)
    inject_many(fw, ["motion", "door"] * 250)
    fw.wait_for(lambda rows: len(sensor_seqs(rows)) == 500, what="500 events made")
    fw.stop()  # a reset while nothing is acked
    assert len(unacked_on_flash(fw.folder)) == 500
    fw.start()
    inject_many(fw, ["bp"] * 500)
    fw.wait_for(lambda rows: len(sensor_seqs(rows)) == 1000, what="1000 events made")
    assert sensor_seqs(fw.records()) == list(range(1, 1001))  # the count went on after boot
    assert events_in_db(daemon, "sensor-2") == []
    broker.start()

    def all_stored(_rows: list) -> list | None:
        stored = events_in_db(daemon, "sensor-2")
        return stored if len(stored) >= 1000 else None

    stored = fw.wait_for(all_stored, within_s=120, what="1000 events stored")
    assert [seq for seq, _, _ in stored] == list(range(1, 1001))  # once each, none lost
    assert [s for _, s, _ in stored] == ["motion", "door"] * 250 + ["bp"] * 500
    fw.wait_for(lambda _rows: not unacked_on_flash(fw.folder), what="every event acked")
    assert not any(r.get("sensor") == "dropped" for r in fw.records("sensor"))


def test_an_outage_longer_than_the_ring_is_summarised_in_one_event(
    make_daemon, broker, firmware
) -> None:
    """A 16 KB ring (4 segments) and 600 events offline: the oldest go, counted by sensor
    into one "dropped" event (kept across a reboot) that fayd stores like any other."""
    daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
    config = mqtt_config(broker.url, "sensor-3", ["sensor"])
    config["sensor"] = {"ring_kb": 16, "resend_s": 1}
    fw: FirmwareProcess = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    go_offline(broker, fw)
    made = ["motion", "motion", "door"] * 200
    inject_many(fw, made)
    fw.wait_for(lambda rows: len(sensor_seqs(rows)) == 600, what="600 events made")
    fw.stop()
    assert (fw.folder / "events.dropped").exists()  # the summary so far, on flash
    fw.start()
    broker.start()

    def summary_stored(_rows: list) -> list | None:
        stored = stored_rows(daemon, "sensor-3")
        kept = [seq for seq, sensor, _ in stored if sensor != "dropped"]
        done = kept and kept == list(range(kept[0], 601)) and len(stored) == len(kept) + 1
        return stored if done else None

    stored = fw.wait_for(summary_stored, within_s=60, what="the kept events and one summary")
    summaries = [(seq, data) for seq, sensor, data in stored if sensor == "dropped"]
    assert len(summaries) == 1
    seq, summary = summaries[0]
    kept = [s for s, sensor, _ in stored if sensor != "dropped"]
    lost = range(1, kept[0])  # the oldest went, the newest were kept
    assert 200 <= len(lost) <= 600 - 4 * 4096 // 200, len(lost)  # ring_kb bounds what is kept
    assert seq == 601  # numbered after every event it counts
    expected = {}
    for n in lost:
        expected[made[n - 1]] = expected.get(made[n - 1], 0) + 1
    assert summary["events"] == len(lost) and summary["sensors"] == expected
    assert (summary["first_seq"], summary["last_seq"]) == (1, kept[0] - 1)
    assert 1.7e9 < summary["first_ts"] <= summary["last_ts"]
    fw.wait_for(lambda _rows: not unacked_on_flash(fw.folder), what="every event acked")
    assert not (fw.folder / "events.dropped").exists()
