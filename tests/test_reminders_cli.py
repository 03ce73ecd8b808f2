"""``fayd reminders list|add|cancel``, on the database when no daemon runs and through the
API when one does; bad input is one line naming the field, nothing stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fayd.testing.harness import DaemonProcess


def fayd(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(state), "FAYD_AGENT_TIMEZONE": "UTC"}
    return subprocess.run(
        [sys.executable, "-m", "fayd", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_without_the_daemon(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = fayd(
        state, "reminders", "add", "call your son", "--user", "ann", "--at", "2099-12-06 17:00"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "#1 ann  Sun 06 Dec 17:00  once  reminder  call your son"
    done = fayd(state, "reminders", "add", "pills", "--every", "day", "--time", "08:00",
                "--kind", "medication", "--user", "ann")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "  day 08:00  medication  pills" in done.stdout
    for args, error in [
        (("--at", "2001-01-01 08:00"), "fayd: at: that time has already passed\n"),
        (("--at", "2099-02-30 08:00"), "fayd: at: '2099-02-30T08:00' is no date and time"),
        (("--every", "day"), "fayd: rule.at: every day needs a time of day\n"),
        (("--every", "week", "--time", "08:00", "--days", "fun"), "fayd: rule.days:"),
        (("--every", "hours", "--hours", "0"), "fayd: rule.hours:"),
    ]:
        done = fayd(state, "reminders", "add", "x", *args)
        assert done.returncode != 0 and done.stderr.startswith(error), (args, done.stderr)
        assert "Traceback" not in done.stderr
    listed = json.loads(fayd(state, "reminders", "list", "--json").stdout)
    assert [r["text"] for r in listed] == ["pills", "call your son"]  # soonest first
    assert fayd(state, "reminders", "cancel", "1").stdout == "cancelled reminder 1\n"
    done = fayd(state, "reminders", "cancel", "1")
    assert done.returncode == 2 and "no active reminder 1" in done.stderr
    assert fayd(state, "reminders", "list").stdout.count("\n") == 1


def test_through_the_running_daemon(daemon: DaemonProcess) -> None:
    done = daemon.cli("reminders", "add", "water the plants", "--user", "cli-ann",
                      "--at", "2099-06-01 09:30", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["source"] == "api" and row["username"] == "cli-ann"
    listed = daemon.cli("reminders", "list", "--user", "cli-ann")
    assert "water the plants" in listed.stdout
    assert daemon.cli("reminders", "cancel", str(row["id"])).returncode == 0
    done = daemon.cli("reminders", "cancel", str(row["id"]))
    assert done.returncode != 0 and f"no active reminder {row['id']}" in done.stderr
    status = daemon.cli("status")
    assert "reminders: " in status.stdout
