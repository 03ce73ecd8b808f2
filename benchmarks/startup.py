"""Cold start → READY=1: how long ``fayd run`` takes until systemd would see it ready
(database open, default models loaded, embedded broker and control API listening).

    .venv/bin/python benchmarks/startup.py [--runs 3]

Each run starts fayd in a fresh state folder with a real NOTIFY_SOCKET and times the READY=1
datagram from process start. Prints one JSON object (median of the runs, and each run).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import time
from pathlib import Path

from fayd.testing.harness import DaemonProcess


def one_run() -> float:
    state = Path(tempfile.mkdtemp(prefix="fayd-start-"))
    path = state / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(120)
    daemon = DaemonProcess(state / "state", {"NOTIFY_SOCKET": str(path)})
    started = time.monotonic()
    daemon.start(wait_ready=False)
    try:
        while "READY=1" not in sock.recv(4096).decode().splitlines():
            pass
        return (time.monotonic() - started) * 1000
    finally:
        daemon.stop()
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = [round(one_run(), 1) for _ in range(parser.parse_args().runs)]
    print(json.dumps({"start_to_ready_ms": statistics.median(runs), "runs_ms": runs}))


if __name__ == "__main__":
    main()
