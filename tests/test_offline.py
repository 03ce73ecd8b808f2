"""Offline, always: fayd turns off onnxruntime's telemetry (1.29+ uploads usage events from
Linux too, looking up mobile.events.data.microsoft.com), and a process that runs a model
through fayd makes no network connection."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# A model run as fayd runs them, then as long as onnxruntime's uploader took to try (~25 s
# after start, measured with strace without the opt-out).
RUN_A_MODEL = """
import os, sys, time
os.environ["ORT_DISABLE_TELEMETRY"] = "0"  # a user's environment cannot turn it back on
import fayd
assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
from fayd.memory.open import load_embedder
load_embedder().embed(["a sentence to embed"])
time.sleep(float(sys.argv[1]))
"""


def test_importing_fayd_turns_onnxruntime_telemetry_off() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN_A_MODEL.split("from fayd.memory")[0]],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.models
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_running_a_model_connects_to_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "connect.txt"
    strace = ["strace", "-f", "-e", "trace=connect", "-o", str(trace)]
    done = subprocess.run(
        [*strace, sys.executable, "-c", RUN_A_MODEL, "30"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if "Operation not permitted" in done.stderr:
        pytest.skip("strace cannot trace here (ptrace is not permitted)")
    assert done.returncode == 0, done.stderr
    # Local sockets (nscd, the log) are fine; an internet address, or DNS, is not.
    reached = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
    assert reached == [], reached
