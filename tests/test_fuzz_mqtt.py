"""10k random and mutated frames of every uplink kind against the real daemon over MQTT
(``benchmarks/fuzz_mqtt.py`` runs 100k): it stays up, answers with error frames (a burst,
then one a second per device), and valid events sent meanwhile are each stored once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .conftest import needs_mosquitto

FUZZ = Path(__file__).parent.parent / "benchmarks" / "fuzz_mqtt.py"


def load_fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_mqtt", FUZZ)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_mosquitto
async def test_10k_bad_frames_break_nothing(make_daemon) -> None:
    daemon = make_daemon()
    result = await load_fuzz().run(daemon, frames=10_000, seed=7, events=200)
    assert result["frames_sent"] == 10_000
    assert all(result["sent_by_kind"].get(kind) for kind in load_fuzz().UP_KINDS)
    # Every valid event was acked (after resends of those the full inbox dropped) and
    # stored exactly once.
    assert result["valid_acked"] == result["valid_events"] == 200
    assert result["valid_stored"] == result["valid_stored_distinct"] == 200
    # Bad frames were answered, within the per-device error budget.
    assert result["errors_received"] > 0
    frames = result["daemon_frames"]
    assert frames["errors_sent"] + frames["errors_suppressed"] > 1000
    assert result["still_served"] and result["daemon_up"]
    assert result["hub_restarts"] == 0 and result["log_tracebacks"] == 0
    assert daemon.stop() == 0
