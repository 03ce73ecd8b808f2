"""How the CLI finds and talks to the running daemon: its runtime file, its token, then
HTTP (every request carries the token: fayd.auth)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from fayd.auth import read_token
from fayd.config import Config


class NotRunning(Exception):
    pass


def runtime(cfg: Config) -> dict[str, Any]:
    """The running daemon's pid and addresses, from the file it writes when ready."""
    try:
        return json.loads(cfg.runtime_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NotRunning(
            f"fayd is not running (no {cfg.runtime_path}); start it with: fayd run"
        ) from exc
    except ValueError as exc:
        raise NotRunning(f"{cfg.runtime_path} is unreadable: {exc}") from exc


def call(cfg: Config, method: str, path: str, timeout: float = 10, **kw: Any) -> Any:
    url = runtime(cfg)["api"] + path
    headers = {"Authorization": f"Bearer {read_token(cfg.state_dir)}"}
    if method != "GET" and "json" not in kw:
        kw["json"] = {}  # the API takes JSON bodies only
    try:
        response = httpx.request(method, url, timeout=timeout, headers=headers, **kw)
    except httpx.TransportError as exc:
        raise NotRunning(f"fayd does not answer at {url}: {exc} (stale runtime file?)") from exc
    data = response.json()
    if response.status_code >= 400:
        raise RuntimeError(data.get("error", f"HTTP {response.status_code}"))
    return data
