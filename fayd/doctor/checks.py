"""The checks of ``fayd doctor``. Each looks at one thing and says what to do about it;
they work with or without a running daemon (``Facts.status`` is None then)."""

from __future__ import annotations

import datetime
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fayd import models
from fayd.auth.tokens import SERVICE_STATE_MODE, STATE_MODE, TOKEN_FILE
from fayd.config import Config
from fayd.doctor.sockets import exposure, is_loopback, listening, reachable
from fayd.models.user_files import own_models, user_file_problems
from fayd.service.disk import MB, DiskWatch

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Check:
    level: str  # OK, WARN or FAIL
    what: str  # the thing checked, e.g. "model asr"
    detail: str  # what was found, and the fix when not ok


@dataclass(frozen=True)
class Facts:
    cfg: Config
    system: bool  # the service install (its folders are group fayd's)
    status: dict[str, Any] | None  # the running daemon's status; None: not running
    runtime: dict[str, Any] | None  # its runtime file (addresses)


def models_check(facts: Facts) -> list[Check]:
    """Each role's model there and its files' sha256 as the manifest says (the same check
    as ``fayd models check --verify``; digests are cached by size and mtime)."""
    cfg = facts.cfg
    manifest = models.load_manifest()
    problems, own = user_file_problems(cfg, manifest), own_models(cfg, manifest)
    # The digests' cache is the daemon's; doctor makes no state folder of its own.
    cache = cfg.state_dir / "cache" if cfg.state_dir.is_dir() else None
    found = []
    for role in manifest.roles:
        what = f"model {role}"
        if role == "llm" and cfg.llm.url:
            found.append(Check(OK, what, f"served by {cfg.llm.url} (llm.url)"))
        elif role in problems:
            found.append(Check(FAIL, what, problems[role]))
        else:
            r = models.check(
                role,
                True,
                cache_dir=cache,
                manifest=manifest,
                override=own.get(role),
            )
            if not r.problem and not r.ok:  # an optional model, not installed
                found.append(Check(OK, what, f"optional, not installed ({r.install_hint})"))
                continue
            fix = f"{r.detail}; install: {r.install_hint}"
            found.append(
                Check(OK, what, f"{r.path}, sha256 right")
                if r.ok
                else Check(FAIL, what, f"{r.path}: {fix}")
            )
    return found


def daemon_check(facts: Facts) -> list[Check]:
    status = facts.status
    if status is None:
        start = "sudo systemctl start fayd" if facts.system else "fayd run"
        return [Check(WARN, "daemon", f"not running; start it with: {start}")]
    line = f"running, pid {status.get('pid')}, {status.get('health')}"
    problems = "; ".join(p.get("what", str(p)) for p in status.get("degraded") or [])
    return [Check(WARN if problems else OK, "daemon", f"{line}: {problems}" if problems else line)]


def broker_check(facts: Facts) -> list[Check]:
    cfg = facts.cfg
    embedded = cfg.mqtt.url == "embedded"
    if facts.runtime is not None:
        url = facts.runtime["mqtt"]
    elif embedded:
        if shutil.which(cfg.mqtt.mosquitto_bin) or shutil.which(
            cfg.mqtt.mosquitto_bin, path="/usr/sbin:/sbin"
        ):
            return [Check(OK, "broker", "embedded: fayd starts it (mosquitto is installed)")]
        fix = "install it: sudo apt install mosquitto (or set mqtt.mosquitto_bin)"
        return [Check(FAIL, "broker", f"embedded, but no {cfg.mqtt.mosquitto_bin}: {fix}")]
    else:
        url = cfg.mqtt.url
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or 1883}"
    kind = "embedded" if embedded else "mqtt.url"
    why = reachable(parts.hostname or "", parts.port or 1883)
    if why:
        return [Check(FAIL, "broker", f"{kind} {where} unreachable: {why}; is it running?")]
    return [Check(OK, "broker", f"{kind} {where} reachable")]


def _mode_check(what: str, path: Path, allowed: int, fix: str) -> Check:
    mode = stat.S_IMODE(path.stat().st_mode)
    extra = mode & ~allowed
    if not extra:
        return Check(OK, what, f"{path} mode {mode:o}")
    level = FAIL if extra & 0o007 else WARN  # others' access is the danger; group: a warning
    return Check(level, what, f"{path} mode {mode:o}, open to more than {allowed:o}: {fix}")


def permissions_check(facts: Facts) -> list[Check]:
    state = facts.cfg.state_dir
    if not state.is_dir():
        return [Check(WARN, "state folder", f"{state} not there yet: fayd run makes it")]
    folder = SERVICE_STATE_MODE if facts.system else STATE_MODE
    found = [_mode_check("state folder", state, folder, f"chmod {folder:o} {state}")]
    token, allowed = state / TOKEN_FILE, 0o640 if facts.system else 0o600
    if not token.exists():
        found.append(Check(WARN, "token file", f"no {token} yet: the daemon makes it"))
    else:
        fix = f"chmod {allowed:o} {token}, and replace it if others may have read it"
        found.append(_mode_check("token file", token, allowed, fix))
    return found


def _port(url: str | None, configured: int) -> int:
    return (urlsplit(url).port or configured) if url else configured


def sockets_check(facts: Facts) -> list[Check]:
    cfg, rt = facts.cfg, facts.runtime
    if rt is None:
        return [Check(OK, "sockets", "not checked: fayd is not running")]
    api_port = _port(rt.get("api"), cfg.api.port)
    found = []
    api = listening(api_port)
    if not api:
        found.append(Check(WARN, "api socket", f"nothing listens on {api_port} (stale runtime?)"))
    elif not all(is_loopback(a) for a in api) and not cfg.api.names:
        fix = 'set api.names = ["<this box>.local"] (docs/security.md)'
        found.append(
            Check(
                WARN, "api socket", f"{api_port} open to {exposure(api)} without api.names: {fix}"
            )
        )
    else:
        found.append(Check(OK, "api socket", f"{api_port} open to {exposure(api)}"))
    if cfg.mqtt.url == "embedded":
        port = _port(rt.get("mqtt"), cfg.mqtt.embedded_port)
        broker = listening(port)
        note = "" if all(map(is_loopback, broker)) else " (devices log in with their keys)"
        level = OK if broker else WARN
        found.append(
            Check(
                level,
                "broker socket",
                f"{port} open to {exposure(broker)}{note}"
                if broker
                else f"nothing listens on {port}",
            )
        )
    return found


def clock_check(facts: Facts) -> list[Check]:
    now = datetime.datetime.now(datetime.UTC)
    if now.year < 2024:
        fix = "set the time (sudo timedatectl set-ntp true, or a real-time clock)"
        return [
            Check(FAIL, "clock", f"{now:%Y-%m-%d}: reminders and alerts need the right time: {fix}")
        ]
    try:
        done = subprocess.run(
            ["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return [Check(OK, "clock", f"{now:%Y-%m-%d %H:%M} UTC (no timedatectl: sync not checked)")]
    synced = done.stdout.strip()
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or ["no answer"]
        return [Check(OK, "clock", f"{now:%Y-%m-%d %H:%M} UTC (NTP state unknown: {why[0]})")]
    if synced != "yes":
        return [Check(WARN, "clock", "not synchronised by NTP: sudo timedatectl set-ntp true")]
    return [Check(OK, "clock", f"{now:%Y-%m-%d %H:%M} UTC, NTP synchronised")]


def disk_check(facts: Facts) -> list[Check]:
    cfg = facts.cfg
    folder = cfg.state_dir
    while not folder.exists() and folder != folder.parent:  # not made yet: its disk
        folder = folder.parent
    watch = DiskWatch(folder, cfg.paths.disk_warn_mb, cfg.paths.disk_warn_percent, tuple, print)
    free, total = watch.free()
    line = f"{free // MB} MB free of {total // MB} MB at {folder}"
    if watch.is_low(free, total):
        return [Check(WARN, "disk", f"{line}: below paths.disk_warn_mb/percent; make room")]
    return [Check(OK, "disk", line)]


CHECKS: tuple[Callable[[Facts], list[Check]], ...] = (
    daemon_check,
    models_check,
    broker_check,
    permissions_check,
    sockets_check,
    clock_check,
    disk_check,
)


def run_checks(facts: Facts) -> list[Check]:
    found: list[Check] = []
    for check in CHECKS:
        try:
            found += check(facts)
        except OSError as exc:  # one check that cannot look does not stop the others
            found.append(
                Check(WARN, check.__name__.removesuffix("_check"), f"could not check: {exc}")
            )
    return found
