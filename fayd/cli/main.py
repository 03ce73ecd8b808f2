"""The ``fayd`` command. Every subcommand is documented in README.md (a test checks)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
import traceback
from typing import Any

from fayd import __version__
from fayd.cli.client import call, is_system, load_cli_config
from fayd.cli.failures import EXIT_BUG, EXIT_INTERRUPTED, EXIT_PIPE, explain
from fayd.config import Config, load_config
from fayd.errors import FaydError
from fayd.protocol.text import shown


def cmd_run(cfg: Config, args: argparse.Namespace) -> int:
    from fayd.service.daemon import Daemon
    from fayd.service.logs import setup_logging

    setup_logging(args.log_level or cfg.log.level, words=cfg.log.words)
    asyncio.run(Daemon(cfg).run())
    return 0


def cmd_status(cfg: Config, args: argparse.Namespace) -> int:
    status = call(cfg, "GET", "/api/status")
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    broker = status["broker"]
    link = "connected" if broker["connected"] else f"NOT connected ({broker['last_error']})"
    print(
        f"fayd {status['version']} (pid {status['pid']}), up {status['uptime_s']:.0f} s,"
        f" {_state_word(status)}"
    )
    for problem in status.get("degraded", []):  # each way it is not fine, first
        print(f"degraded: {problem['reason']}")
    print(f"config: {status['config']}; state: {status['state_dir']}")
    embedded = " (embedded)" if broker["embedded"] else ""
    print(f"broker: {broker['url']}{embedded}, {link}")
    for port in status.get("serial") or []:
        state = "open" if port["open"] else f"closed ({port['last_error']})"
        # A board that said hello but has not proved its key is not the port's device.
        device = port["device"] or f"(none: {port.get('auth') or 'no hello yet'})"
        print(f"serial: {port['port']} {state}, device {device}")
    for role, model in status["models"].items():
        print(f"model {role:4} {_model_word(model)}")
        if not model["ok"]:
            print(f"          {model['problem']}")
        elif model.get("fallback"):
            print(f"          your own is not used: {model['fallback']}")
    lag = status["loop_lag"]
    if lag.get("samples"):
        print(
            f"event loop: lag p50 {lag['p50_ms']} ms, p99 {lag['p99_ms']} ms, "
            f"max {lag['max_ms']} ms (last 5 minutes)"
        )
    print(f"devices: {len(status['devices'])}")
    for d in status["devices"]:
        print(
            f"  {d['id']:20} {'online ' if d['online'] else 'offline'} roles "
            f"{','.join(d['roles'] or [])} fw {d['fw']}"
        )
    for c in status["components"]:
        if c.get("state") == "failing":
            print(f"component {c['name']} FAILING ({c['failures']} times): {c['last_error']}")
        elif c.get("state") == "stalled":  # running, but its heartbeat stopped
            print(
                f"component {c['name']} STALLED: no heartbeat for {c['beat_age_s']:g} s "
                f"(it beats every {c['beat_every_s']:g} s)"
            )
        elif c["restarts"]:
            print(f"component {c['name']}: {c['restarts']} restarts, last: {c['last_error']}")
    for notice in status.get("notices", []):
        print(f"note: {notice}")
    if rem := status.get("reminders"):
        broken = f", {rem['broken']} BROKEN (fayd reminders list --all)" if rem["broken"] else ""
        print(
            f"reminders: {rem['fired']} fired, {rem['waiting']} waiting to be said,"
            f" {rem['unconfirmed']} medication unconfirmed{broken}"
        )
        for item in rem.get("unheard", []):  # nowhere to say it: the household should know
            print(f"reminders: {_unheard_line(item)}")
    if backup := status.get("backup"):
        print(f"backup: {_backup_line(backup)}")
    if disk := status.get("disk"):
        print(f"disk: {_disk_line(disk)}")
    if care := status.get("care"):
        for line in _care_lines(care):
            print(line)
    if (digest := status.get("digest")) is not None:
        print(f"care digest: {_digest_line(digest)}")
    if ha := status.get("homeassistant"):
        print(
            f"home assistant: node {ha['node']}, {ha['retained']} retained topics, "
            f"{ha['open_alerts']} open alerts, {ha['acknowledged']} acknowledged there"
            + (f", {ha['refused']} presses refused" if ha["refused"] else "")
        )
    if tools := status.get("tools"):
        for line in _tools_lines(tools):
            print(line)
    for p in status["last_problems"][-5:]:
        print(f"recent {p['level'].lower()}: {p['message']}")
    return 0


def _tools_lines(tools: dict[str, Any]) -> list[str]:
    """The household's documents and MCP servers (docs/tools.md)."""
    lines = [f"documents: {tools['documents']} ({tools['chunks']} passages)"]
    for server in tools["mcp_servers"]:
        state = server["state"]
        how = f"{len(server['tools'])} tools" if state == "up" else server["reason"] or state
        again = f", restarted {server['restarts']}×" if server["restarts"] else ""
        lines.append(f"mcp server {server['name']}: {state} ({how}{again})")
    return lines


def _state_word(status: dict[str, Any]) -> str:
    """ready, starting, DEGRADED, NOT READY or STALLED (the status's health fields)."""
    stalled = [c["name"] for c in status["components"] if c.get("state") == "stalled"]
    if stalled:  # it may look alive, but part of it does nothing
        return f"STALLED ({', '.join(stalled)})"
    if not status.get("serving", status["ready"]):
        return "starting"
    if not status["ready"]:
        return "NOT READY (see below)"
    return "DEGRADED (see below)" if status.get("degraded") else "ready"


def _model_word(model: dict[str, Any]) -> str:
    if model["ok"]:
        kind = "default instead of yours " if model.get("fallback") else ""
        return f"ok     {kind}{model['file']}"
    if model["file"]:  # it was there: broken, at start or since
        return f"BROKEN {model['file']}"
    return "MISSING"


def _unheard_line(item: dict[str, Any]) -> str:
    """A reminder or timer waiting with no speaker of its person online."""
    due = time.strftime("%H:%M", time.localtime(item["due_at"]))
    who, what = shown(str(item["user"])), shown(str(item["text"]))
    return f"NOT SAID to {who} (no speaker of theirs online): {what} (due {due})"


def _care_lines(care: dict[str, Any]) -> list[str]:
    """Open care alerts, and every notification that has not reached its caregiver yet."""
    lines = [f"care: {care['open']} open alert(s), {care['sent']} notifications sent"]
    for row in care["undelivered"]:
        retry = time.strftime("%H:%M:%S", time.localtime(row["next_at"]))
        lines.append(
            f"care: NOT DELIVERED to {row['caregiver']} ({row['url']}) for {row['alert']}: "
            f"{row['attempts']} tries, {row['last_error']}; next try {retry}"
        )
    return lines


def _digest_line(digest: dict[str, Any]) -> str:
    times = ", ".join(
        at if who == "everyone" else f"{who} {at}" for who, at in digest["times"].items()
    )
    sent = ", ".join(f"{who} {when}" for who, when in digest["last"].items())
    said = f"daily at {times}" if times else "off (set [care] digest_time)"
    return said + (f"; last queued: {sent}" if sent else "")


def _backup_line(backup: dict[str, Any]) -> str:
    """The nightly backup (fayd.store.nightly): the newest, or why the last one failed."""
    last = backup.get("last") or {}
    if last.get("ok") is False:
        return f"the last one FAILED: {last['error']}"
    if not backup["newest"]:
        return f"none yet in {backup['folder']}"
    made = time.strftime("%Y-%m-%d %H:%M", time.localtime(backup["newest_at"]))
    return f"newest {backup['newest']} ({made}), {backup['count']} kept"


def _disk_line(disk: dict[str, Any]) -> str:
    """Free space on the state folder's disk and what fayd keeps there (fayd.service.disk)."""
    if "error" in disk:
        return disk["error"]
    using = ", ".join(f"{k} {v:g} MB" for k, v in disk["using_mb"].items() if v)
    text = f"{disk['free_mb']:g} MB free of {disk['total_mb']:g} MB ({using or 'nothing'})"
    if disk["low"]:
        limit = f"{disk['warn_below_mb']} MB or {disk['warn_below_percent']:g}%"
        return f"NEARLY FULL: {text}; warns below {limit}"
    return text


def _check_device(cfg: Config, device: str | None) -> None:
    """A typo in ``--device`` gets the list of devices the daemon knows."""
    if device is None:
        return
    known = sorted(d["id"] for d in call(cfg, "GET", "/api/status")["devices"])
    if device not in known:
        raise FaydError(
            f"no device {device!r} has said hello (devices: {', '.join(known) or 'none yet'})"
        )


def cmd_say(cfg: Config, args: argparse.Namespace) -> int:
    _check_device(cfg, args.device)
    body: dict[str, Any] = {"text": " ".join(args.text), "user": args.user, "device": args.device}
    done = call(cfg, "POST", "/api/say", timeout=300, json=body)
    print(done["reply"])
    if args.explain:
        print(json.dumps(done.get("decision") or {}, ensure_ascii=False))
    if done.get("failed"):  # what was said is a stand-in: a script must see it failed
        raise FaydError(f"the reply failed: {done['failed']}")
    return 0


def cmd_chat(cfg: Config, args: argparse.Namespace) -> int:
    _check_device(cfg, args.device)
    if args.reset:
        call(cfg, "POST", "/api/reset", json={"user": args.user, "device": args.device})
        print("A new conversation: what was said before is left behind (memories stay).")
    print("Talk to fayd; an empty line or Ctrl-D ends.")
    while True:
        try:
            line = input("you> ").strip()
        except EOFError:
            print()
            return 0
        if not line:
            return 0
        body = {"text": line, "user": args.user, "device": args.device}
        done = call(cfg, "POST", "/api/say", timeout=300, json=body)
        print("fayd>", done["reply"])
        if done.get("failed"):
            print(f"(the reply failed: {done['failed']})")


def cmd_models(cfg: Config, args: argparse.Namespace) -> int:
    from fayd.cli import models as models_cli

    return models_cli.run(cfg, args)


def cmd_sim(cfg: Config, args: argparse.Namespace) -> int:
    from fayd.cli.sim import sim_device

    return sim_device(cfg, args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fayd", description="Offline companion daemon.")
    parser.add_argument("--version", action="version", version=f"fayd {__version__}")
    parser.add_argument(
        "--config",
        help="TOML config file (default: $FAYD_CONFIG, else your own state folder's defaults, "
        "else a service install's /etc/fayd/fayd.toml)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback when a command fails"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="run the daemon")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING, ERROR")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("status", help="is it up? devices, models, broker, recent problems")
    p.add_argument("--json", action="store_true", help="print the raw status as JSON")
    p.set_defaults(func=cmd_status)

    for name, func, help_text in (
        ("say", cmd_say, "one text turn against the running daemon"),
        ("chat", cmd_chat, "talk to the running daemon by text"),
    ):
        p = sub.add_parser(name, help=help_text)
        if name == "say":
            p.add_argument("text", nargs="+")
            p.add_argument(
                "--explain", action="store_true", help="also print how it was understood"
            )
        else:
            p.add_argument(
                "--reset", action="store_true", help="start a new conversation (memory stays)"
            )
        p.add_argument("--user", help="who is talking (default: agent.default_user)")
        p.add_argument("--device", help="also speak the reply on this device")
        p.set_defaults(func=func)

    p = sub.add_parser(
        "models", help="the models: list (with alternatives and your own), check, install"
    )
    from fayd.cli.models import add_arguments as models_arguments

    models_arguments(p)
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("sim", help="simulated hardware")
    sim = p.add_subparsers(dest="what", required=True)
    d = sim.add_parser("device", help="a device that speaks a WAV and saves what it hears")
    d.add_argument("--wav", help="speech to send as the microphone (any rate, mono/stereo)")
    d.add_argument("--text", help="send this text instead of audio")
    d.add_argument(
        "--event",
        help="be a sensor: send one event, e.g. panic, fall or bp,sys=171,dia=99",
    )
    d.add_argument("--user", help="the household member the device belongs to")
    d.add_argument("--out", default="sim-out", help="folder for reply.wav and frames.jsonl")
    d.add_argument("--id", default="sim-1", help="device id")
    d.add_argument("--broker", help="mqtt://host:port (default: the running daemon's)")
    d.add_argument("--realtime", action="store_true", help="pace the audio like a microphone")
    d.add_argument("--timeout", type=float, default=120, help="seconds to wait for the reply")
    d.set_defaults(func=cmd_sim)

    from fayd.cli import backup as backup_cli
    from fayd.cli import care as care_cli
    from fayd.cli import devices as devices_cli
    from fayd.cli import doctor as doctor_cli
    from fayd.cli import homeassistant as homeassistant_cli
    from fayd.cli import kb as kb_cli
    from fayd.cli import mcp as mcp_cli
    from fayd.cli import memory as memory_cli
    from fayd.cli import reminders as reminders_cli
    from fayd.cli import today as today_cli
    from fayd.cli import web as web_cli

    devices_cli.add_parser(sub)
    memory_cli.add_parser(sub)
    kb_cli.add_parser(sub)
    today_cli.add_parser(sub)
    reminders_cli.add_parser(sub)
    mcp_cli.add_parser(sub)
    backup_cli.add_parser(sub)
    care_cli.add_parser(sub)
    homeassistant_cli.add_parser(sub)
    web_cli.add_parser(sub)
    doctor_cli.add_parser(sub)
    return parser


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered cannot fail again on the way out (Python's documentation, signal module,
    "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Run a command. A failure is one line on stderr and an exit code (README, "Talk to
    it"; fayd.cli.failures); ``--debug`` adds the traceback."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        with contextlib.suppress(BrokenPipeError):  # --help | head -1: quiet at exit too
            sys.stdout.flush()
        raise
    cfg: Config | None = None
    try:
        # The daemon itself reads only what it is given; the other commands find it.
        cfg = load_config(args.config) if args.command == "run" else load_cli_config(args.config)
        code = int(args.func(cfg, args) or 0)
        sys.stdout.flush()  # a reader gone now is met here, not at exit (exit 120)
        return code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        # What reads the output has gone (``| head``): fayd's sockets raise their own
        # errors (httpx, aiomqtt), so a bare BrokenPipeError is stdout's.
        if isinstance(exc, BrokenPipeError):
            _quiet_stdout()
            return EXIT_PIPE
        message, code = explain(exc, cfg is not None and is_system(cfg))
        # The daemon's stderr is its log (the journal): a bug there keeps its traceback.
        if args.debug or (args.command == "run" and code == EXIT_BUG):
            traceback.print_exc()
        # "fayd is not running …" names fayd already: no "fayd: fayd …".
        print(message if message.startswith("fayd ") else f"fayd: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
