"""The household's time zone: ``agent.timezone``, else the system's own. A module of its own
so that the CLI can read it without loading the daemon's parts."""

from __future__ import annotations

import os
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fayd.config import Config
from fayd.errors import ConfigError


def zone_name(cfg: Config) -> str:
    """``agent.timezone``, else the system's zone by name (/etc/localtime), else UTC."""
    if cfg.agent.timezone:
        return cfg.agent.timezone
    if os.environ.get("TZ") and not os.environ["TZ"].startswith(":"):
        return os.environ["TZ"]
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return "UTC"
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "UTC"


def household_zone(cfg: Config) -> tzinfo:
    """``agent.timezone``, else the system's own zone."""
    if not cfg.agent.timezone:
        return datetime.now().astimezone().tzinfo or UTC
    try:
        return ZoneInfo(cfg.agent.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"agent.timezone: no time zone {cfg.agent.timezone!r}") from exc
