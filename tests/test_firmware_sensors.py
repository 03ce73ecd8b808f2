"""The sensor drivers (firmware/fayd_fw/drivers) in the real firmware on MicroPython's unix
port, its parts simulated behind fayd_fw.board from a script (board.jsonl: pin levels, ADC
readings, a DS18B20, accelerometer samples, each at a time): each driver's events from its
inputs, as the sensor role keeps and sends them (a real mosquitto; nobody acks here)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from fayd.testing.firmware import FirmwareProcess

from .test_firmware_mqtt import mqtt_config


def script(fw: FirmwareProcess, *lines: dict) -> None:
    """One batch of board.jsonl lines: their "ms" count from when the firmware reads it."""
    with (fw.folder / "board.jsonl").open("a") as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))


def made(fw: FirmwareProcess) -> list[tuple[str, dict]]:
    """The events the firmware made (kept on its ring and sent), in order."""
    return [(r["sensor"], r["data"]) for r in fw.records("sensor") if "seq" in r]


def start(
    firmware, broker, device: str, world: Path | None = None, **sensor: object
) -> FirmwareProcess:
    """The firmware with these parts in its config's "sensor"; ``world``: the test's
    tmp_path when board.jsonl (its "fw" folder) was written before the start."""
    config = mqtt_config(broker.url, device, ["sensor"])
    config["sensor"] = {"resend_s": 1, **sensor}
    fw = firmware(config)
    fw.wait_for(lambda rows: any(r["hw"] == "hello" for r in rows), what="hello")
    return fw


def settle(fw: FirmwareProcess, ms: int) -> None:
    """Give the firmware ``ms`` more to make an event it should not make."""
    time.sleep(ms / 1000)
    assert fw.proc is not None and fw.proc.poll() is None, fw.log_text()


def bounce(pin: int, level: int, at: int) -> list[dict]:
    """A contact reaching ``level`` at ``at`` ms after 8 ms of bouncing."""
    return [
        {"pin": pin, "v": level if k % 2 == 0 else 1 - level, "ms": at + k * 2} for k in range(5)
    ]


def test_panic_button_one_event_per_press(firmware, broker) -> None:
    fw = start(firmware, broker, "panic-1", panic={"pin": 21})
    script(
        fw,
        *bounce(21, 0, 0),  # pressed (to ground), bouncing
        *bounce(21, 1, 600),  # released, bouncing
        {"pin": 21, "v": 0, "ms": 1000},  # a 10 ms glitch: under the debounce
        {"pin": 21, "v": 1, "ms": 1010},
        {"pin": 21, "v": 0, "ms": 1400},  # pressed again and held 3 s
        {"pin": 21, "v": 1, "ms": 4400},
    )
    fw.wait_for(lambda rows: len(made(fw)) >= 2, what="two presses")
    settle(fw, 5000)
    assert made(fw) == [("panic", {"pressed": True})] * 2


def before_start(tmp_path: Path, *lines: dict) -> Path:
    """board.jsonl as things are when the firmware starts (the door shut, a sensor in)."""
    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "board.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return tmp_path


def test_door_contact_open_and_closed_debounced(firmware, broker, tmp_path: Path) -> None:
    world = before_start(tmp_path, {"pin": 22, "v": 0})  # shut: the magnet closes the switch
    fw = start(firmware, broker, "door-1", world, door={"pin": 22, "name": "front"})
    script(
        fw,
        *bounce(22, 1, 0),  # the magnet leaves: open
        {"pin": 22, "v": 0, "ms": 500},  # a knock rattles it shut for 20 ms
        {"pin": 22, "v": 1, "ms": 520},
        *bounce(22, 0, 1500),  # shut
    )
    fw.wait_for(lambda rows: len(made(fw)) >= 2, what="open, then closed")
    settle(fw, 1000)
    assert made(fw) == [
        ("door", {"open": True, "name": "front"}),
        ("door", {"open": False, "name": "front"}),
    ]


def test_motion_onsets_with_a_hold_off(firmware, broker) -> None:
    fw = start(firmware, broker, "pir-1", motion={"pin": 14, "hold_s": 2, "warmup_s": 0})

    def pulse(at: int, ms: int = 200) -> list[dict]:
        return [{"pin": 14, "v": 1, "ms": at}, {"pin": 14, "v": 0, "ms": at + ms}]

    # A busy room: onsets at 0, 0.5 and 1 s (one now, one when the hold-off ends), then
    # quiet, then one onset at 5 s (its own event).
    script(fw, *pulse(0), *pulse(500), *pulse(1000), *pulse(5000))
    fw.wait_for(lambda rows: len(made(fw)) >= 3, within_s=15, what="three motion events")
    settle(fw, 1500)
    times = [r["t"] for r in fw.records("sensor") if "seq" in r]
    assert [s for s, _ in made(fw)] == ["motion"] * 3
    # The hold-off's end, not the onsets within it (times: when each was on flash, a few ms
    # after its tick).
    assert 1950 <= times[1] - times[0] <= 2300
    assert 2500 <= times[2] - times[1] <= 3300  # the onset at 5 s


def test_motion_ignored_while_the_pir_warms_up(firmware, broker) -> None:
    fw = start(firmware, broker, "pir-2", motion={"pin": 14, "hold_s": 0, "warmup_s": 2})
    booted = fw.records("boot")[0]["t"]
    script(fw, {"pin": 14, "v": 1}, {"pin": 14, "v": 0, "ms": 300})  # just after power-up
    settle(fw, 2500)
    assert made(fw) == []
    script(fw, {"pin": 14, "v": 1}, {"pin": 14, "v": 0, "ms": 300})
    fw.wait_for(lambda _rows: made(fw), what="motion once warm")
    [event] = fw.records("sensor")[:1]
    assert event["sensor"] == "motion" and event["t"] - booted >= 2000


def test_pressure_pad_with_hysteresis(firmware, broker) -> None:
    pad = {"pin": 1, "sensor": "chair", "on_pct": 60, "off_pct": 40, "hold_s": 0.3}
    fw = start(firmware, broker, "pad-1", pad={**pad, "every_ms": 20})

    def level(pct: int, at: int) -> dict:
        return {"adc": 1, "v": pct * 65535 // 100, "ms": at}

    script(
        fw,
        level(10, 0),
        level(80, 200),  # a bag put down for 100 ms: under hold_s
        level(10, 300),
        level(75, 800),  # sat down
        *[level(45 + 10 * (k % 2), 1500 + 50 * k) for k in range(20)],  # shifting, 45-55 %
        level(30, 3000),  # got up
    )
    fw.wait_for(lambda rows: len(made(fw)) >= 2, within_s=15, what="occupied, then vacated")
    settle(fw, 1000)
    assert made(fw) == [
        ("chair", {"occupied": True, "level": 75}),
        ("chair", {"occupied": False, "level": 30}),
    ]


def test_ds18b20_readings_and_faults(firmware, broker, tmp_path: Path) -> None:
    world = before_start(tmp_path, {"ow": 47, "temp_c": 21.5})
    fw = start(firmware, broker, "temp-1", world, temperature={"pin": 47, "every_s": 1})
    fw.wait_for(lambda rows: len(made(fw)) >= 1, what="a reading")
    script(fw, {"ow": 47, "corrupt": True})  # two bad reads a period, for three periods
    script(fw, {"ow": 47, "corrupt": False, "temp_c": -3.25, "ms": 3200})
    fw.wait_for(lambda rows: made(fw)[-1][1].get("value") == -3.25, what="-3.25 °C")
    script(fw, {"ow": 47, "present": False})  # unplugged for three periods
    script(fw, {"ow": 47, "present": True, "power_on": True, "ms": 3200})
    fw.wait_for(lambda rows: "power-on" in str(made(fw)[-1][1]), what="power-on value")
    script(fw, {"ow": 47, "power_on": False, "temp_c": 19.0})
    fw.wait_for(lambda rows: made(fw)[-1][1].get("value") == 19.0, what="19 °C")
    events = made(fw)
    assert {s for s, _ in events} == {"temperature"}
    # Every reading is a plausible temperature; each fault is one event, however long.
    data = [d for _, d in events]
    faults = [d["fault"] for d in data if "fault" in d]
    assert faults == ["crc", "disconnected", "power-on value"]
    values = [d["value"] for d in data if "value" in d]
    assert values[0] == 21.5 and set(values) == {21.5, -3.25, 19.0}
    assert not any("value" in d and "fault" in d for d in data)


def test_a_missing_accelerometer_is_one_fault_event(firmware, broker) -> None:
    fw = start(firmware, broker, "fall-0", fall={"i2c_id": 1, "sda": 38, "scl": 39})
    fw.wait_for(lambda rows: made(fw), what="a fault event")
    settle(fw, 6000)  # looked for again after 5 s: still one event
    (sensor, data), *more = made(fw)
    assert not more and sensor == "fall" and data["fault"].startswith("no accelerometer")


def test_a_bad_config_is_one_line_and_one_fault_event(firmware, broker) -> None:
    fw = start(firmware, broker, "bad-1", door={"pull": "up"}, panic={"pin": 21})
    fw.wait_for(lambda rows: made(fw), what="a fault event")
    assert made(fw) == [("door", {"fault": "sensor.door: pin is required"})]
    logs = [r["msg"] for r in fw.records("log")]
    assert "sensor.door: pin is required" in logs
    script(fw, {"pin": 21, "v": 0}, {"pin": 21, "v": 1, "ms": 300})  # the rest still run
    fw.wait_for(lambda rows: len(made(fw)) == 2, what="the panic press")


def test_a_chattering_contact_is_held_to_its_budget(firmware, broker, tmp_path: Path) -> None:
    """A door contact gone bad: 50 changes in 3 s. A part sends at most per_min a minute
    (a burst of that many, then one every 60/per_min s); what it makes beyond is counted into
    the latest one, sent when the budget allows: the last state is not lost and the flash
    takes a dozen lines, not 50."""
    world = before_start(tmp_path, {"pin": 22, "v": 0})
    door = {"pin": 22, "debounce_ms": 10, "per_min": 12}  # 12 at once, then one per 5 s
    fw = start(firmware, broker, "door-2", world, door=door)
    script(fw, *[{"pin": 22, "v": (k + 1) % 2, "ms": 60 * k} for k in range(50)])
    fw.wait_for(
        lambda _rows: any("suppressed" in d for _, d in made(fw)),
        within_s=20,
        what="the held-back changes, summed up",
    )
    settle(fw, 6000)  # no more: the contact is quiet now
    events = made(fw)
    assert len(events) == 13, events  # the burst, then the one that sums up the rest
    assert all("suppressed" not in d for _, d in events[:12])
    last = events[-1][1]
    assert last["open"] is False  # the final state: shut
    # Every change the driver saw went or was counted (the host's loop, slowed by the
    # ring's syncs, may see fewer than the 50 scripted).
    assert 5 <= last["suppressed"] and 12 + 1 + last["suppressed"] <= 50
