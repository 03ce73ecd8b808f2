"""``fayd homeassistant``: what to type into Home Assistant's MQTT integration so it sees
fayd (docs/homeassistant.md): the broker, Home Assistant's account on it and the
discovery prefix."""

from __future__ import annotations

import argparse
import json
from typing import Any
from urllib.parse import urlsplit

from fayd.cli.client import NotRunning, runtime
from fayd.config import Config
from fayd.homeassistant import read_identity


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "homeassistant", help="how Home Assistant connects to fayd (its MQTT login)"
    )
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=cmd_homeassistant)


def _broker(cfg: Config) -> tuple[str, int | None]:
    if cfg.mqtt.url != "embedded":
        parts = urlsplit(cfg.mqtt.url)
        return parts.hostname or "", parts.port or 1883
    try:
        parts = urlsplit(runtime(cfg)["mqtt"])
    except NotRunning:
        return cfg.mqtt.embedded_host, cfg.mqtt.embedded_port or None
    host = cfg.mqtt.embedded_host  # where others reach it; the runtime file says loopback
    return (parts.hostname if host in ("127.0.0.1", "::1") else host) or "", parts.port


def cmd_homeassistant(cfg: Config, args: argparse.Namespace) -> int:
    ha = cfg.homeassistant
    if not ha.enabled:
        print("Home Assistant discovery is off: set [homeassistant] enabled = true, restart fayd.")
        return 1
    host, port = _broker(cfg)
    embedded = cfg.mqtt.url == "embedded"
    identity = read_identity(cfg.state_dir)
    found = {
        "broker": host,
        "port": port,
        "username": identity.user if embedded else None,
        "password": identity.password if embedded else None,
        "discovery_prefix": ha.discovery_prefix,
        "node_id": identity.node,
    }
    if args.json:
        print(json.dumps(found))
        return 0
    print("In Home Assistant: Settings > Devices & services > Add integration > MQTT:")
    print(f"  broker   {host}\n  port     {port or '(start fayd to see it)'}")
    if embedded:
        print(f"  username {identity.user}\n  password {identity.password}")
    else:
        print("  username and password: Home Assistant's own account on your broker")
    print(f"Discovery prefix {ha.discovery_prefix} (the MQTT integration's default).")
    if embedded and host in ("127.0.0.1", "::1", "localhost"):
        print(
            "The broker listens on this box only: set mqtt.embedded_host (docs/security.md)"
            " if Home Assistant runs elsewhere."
        )
    return 0
