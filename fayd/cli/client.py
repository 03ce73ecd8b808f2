"""How the CLI finds and talks to the daemon: which install it is about (the caller's own
state, or the service's ``/etc/fayd`` and ``/var/lib/fayd``), its runtime file, its token,
then HTTP (every request carries the token: fayd.auth)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import httpx

from fayd.auth import TOKEN_FILE, TokenUnreadable, read_token
from fayd.config import Config, load_config
from fayd.errors import FaydError

#: The service install's folders (install.sh --system, systemd/fayd.service), below
#: ``$FAYD_ROOT`` when it is set (install.sh's staging prefix, for packaging and tests).
SYSTEM_CONFIG = "etc/fayd/fayd.toml"
SYSTEM_STATE = "var/lib/fayd"
#: What a user outside the service's group is told (its folders are 0750 root/fayd:fayd).
JOIN_GROUP = "run with sudo or join the fayd group (sudo usermod -aG fayd $USER, then log in again)"


class NotRunning(FaydError):
    """The daemon is not running, or does not answer."""


class NoPermission(FaydError):
    """This user may not read the install's config, state or token."""


class ApiError(FaydError):
    """The daemon refused or failed a request; the message is its own."""


def system_root() -> Path:
    return Path(os.environ.get("FAYD_ROOT") or "/")


def is_system(cfg: Config) -> bool:
    """The settings are the service install's (its config file or state folder)."""
    root = system_root()
    return cfg.source == str(root / SYSTEM_CONFIG) or cfg.state_dir == root / SYSTEM_STATE


def load_cli_config(path: str | None) -> Config:
    """The settings of the fayd a command is about. ``--config``, ``$FAYD_CONFIG`` or a
    state folder named in the environment (``FAYD_PATHS_STATE_DIR``, ``$STATE_DIRECTORY``,
    ``$XDG_STATE_HOME``) decide; else the caller's own state folder when it exists
    (developer mode); else a service install, when there is one."""
    if path or os.environ.get("FAYD_CONFIG"):
        return load_config(path)
    cfg = load_config()
    named = any(os.environ.get(v) for v in ("STATE_DIRECTORY", "XDG_STATE_HOME"))
    if cfg.paths.state_dir or named or cfg.state_dir.exists():
        return cfg
    root = system_root()
    config, state = root / SYSTEM_CONFIG, root / SYSTEM_STATE
    if not (config.parent.is_dir() or state.is_dir()):
        return cfg
    system = cfg  # only /var/lib/fayd: the defaults, in the service's state folder
    if config.parent.is_dir():  # the service's own file; when it is wrong, say so
        try:
            system = load_config(config)
        except PermissionError as exc:
            raise NoPermission(f"{config} is not readable by you: {JOIN_GROUP}") from exc
    if system.paths.state_dir:
        return system
    return dataclasses.replace(
        system, paths=dataclasses.replace(system.paths, state_dir=str(state))
    )


def _start_hint(cfg: Config) -> str:
    return "sudo systemctl start fayd" if is_system(cfg) else "fayd run"


def runtime(cfg: Config) -> dict[str, Any]:
    """The running daemon's pid and addresses, from the file it writes when ready."""
    path = cfg.runtime_path
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NotRunning(
            f"fayd is not running (no {path}); start it with: {_start_hint(cfg)}"
        ) from exc
    except PermissionError as exc:
        raise NoPermission(f"{path} is not readable by you: {JOIN_GROUP}") from exc
    except ValueError as exc:
        raise NotRunning(f"{path} is unreadable: {exc}") from exc


def token(cfg: Config) -> str:
    try:
        return read_token(cfg.state_dir)
    except TokenUnreadable as exc:
        path = cfg.state_dir / TOKEN_FILE
        if isinstance(exc.__cause__, PermissionError):
            raise NoPermission(f"{path} is not readable by you: {JOIN_GROUP}") from exc
        raise NotRunning(f"{exc}; start it with: {_start_hint(cfg)}") from exc


def call(cfg: Config, method: str, path: str, timeout: float = 10, **kw: Any) -> Any:
    url = runtime(cfg)["api"] + path
    headers = {"Authorization": f"Bearer {token(cfg)}"}
    if method != "GET" and "json" not in kw:
        kw["json"] = {}  # the API takes JSON bodies only
    try:
        response = httpx.request(method, url, timeout=timeout, headers=headers, **kw)
    except httpx.TimeoutException as exc:
        raise ApiError(f"fayd did not answer within {timeout:g} s ({method} {path})") from exc
    except httpx.TransportError as exc:
        raise NotRunning(f"fayd does not answer at {url}: {exc} (stale runtime file?)") from exc
    try:
        data = response.json()
    except ValueError as exc:
        raise ApiError(f"{url} answered HTTP {response.status_code}, not fayd's JSON") from exc
    if response.status_code >= 400:
        raise ApiError(data.get("error", f"HTTP {response.status_code}"))
    return data
