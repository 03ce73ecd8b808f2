"""``fayd devices``: the device registry — add a device (its key and broker account), remove
one, list devices (presence, last seen, settings) and set per-device settings. Works with
or without the daemon: it opens the database directly (SQLite WAL), and a running daemon
picks a change up at once (add/remove: the broker reloads its accounts) or within a second
(settings). ``fayd devices ota`` (a signed firmware update over the device's link) needs the
running daemon."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

from fayd.auth import RESERVED_IDS, mqtt_password, new_device_secret, ota_signature
from fayd.cli.client import NotRunning, call
from fayd.cli.provision import add_provision_arguments, check_provision, provision
from fayd.config import Config
from fayd.errors import FaydError
from fayd.protocol import check_device_id
from fayd.store import Store
from fayd.store import devices_records as reg


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("devices", help="the device registry: list, set per-device settings")
    p.add_argument("--db", help="database file (default: the state folder's fayd.db)")
    sub = p.add_subparsers(dest="devices_command", metavar="ACTION")
    p.set_defaults(func=cmd_list, json=False)

    add = sub.add_parser(
        "add",
        help="add a device: make its key (its broker login and update signatures come from "
        "it) and print what goes into its config.json; with --port, also copy the firmware "
        "and its config onto the board and wait for its hello",
    )
    add.add_argument("device", help="device id: 1-64 of A-Z a-z 0-9 _ . -, not only dots")
    add.add_argument(
        "--new-key", action="store_true", help="replace its key (the old one stops working)"
    )
    add.add_argument("--json", action="store_true", help="print JSON (with the MQTT password)")
    add_provision_arguments(add)
    add.set_defaults(func=cmd_add)

    rm = sub.add_parser(
        "remove",
        help="forget a device: its key (the broker disconnects it at once), settings and "
        "registry entry; its stored events stay",
    )
    rm.add_argument("device", help="device id")
    rm.set_defaults(func=cmd_remove)

    ls = sub.add_parser("list", help="devices with presence, last seen, user and settings")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=cmd_list)

    st = sub.add_parser(
        "set",
        help="set a device's settings: user=NAME shared=NAME,NAME wake=on|off wake_threshold=0-1 "
        "volume=0-100 barge_in=on|off language=en|zh|auto pause_ms=300-5000 (KEY= unsets)",
    )
    st.add_argument("device", help="device id (added, or seen; it need not be online)")
    st.add_argument("settings", nargs="+", metavar="KEY=VALUE")
    st.add_argument(
        "--wait",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds to wait for an online device to confirm (default 5; 0: do not wait)",
    )
    st.set_defaults(func=cmd_set)

    ota = sub.add_parser(
        "ota",
        help="update a device's firmware over its link (needs the running daemon); "
        "it goes back to its old version if the new one does not boot",
    )
    ota.add_argument("device", help="device id (online)")
    ota.add_argument(
        "--dir",
        required=True,
        type=Path,
        help="the app folder: version.py, fayd_fw/ … (boot.py, main.py, config.json, "
        "README.md and tools/ stay as they are on the device and are skipped)",
    )
    ota.add_argument("--version", help="the new version (default: FW_VERSION in version.py)")
    ota.add_argument(
        "--timeout", type=float, default=300, help="seconds to wait for the whole update"
    )
    ota.set_defaults(func=cmd_ota)
    return p


#: Not part of an OTA app: the device keeps its own (see firmware/README.md).
OTA_SKIP = {"boot.py", "main.py", "config.json", "README.md", "tools"}


def ota_files(folder: Path) -> list[Path]:
    """The files of an app folder to send, sorted; hidden files and caches left out."""
    if not folder.is_dir():
        raise FaydError(f"{folder} is not a folder")
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0] in OTA_SKIP or not path.is_file():
            continue
        if any(p.startswith(".") or p == "__pycache__" for p in rel.parts) or path.suffix == ".pyc":
            continue
        out.append(path)
    if not out:
        raise FaydError(f"{folder} has no files to send")
    return out


def cmd_ota(cfg: Config, args: argparse.Namespace) -> int:
    device = check_device_id(args.device)
    folder: Path = args.dir
    paths = ota_files(folder)
    version = args.version
    found = None
    if (folder / "version.py").is_file():
        m = re.search(r"FW_VERSION\s*=\s*[\"']([^\"']+)[\"']", (folder / "version.py").read_text())
        found = m.group(1) if m else None
    if version is None:
        if found is None:
            raise FaydError(f"no FW_VERSION in {folder / 'version.py'}: give --version")
        version = found
    elif found is not None and found != version:
        raise FaydError(f"--version {version}, but {folder / 'version.py'} says {found}")
    files = []
    for path in paths:
        data = path.read_bytes()
        files.append(
            {
                "path": path.relative_to(folder).as_posix(),
                "data": base64.b64encode(data).decode(),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    store = _store(cfg, args)
    try:
        _known(store, device)
        secret = store.call(reg.device_secret, device)
    finally:
        store.close()
    if secret is None:
        raise FaydError(f"{device} has no key, so it takes no updates: fayd devices add {device}")
    manifest = [(f["path"], len(base64.b64decode(f["data"])), f["sha256"]) for f in files]
    signature = ota_signature(secret, device, version, manifest)
    print(f"{device}: sending {version} ({len(files)} files) …", flush=True)
    r = call(
        cfg,
        "POST",
        f"/api/devices/{device}/ota",
        timeout=args.timeout,
        json={"version": version, "files": files, "signature": signature},
    )
    print(
        f"{device}: now running {r['version']} (folder {r['slot']}; {r['unchanged']} of "
        f"{r['files']} files unchanged; {r['bytes_sent']} bytes in {r['chunks']} chunks; "
        f"{r['seconds']} s)"
    )
    return 0


def _store(cfg: Config, args: argparse.Namespace) -> Store:
    return Store(args.db or cfg.db_path)


def reload_broker(cfg: Config) -> str:
    """Tell a running daemon that keys changed; what happened, in words."""
    try:
        done = call(cfg, "POST", "/api/devices/reload")
    except NotRunning:
        return "fayd is not running: its broker reads the accounts when it starts"
    if done["broker"] != "embedded":
        return "fayd uses an external broker: give it the account yourself (docs/security.md)"
    n = done["accounts"]
    return f"the broker now admits {n} device{'' if n == 1 else 's'}"


def ensure_key(
    cfg: Config, device: str, db: str | None = None, new: bool = False
) -> tuple[str, bool]:
    """The device's secret, made now if it has none (or ``new``); (secret, made now)."""
    device = check_device_id(device)
    if device in RESERVED_IDS:
        raise FaydError(f"{device!r} is fayd's own broker name; choose another device id")
    store = Store(db or cfg.db_path)
    try:
        secret = store.call(reg.device_secret, device)
        if secret is None or new:
            secret = new_device_secret()
            store.call(reg.add_device_key, device, secret)
            return secret, True
        return secret, False
    finally:
        store.close()


def cmd_add(cfg: Config, args: argparse.Namespace) -> int:
    if args.port or args.copy_to:
        check_provision(args)
    secret, made = ensure_key(cfg, args.device, args.db, args.new_key)
    broker = reload_broker(cfg) if made else ""
    if args.port or args.copy_to:  # the board too: its config.json is written for it
        return provision(cfg, args, args.device, secret)
    if args.json:
        print(
            json.dumps(
                {
                    "device": args.device,
                    "key": secret,
                    "mqtt_user": args.device,
                    "mqtt_password": mqtt_password(secret),
                    "new": made,
                }
            )
        )
        return 0
    what = "added" if made else "already added; its key is unchanged"
    print(f"{args.device}: {what}. In the device's config.json, set:")
    print(f'  "device": "{args.device}",\n  "key": "{secret}"')
    print(
        "The key is its password: keep config.json private (it logs in and checks updates with it)."
    )
    if broker:
        print(broker)
    return 0


def _known(store: Store, device: str, hint: str = "") -> None:
    """A typo gets the list of devices, not a confusing error about that name."""
    known = store.call(reg.known_devices)
    if device not in known:
        raise FaydError(
            f"no device {device!r} (known: {', '.join(sorted(known)) or 'none yet'}){hint}"
        )


def cmd_remove(cfg: Config, args: argparse.Namespace) -> int:
    device = check_device_id(args.device)
    store = _store(cfg, args)
    try:
        _known(store, device)
        store.call(reg.remove_device, device)
    finally:
        store.close()
    print(f"{device}: removed; {reload_broker(cfg)}")
    return 0


def cmd_set(cfg: Config, args: argparse.Namespace) -> int:
    device = check_device_id(args.device)
    changes = dict(reg.parse_setting(pair) for pair in args.settings)  # all checked first
    store = _store(cfg, args)
    try:
        # A typo must not make a phantom device; a new one is added first (its key).
        _known(store, device, f"; a new one is added with: fayd devices add {device}")
        store.call(reg.set_settings, device, changes)
        row = next(r for r in store.call(reg.registry) if r["id"] == device)
    finally:
        store.close()
    print(f"{device}: {_settings_text(row['settings'])}")
    return _confirm_set(cfg, device, {k: v for k, v in changes.items() if v is not None}, args.wait)


def _confirm_set(cfg: Config, device: str, changed: dict[str, Any], wait_s: float) -> int:
    """Says where the settings just set took effect: "applied on the device" only when the
    device acknowledged them (fayd.devices.settings_acks), else that it gets them later."""
    later = "it gets them when it next says hello"
    try:
        r = call(
            cfg,
            "POST",
            f"/api/devices/{device}/settings",
            timeout=max(0.0, wait_s) + 10,
            json={"wait_s": min(max(0.0, wait_s), 60.0)},
        )
    except NotRunning:
        print(f"saved; fayd is not running: {device} gets them when it next says hello to fayd")
        return 0

    def shown(keys: list[str]) -> str:
        return _settings_text({k: changed[k] for k in keys})

    state = r["state"]
    if state == "offline":
        print(f"saved; {device} is offline: {later}")
    elif state == "silent" and wait_s <= 0:
        print(f"saved and sent; not waiting for {device} to confirm")
    elif state == "silent":
        print(f"saved; {device} did not confirm within {wait_s:g} s: {later}")
    elif state == "refused":
        raise FaydError(f"saved, but {device} refused them ({r['error']}); is its firmware old?")
    # Keys the device is never told (user), and in an ack those fayd applies to its audio.
    by_fayd = [k for k in changed if k not in r["device_side"] or k in r.get("by_fayd", ())]
    on_device = [k for k in r.get("on_device", ()) if k in changed]
    missing = [k for k in r.get("unsupported", ()) if k in changed]
    if on_device:
        print(f"applied on the device: {shown(on_device)}")
    if missing:
        print(f"not applied: {device} has nothing for {shown(missing)}")
    if by_fayd and state in ("applied", "fayd"):
        print(f"applied by fayd: {shown(by_fayd)}")
    return 0


def cmd_list(cfg: Config, args: argparse.Namespace) -> int:
    store = _store(cfg, args)
    try:
        rows = store.call(reg.registry)
    finally:
        store.close()
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no devices yet: fayd devices add NAME")
        return 0
    now = time.time()
    print(f"{'DEVICE':20} {'STATE':8} {'LAST SEEN':10} {'KEY':4} {'USER':12} {'ROLES':18} SETTINGS")
    for r in rows:
        state = "online" if r["online"] else ("offline" if r["last_seen"] else "never")
        key = "yes" if r["key"] else "NO"
        roles = ",".join(r["roles"]) or "-"
        print(
            f"{r['id']:20} {state:8} {_ago(r['last_seen'], now):10} {key:4} "
            f"{r['user'] or '-':12} {roles:18} {_settings_text(r['settings'])}"
        )
    if any(not r["key"] for r in rows):
        print("A device without a key cannot log in to fayd's broker: fayd devices add DEVICE")
    return 0


def _ago(at: float | None, now: float) -> str:
    if not at:
        return "-"
    seconds = max(0.0, now - at)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{seconds:.0f}s ago"


def _settings_text(settings: dict[str, Any]) -> str:
    def show(v: Any) -> str:
        if isinstance(v, list | tuple):  # shared=alice,bob, as it is set
            return ",".join(map(str, v))
        return ("on" if v else "off") if isinstance(v, bool) else str(v)

    return " ".join(f"{k}={show(v)}" for k, v in settings.items()) or "(defaults)"
