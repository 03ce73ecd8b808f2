"""The fall detector's state machine (firmware/fayd_fw/drivers/fall.py) on MicroPython's unix
port, fed recorded-style traces on the samples' own clock (tests/fall_traces.py): a real fall
is one event; sitting down hard, a device dropped on a table, walking, and a fall the person
gets up from are none; the thresholds are the config's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fayd.testing.firmware import FIRMWARE, micropython

from . import fall_traces as traces

RUN = """
import json
from fayd_fw.drivers.fall import FallDetector
spec = json.loads(%r)
d = FallDetector(spec)
with open(%r) as f:
    trace = json.load(f)
for k, s in enumerate(trace):
    found = d.feed(k * 10, s[0], s[1], s[2])
    if found:
        found["t"] = k * 10
        print(json.dumps(found))
"""


def detect(tmp_path: Path, trace: list[list[float]], **spec: object) -> list[dict]:
    """Every event the detector gives for ``trace`` (100 Hz), with ``t`` in ms."""
    exe = micropython()
    if exe is None:
        pytest.skip("MicroPython unix port missing: sh firmware/tools/host_setup.sh")
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    done = subprocess.run(
        [exe, "-c", RUN % (json.dumps(spec), str(path))],
        env={"MICROPYPATH": str(FIRMWARE)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_real_fall_is_one_event_after_the_stillness(tmp_path: Path) -> None:
    found = detect(tmp_path, traces.real_fall())
    assert len(found) == 1, found
    fall = found[0]
    assert 3.4 <= fall["impact_g"] <= 3.8
    assert 400 <= fall["free_fall_ms"] <= 500  # the 0.5 s going down, less the first dip
    assert 70 <= fall["tilt_deg"] <= 90  # upright to lying
    impact_ms = 3500  # 3 s standing + 0.5 s going down
    # After the impact: 1 s settling, then 3 s lying still.
    assert impact_ms + 4000 <= fall["t"] <= impact_ms + 4200


def test_sitting_down_hard_is_not_a_fall(tmp_path: Path) -> None:
    trace = traces.sitting_down_hard()
    assert detect(tmp_path, trace) == []
    # It has the free fall, the impact and the stillness: only the posture tells it apart,
    # so without the tilt check it would count.
    assert len(detect(tmp_path, trace, tilt_deg=0)) == 1


def test_a_device_dropped_on_a_table_is_not_a_fall(tmp_path: Path) -> None:
    trace = traces.dropped_on_table()
    assert detect(tmp_path, trace) == []
    # Its free fall (160 ms) is shorter than a body's going down: that is what tells it apart.
    assert len(detect(tmp_path, trace, ff_ms=100)) == 1


def test_walking_is_not_a_fall(tmp_path: Path) -> None:
    trace = traces.walking()
    low = max(_run_below(trace, 0.6))
    assert 30 <= low < 200  # it does dip under the free-fall level, briefly, every step
    assert detect(tmp_path, trace) == []


def test_a_fall_the_person_gets_up_from_is_not_reported(tmp_path: Path) -> None:
    assert detect(tmp_path, traces.fall_then_gets_up()) == []


def test_the_thresholds_are_the_configs(tmp_path: Path) -> None:
    fall = traces.real_fall()
    assert detect(tmp_path, fall, impact_g=4.0) == []  # the 3.6 g impact is then too soft
    assert detect(tmp_path, fall, ff_ms=600) == []  # the 0.5 s going down is then too short
    assert detect(tmp_path, fall, still_s=8) == []  # the 6 s lying is then too short
    assert len(detect(tmp_path, fall, still_s=2)) == 1
    two = fall + traces.real_fall(seed=7)  # two falls in a row: two events
    assert len(detect(tmp_path, two)) == 2


def _run_below(trace: list[list[float]], g: float) -> list[int]:
    """The lengths (ms) of the runs of samples under ``g``."""
    runs, n = [0], 0
    for x, y, z in trace:
        if (x * x + y * y + z * z) ** 0.5 < g:
            n += 1
        elif n:
            runs.append(n * 10)
            n = 0
    return runs
