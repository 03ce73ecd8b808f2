"""The firmware's event ring (firmware/fayd_fw/ring.py) on MicroPython's unix port, through
the resets that can cut it anywhere: a half-written line, a reset between the summary's
write and the removal of the segment it counts, a reset between sending the summary and
removing its file, the ring file of earlier firmware, a counter whose events are all gone.
Each step is a fresh MicroPython process on the same folder, as a reboot is."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fayd.testing.firmware import FIRMWARE, micropython

PRELUDE = """
import json, os
from fayd_fw.ring import EventLog
def out(**kw):
    print(json.dumps(kw))
"""


def boot(folder: Path, script: str, ring_kb: int = 8) -> dict:
    """Run ``script`` with ``r`` = the EventLog of ``folder``; its last ``out(...)``."""
    exe = micropython()
    if exe is None:
        pytest.skip("MicroPython unix port missing: sh firmware/tools/host_setup.sh")
    code = f"{PRELUDE}\nr = EventLog({str(folder)!r}, {ring_kb})\n{script}\n"
    done = subprocess.run(
        [exe, "-c", code],
        env={"MICROPYPATH": str(FIRMWARE)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout.splitlines()[-1])


STATE = "out(seq=r.seq, pending=sorted(r.pending), summary=r.summary, segments=r.segments)"


def test_a_cut_line_is_skipped_and_the_count_goes_on(tmp_path: Path) -> None:
    boot(tmp_path, "for i in range(5):\n    r.add('door', {'open': True}, None)\nout()")
    last = sorted((tmp_path / "events").glob("*.log"))[-1]
    with last.open("ab") as f:
        f.write(b'{"seq": 6, "sens')  # a reset in the middle of the sixth event's line
    state = boot(tmp_path, f"s, _ = r.add('bp', {{}}, None)\n{STATE}")
    assert state["pending"] == [1, 2, 3, 4, 5, 6]  # six was never sent: its number is free
    assert len(state["segments"]) == 2  # the cut segment is not written on


def test_acked_events_stay_acked_and_numbers_are_never_reused(tmp_path: Path) -> None:
    boot(tmp_path, "for i in range(300):\n    r.add('motion', {}, None)\nout()", ring_kb=64)
    boot(tmp_path, "for s in range(1, 301):\n    r.ack(s)\nr.sync_acks()\nout()", ring_kb=64)
    state = boot(tmp_path, f"r.add('door', {{}}, None)\n{STATE}", ring_kb=64)
    assert state["pending"] == [301] and state["summary"] is None
    assert len(state["segments"]) == 1  # every acked segment was removed


def test_a_reset_before_the_counted_segment_is_removed(tmp_path: Path) -> None:
    # 8 KB: two segments; 120 events of ~100 bytes overflow them.
    state = boot(
        tmp_path, f"for i in range(120):\n    r.add('motion', {{}}, 1764400000 + i)\n{STATE}"
    )
    summary = state["summary"]
    assert summary["events"] == state["pending"][0] - 1 == summary["last_seq"]
    gone = tmp_path / "events" / f"{summary['through']}.log"
    assert not gone.exists()
    gone.write_bytes(b'{"seq": 1, "sensor": "motion", "data": {}}\n')  # as if not yet removed
    again = boot(tmp_path, STATE)
    assert not gone.exists() and again["summary"] == summary  # counted once
    assert again["pending"] == state["pending"]


def test_a_reset_after_the_summary_was_sealed(tmp_path: Path) -> None:
    boot(tmp_path, "for i in range(120):\n    r.add('door', {}, None)\nout()")
    kept = (tmp_path / "events.dropped").read_text()
    sealed = boot(tmp_path, f"s = r.seal(1764400000)\n{STATE}")
    assert sealed["summary"] is None and not (tmp_path / "events.dropped").exists()
    (tmp_path / "events.dropped").write_text(kept)  # as if the reset came before its removal
    again = boot(tmp_path, STATE)
    assert again["summary"] is None and again["pending"] == sealed["pending"]
    assert not (tmp_path / "events.dropped").exists()  # one summary, not two


def test_a_summary_let_go_again_is_added_into_the_next(tmp_path: Path) -> None:
    state = boot(
        tmp_path,
        "for i in range(120):\n    r.add('door', {}, None)\n"
        "r.seal(1764400000)\n"
        "for i in range(200):\n    r.add('bp', {}, None)\n" + STATE,
    )
    summary, first_kept = state["summary"], state["pending"][0]
    # Every seq before the first kept is counted but the old summary's own (its counts are).
    assert summary["events"] == first_kept - 1 - 1
    assert summary["sensors"]["door"] == 120 and summary["first_seq"] == 1
    assert sum(summary["sensors"].values()) == summary["events"]


def test_the_ring_file_of_earlier_firmware_is_taken_over(tmp_path: Path) -> None:
    slot = 256
    frames = [{"v": 1, "seq": s, "sensor": "bp", "data": {"sys": 150}} for s in (7, 8)]
    ring = b"".join(json.dumps(f).encode().ljust(slot) for f in frames) + b" " * slot * 30
    (tmp_path / "events.ring").write_bytes(ring)
    (tmp_path / "events.seq").write_text("8")
    state = boot(tmp_path, f"p = r.payload(8)\n{STATE[:-1]}, eight=json.loads(p))")
    assert state["pending"] == [7, 8] and state["seq"] == 8 and state["eight"] == frames[1]
    assert not (tmp_path / "events.ring").exists()


def test_a_resend_that_finds_the_link_gone_queues_everything_again(tmp_path: Path) -> None:
    """The chaos benchmark's crash (KeyError in Sensor._resend): a send that loses the link
    empties the sent table while the resend scan walks it."""
    script = """
import time
from fayd_fw.sensor import Sensor
calls = []
def send(kind, payload):
    calls.append(kind)
    if len(calls) > 3:  # the first resend finds the link gone
        s.link_lost()
        return False
    return True
s = Sensor({'state_dir': FOLDER, 'sensor': {'resend_s': 0}}, send)
for i in range(3):
    s.event('door', {'open': True})
s._resend(time.ticks_add(time.ticks_ms(), 1000), 8)
out(queue=s.queue, sent=sorted(s.sent), calls=len(calls))
""".replace("FOLDER", repr(str(tmp_path)))
    state = boot(tmp_path, script)
    assert state == {"queue": [1, 2, 3], "sent": [], "calls": 4}
