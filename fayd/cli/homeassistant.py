"""``fayd homeassistant``: what to type into Home Assistant's MQTT integration so it sees
fayd (docs/homeassistant.md): the broker, Home Assistant's account on it and the
discovery prefix.

The running daemon is asked first: its settings are the ones that count (it may have been
started with a config file or environment this shell does not have). Only when no fayd
runs are this shell's settings read."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from urllib.parse import urlsplit

from fayd.cli.client import NotRunning, call, runtime
from fayd.config import Config
from fayd.homeassistant import read_identity

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "homeassistant", help="how Home Assistant connects to fayd (its MQTT login)"
    )
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=cmd_homeassistant)


def _from_daemon(cfg: Config) -> dict[str, Any] | None:
    """What the running daemon says: HA on or off, its discovery prefix and broker; None
    when no fayd runs."""
    try:
        status = call(cfg, "GET", "/api/status")
        url = runtime(cfg)["mqtt"]
    except NotRunning:
        return None
    ha, broker = status.get("homeassistant"), status.get("broker") or {}
    parts = urlsplit(url)
    host = broker.get("embedded_host") or ""
    if not broker.get("embedded") or host in LOOPBACK:  # else where the LAN reaches it
        host = parts.hostname or ""
    return {
        "enabled": ha is not None,
        "config": status.get("config", ""),
        "discovery_prefix": (ha or {}).get("discovery_prefix", ""),
        "embedded": bool(broker.get("embedded")),
        "host": host,
        "port": parts.port or 1883,
    }


def _from_config(cfg: Config) -> dict[str, Any]:
    embedded = cfg.mqtt.url == "embedded"
    parts = urlsplit("mqtt://x" if embedded else cfg.mqtt.url)
    return {
        "enabled": cfg.homeassistant.enabled,
        "config": cfg.source or "(embedded defaults)",
        "discovery_prefix": cfg.homeassistant.discovery_prefix,
        "embedded": embedded,
        "host": cfg.mqtt.embedded_host if embedded else parts.hostname or "",
        "port": (cfg.mqtt.embedded_port or None) if embedded else parts.port or 1883,
    }


def cmd_homeassistant(cfg: Config, args: argparse.Namespace) -> int:
    daemon = _from_daemon(cfg)
    found = daemon or _from_config(cfg)
    if not found["enabled"]:
        where = "the running fayd" if daemon else "fayd's settings"
        print(
            f"Home Assistant discovery is off in {where} ({found['config']}): set"
            " [homeassistant] enabled = true there, then restart fayd.",
            file=sys.stderr,
        )
        return 1
    host, port, embedded = found["host"], found["port"], found["embedded"]
    identity = read_identity(cfg.state_dir)
    login = {
        "broker": host,
        "port": port,
        "username": identity.user if embedded else None,
        "password": identity.password if embedded else None,
        "discovery_prefix": found["discovery_prefix"],
        "node_id": identity.node,
    }
    if args.json:
        print(json.dumps(login))
        return 0
    print("In Home Assistant: Settings > Devices & services > Add integration > MQTT:")
    print(f"  broker   {host}\n  port     {port or '(start fayd to see it)'}")
    if embedded:
        print(f"  username {identity.user}\n  password {identity.password}")
    else:
        print("  username and password: Home Assistant's own account on your broker")
    print(f"Discovery prefix {found['discovery_prefix']} (the MQTT integration's default).")
    if embedded and host in LOOPBACK:
        print(
            "The broker listens on this box only: set mqtt.embedded_host (docs/security.md)"
            " if Home Assistant runs elsewhere."
        )
    return 0
