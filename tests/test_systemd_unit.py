"""systemd/fayd.service: systemd's checker accepts it, and the directives fayd needs are set.

systemd is installed here but is not PID 1; ``systemd-analyze verify`` and ``security --offline``
work on unit files without a running manager.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "systemd" / "fayd.service"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def directives(text: str) -> dict[str, dict[str, list[str]]]:
    """``{section: {key: [values, in order]}}``; repeated keys (DeviceAllow=) keep every value."""
    sections: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        sections[section][key.strip()].append(value.strip())
    return sections


SERVICE = directives(UNIT.read_text())["Service"]


def _verifiable_copy(tmp_path: Path) -> Path:
    """The unit with ExecStart= pointing at a binary that exists on this machine.

    ``verify`` checks that ExecStart's executable exists, and /opt/fayd/venv/bin/fayd exists only
    after ``install.sh --system``. Every other line is checked as written.
    """
    true = shutil.which("true")
    assert true
    lines = [
        f"ExecStart={true} run --config /etc/fayd/fayd.toml"
        if line.startswith("ExecStart=")
        else line
        for line in UNIT.read_text().splitlines()
    ]
    copy = tmp_path / UNIT.name
    copy.write_text("\n".join(lines) + "\n")
    return copy


def _analyze(*args: str) -> subprocess.CompletedProcess[str]:
    assert ANALYZE
    return subprocess.run([ANALYZE, *args], capture_output=True, text=True, timeout=60)


@needs_analyze
def test_systemd_analyze_verify_is_silent(tmp_path: Path) -> None:
    # Unknown or misspelt keys only warn (exit status 0), so any output at all is a failure.
    done = _analyze("verify", str(_verifiable_copy(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == ""


@needs_analyze
def test_verify_reports_unknown_keys_on_stderr(tmp_path: Path) -> None:
    # Guards the test above: if verify stopped printing warnings, silence would prove nothing.
    unit = tmp_path / "bad.service"
    unit.write_text(f"[Service]\nExecStart={shutil.which('true')}\nProtectSistem=strict\n")
    done = _analyze("verify", str(unit))
    assert "ProtectSistem" in done.stderr


@needs_analyze
def test_security_exposure_stays_low(tmp_path: Path) -> None:
    # Exposure 0-10 (lower is safer); 1.5 when written. --threshold is in tenths.
    done = _analyze("security", "--offline=yes", "--threshold=20", str(_verifiable_copy(tmp_path)))
    if "--offline" in done.stderr and "unrecognized" in done.stderr:
        pytest.skip("this systemd-analyze has no --offline")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        ("ExecStart", "/opt/fayd/venv/bin/fayd run --config /etc/fayd/fayd.toml"),
        ("WatchdogSec", "30"),
        ("Restart", "on-failure"),
        ("User", "fayd"),
        ("Group", "fayd"),
        ("StateDirectory", "fayd"),
        ("ConfigurationDirectory", "fayd"),
        ("RuntimeDirectory", "fayd"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("DevicePolicy", "closed"),
        ("CapabilityBoundingSet", ""),
        ("StandardInput", "null"),
        ("StandardOutput", "journal"),
        ("Environment", "PYTHONUNBUFFERED=1"),
    ],
)
def test_required_directive(key: str, value: str) -> None:
    assert value in SERVICE[key], f"{key}={value} missing (have {SERVICE.get(key)})"


def test_serial_and_audio_devices_are_allowed() -> None:
    allowed = SERVICE["DeviceAllow"]
    for group in ("char-ttyUSB rw", "char-ttyACM rw", "char-alsa rw"):
        assert group in allowed
    assert {"dialout", "audio"} <= set(" ".join(SERVICE["SupplementaryGroups"]).split())


def test_start_timeout_leaves_room_for_model_loading() -> None:
    (timeout,) = SERVICE["TimeoutStartSec"]
    (watchdog,) = SERVICE["WatchdogSec"]
    assert int(timeout) >= 120
    assert int(watchdog) >= 10  # fayd pings every WatchdogSec/2; too short flaps on a busy Pi


def test_starts_on_boot() -> None:
    sections = directives(UNIT.read_text())
    assert "multi-user.target" in sections["Install"]["WantedBy"]
    assert "network-online.target" in sections["Unit"]["Wants"]
