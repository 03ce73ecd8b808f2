"""This install's Home Assistant identity, made once and kept in
``<state>/homeassistant.json`` (mode 0600; 0640 under systemd, like the API token): the node
id that every discovery topic and ``unique_id`` carries (so entities stay the same across
restarts) and the password of Home Assistant's account on the embedded broker (so HA,
once set up, keeps logging in)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from fayd.auth import HOME_ASSISTANT_USER
from fayd.auth.tokens import write_private
from fayd.errors import FaydError

FILE = "homeassistant.json"


@dataclass(frozen=True)
class Identity:
    node: str
    user: str
    password: str


def read_identity(state_dir: Path) -> Identity:
    path = state_dir / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Identity(str(data["node"]), HOME_ASSISTANT_USER, str(data["password"]))
    except FileNotFoundError as exc:
        raise FaydError(
            f"no {path}: fayd makes it when it starts with [homeassistant] enabled = true"
        ) from exc
    except PermissionError as exc:
        raise FaydError(f"{path} is not readable by this user: use sudo") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise FaydError(f"{path} is damaged ({exc}): remove it and start fayd again") from exc


def ensure_identity(state_dir: Path) -> Identity:
    """This install's identity, made now if there is none (never replaced)."""
    path = state_dir / FILE
    if path.exists():
        return read_identity(state_dir)
    data = {"node": f"fayd_{secrets.token_hex(4)}", "password": secrets.token_urlsafe(24)}
    write_private(path, json.dumps(data))
    return read_identity(state_dir)
