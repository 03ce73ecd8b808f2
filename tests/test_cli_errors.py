"""The command line as people meet it (issue 13): every mistake is one line on stderr, no
traceback, and an exit code that says what kind of failure it was (README, "Talk to it").
Each command runs as a subprocess; the cases that need fayd run against the real daemon."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.cli.failures import EXIT_BUG, explain
from fayd.testing.harness import DaemonProcess, free_port

from .conftest import MOSQUITTO, needs_mosquitto

ROOT = Path(__file__).resolve().parents[1]
SETPRIV = shutil.which("setpriv")


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without any fayd setting (they would pick the install)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAYD_")}
    env.pop("STATE_DIRECTORY", None)
    return {**env, **extra}


def fayd(
    *args: str,
    env: dict[str, str],
    prefix: tuple[str, ...] = (),
    timeout: float = 120,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``fayd ARGS`` in a subprocess, in the folder ``env["HOME"]`` (where relative file
    names are looked for)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "fayd", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=env["HOME"],
    )


def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """The command failed with ``code`` and said so in one line holding ``words``."""
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A developer-mode user with a state folder of their own and no daemon running."""
    home = tmp_path / "home"
    home.mkdir()
    return clean_env(FAYD_PATHS_STATE_DIR=str(tmp_path / "state"), HOME=str(home))


# --- no daemon needed ---------------------------------------------------------------------


def test_sim_device_with_a_missing_or_non_wav_file(user_env: dict[str, str]) -> None:
    work = Path(user_env["HOME"])
    one_line(fayd("sim", "device", "--wav", "missing.wav", env=user_env), 1, "no such file")
    (work / "notes.wav").write_text("these are notes, not audio\n")
    not_wav = fayd("sim", "device", "--wav", "notes.wav", env=user_env)
    one_line(not_wav, 1, "notes.wav is not a PCM WAV file", "espeak-ng")
    one_line(fayd("sim", "device", "--wav", str(work), env=user_env), 1, "is a folder")
    one_line(fayd("sim", "device", env=user_env), 2, "give --wav FILE")
    bad_event = fayd("sim", "device", "--event", "bp,sys", env=user_env)
    one_line(bad_event, 2, "--event: 'sys' is not key=value")
    # The file is checked before anything else: no device was added on the way.
    assert "sim-1" not in fayd("devices", "list", env=user_env).stdout


def test_memory_add_with_a_missing_or_binary_file(user_env: dict[str, str]) -> None:
    work = Path(user_env["HOME"])
    one_line(fayd("memory", "add", "--jsonl", "notes.jsonl", env=user_env), 1, "no such file")
    (work / "photo.jsonl").write_bytes(bytes(range(128, 256)))
    one_line(fayd("memory", "add", "--jsonl", "photo.jsonl", env=user_env), 1, "not UTF-8")


def test_a_typod_device_id_is_refused_with_the_known_ones(user_env: dict[str, str]) -> None:
    assert fayd("devices", "add", "kitchen-1", env=user_env).returncode == 0
    typo = fayd("devices", "set", "kitchn-1", "volume=70", env=user_env)
    one_line(typo, 1, "no device 'kitchn-1'", "known: kitchen-1", "fayd devices add kitchn-1")
    listed = fayd("devices", "list", "--json", env=user_env)
    assert [d["id"] for d in json.loads(listed.stdout)] == ["kitchen-1"]  # no phantom
    one_line(fayd("devices", "remove", "kitchn-1", env=user_env), 1, "known: kitchen-1")
    ota = fayd("devices", "ota", "kitchn-1", "--dir", str(ROOT / "firmware"), env=user_env)
    one_line(ota, 1, "no device 'kitchn-1'", "known: kitchen-1")
    wake = fayd("devices", "set", "kitchen-1", "wake=hey_jarvs", env=user_env)
    one_line(wake, 1, "wake must be on or off")
    assert fayd("devices", "remove", "kitchen-1", env=user_env).returncode == 0
    listed = fayd("devices", "list", "--json", env=user_env)
    assert json.loads(listed.stdout) == []


def test_memory_search_for_an_unknown_user_lists_the_users(user_env: dict[str, str]) -> None:
    note = {"content": "Ann's doctor is on Tuesday", "username": "ann", "importance": 5}
    line = json.dumps(note) + "\n"
    added = fayd("memory", "add", "--jsonl", "-", "--no-llm", env=user_env, stdin=line, timeout=300)
    assert added.returncode == 0, added.stderr
    nobody = fayd("memory", "search", "--user", "nobody", "doctor", env=user_env, timeout=300)
    one_line(nobody, 1, "no memories for user 'nobody'", "users: 'ann'")
    assert nobody.stdout == ""
    tagged = fayd("memory", "search", "--user", "nobody", "--tags-all", "kind:observation",
                  env=user_env, timeout=300)  # fmt: skip
    one_line(tagged, 1, "no memories for user 'nobody'", "users: 'ann'")
    one_line(fayd("memory", "search", env=user_env), 2, "give a query")


def test_not_running_usage_and_config_mistakes(user_env: dict[str, str]) -> None:
    one_line(fayd("status", env=user_env), 3, "fayd is not running", "start it with: fayd run")
    one_line(fayd("say", "hello", env=user_env), 3, "fayd is not running")
    one_line(fayd("--config", "nowhere.toml", "status", env=user_env), 78, "nowhere.toml")
    one_line(fayd("today", "--date", "yesterdy", env=user_env), 2, "--date must be YYYY-MM-DD")
    bad = {**user_env, "FAYD_MQTT_PORT_TYPO": "1"}
    one_line(fayd("status", env=bad), 78, "FAYD_MQTT_PORT_TYPO")


def test_debug_shows_the_traceback(user_env: dict[str, str]) -> None:
    done = fayd("--debug", "memory", "add", "--jsonl", "notes.jsonl", env=user_env)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert done.stderr.splitlines()[-1] == "fayd: no such file: notes.jsonl"


def test_an_unexpected_error_points_to_debug_and_the_log() -> None:
    # The one path no user mistake reaches: what the handler makes of a bug.
    line, code = explain(KeyError("devices"))
    assert code == EXIT_BUG == 70
    assert line.startswith("unexpected KeyError: 'devices'") and "--debug" in line
    assert "journalctl -u fayd" in line and "\n" not in line


# --- a service install (install.sh --system's folders, staged under $FAYD_ROOT) ----------


def stage_install(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """/etc/fayd/fayd.toml and /var/lib/fayd below a prefix, and a user with no state of
    their own (the CLI then finds the service install)."""
    root = tmp_path / "root"
    (root / "etc/fayd").mkdir(parents=True)
    (root / "var/lib/fayd").mkdir(parents=True)
    shutil.copy(ROOT / "fayd/fayd.example.toml", root / "etc/fayd/fayd.toml")
    (tmp_path / "home").mkdir()
    env = clean_env(FAYD_ROOT=str(root), HOME=str(tmp_path / "home"))
    env.pop("XDG_STATE_HOME", None)
    return root, env


def unprivileged() -> tuple[str, ...]:
    """A prefix that takes away root's power to read any file (as a user outside the fayd
    group would be): permission bits count again."""
    if os.geteuid() != 0:
        return ()
    if SETPRIV is None:
        pytest.skip("setpriv (util-linux) is needed to drop root's file access override")
    return (SETPRIV, "--bounding-set", "-dac_override,-dac_read_search")


def test_status_finds_a_stopped_service_install(tmp_path: Path) -> None:
    root, env = stage_install(tmp_path)
    done = fayd("status", env=env)
    line = one_line(done, 3, "fayd is not running", "start it with: sudo systemctl start fayd")
    assert str(root / "var/lib/fayd/runtime.json") in line
    # Your own state folder, once you have one or name one, comes first (developer mode).
    named = {**env, "XDG_STATE_HOME": str(tmp_path / "elsewhere")}
    one_line(fayd("status", env=named), 3, "start it with: fayd run")
    (tmp_path / "home/.local/state/fayd").mkdir(parents=True)
    one_line(fayd("status", env=env), 3, "start it with: fayd run")


def test_a_service_install_you_may_not_read_says_sudo_or_group(tmp_path: Path) -> None:
    root, env = stage_install(tmp_path)
    state = root / "var/lib/fayd"
    # Never contacted: reading the token fails first.
    (state / "runtime.json").write_text(json.dumps({"api": "http://127.0.0.1:9"}))
    (state / "api_token").write_text("x" * 43 + "\n")
    (state / "api_token").chmod(0)
    done = fayd("status", env=env, prefix=unprivileged())
    one_line(done, 4, "api_token is not readable by you", "sudo usermod -aG fayd $USER")
    (root / "etc/fayd/fayd.toml").chmod(0)
    for command in (("status",), ("today",), ("devices", "list")):
        done = fayd(*command, env=env, prefix=unprivileged())
        one_line(done, 4, "fayd.toml is not readable by you", "join the fayd group")


# --- against the real daemon ----------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """A daemon whose language model is a server that is not there (a LAN server down):
    chit-chat gets the stand-in reply. Its state is a staged service install's."""
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    root = tmp_path_factory.mktemp("system")
    state = root / "var/lib/fayd"
    env = {"FAYD_LLM_URL": f"http://127.0.0.1:{free_port()}", "FAYD_LLM_TIMEOUT_S": "2"}
    d = DaemonProcess(state, env).start()
    yield d
    d.stop()


@needs_mosquitto
def test_say_exits_1_when_the_model_failed(broken_llm: DaemonProcess) -> None:
    done = broken_llm.cli("say", "tell me a long story about a cat", timeout=120)
    one_line(done, 1, "the reply failed", "the language model did not answer")
    assert "language model is not answering" in done.stdout  # what was said, still shown
    skill = broken_llm.cli("say", "what day is it today?", timeout=120)
    assert skill.returncode == 0 and skill.stderr == "", skill.stderr  # no model needed


@needs_mosquitto
def test_say_to_a_typod_device_lists_the_devices(broken_llm: DaemonProcess) -> None:
    asyncio.run(_hello(broken_llm, "porch-1"))
    done = broken_llm.cli("say", "--device", "porhc-1", "hello", timeout=60)
    one_line(done, 1, "no device 'porhc-1'", "porch-1")


async def _hello(daemon: DaemonProcess, device: str) -> None:
    async with daemon.sim(device) as sim:
        await sim.hello()


@needs_mosquitto
def test_a_simulated_device_is_offline_when_it_ends(broken_llm: DaemonProcess) -> None:
    out = broken_llm.state.parent / "sim-out"
    done = broken_llm.cli("sim", "device", "--text", "what time is it", "--id", "sim-7",
                          "--out", str(out), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10  # the daemon takes the retained presence in at once
    while True:
        status = json.loads(broken_llm.cli("status", "--json").stdout)
        [row] = [d for d in status["devices"] if d["id"] == "sim-7"]
        if not row["online"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert row["online"] is False
    listed = broken_llm.cli("devices", "list")
    [line] = [x for x in listed.stdout.splitlines() if x.startswith("sim-7 ")]
    assert " offline " in line


@needs_mosquitto
def test_status_of_a_running_service_install(broken_llm: DaemonProcess) -> None:
    # The daemon's state is <root>/var/lib/fayd: with FAYD_ROOT=<root> and no state of
    # one's own, `fayd status` finds it with no option at all.
    root = broken_llm.state.parents[2]
    (root / "etc/fayd").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "fayd/fayd.example.toml", root / "etc/fayd/fayd.toml")
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(FAYD_ROOT=str(root), HOME=str(home))
    env.pop("XDG_STATE_HOME", None)
    done = fayd("status", env=env)
    assert done.returncode == 0, done.stderr
    assert f"state: {broken_llm.state}" in done.stdout


@needs_mosquitto
def test_a_mistyped_wake_word_lists_the_bundled_ones(make_daemon) -> None:
    d = make_daemon({"FAYD_SPEECH_WAKE_WORD": "hey_jarvs"}, wait_ready=False)
    deadline = time.monotonic() + 180
    while not (d.state / "runtime.json").exists() and d.proc.poll() is None:
        assert time.monotonic() < deadline, d.log_text()
        time.sleep(0.2)
    # Refused at start (fayd.config_check), or reported by `fayd status`: either way
    # the names that exist are given.
    said = d.log_text() if d.proc.poll() is not None else d.cli("status").stdout
    assert "hey_jarvs" in said and "hey_jarvis, alexa, hey_mycroft" in said, said


@needs_mosquitto
def test_a_simulated_sensor_sends_an_event_each_run(broken_llm: DaemonProcess) -> None:
    for _ in range(2):  # a second run is a new event, not taken for a replay of the first
        done = broken_llm.cli("sim", "device", "--id", "cuff-9", "--user", "mum", "--event",
                              "bp,sys=171,dia=99,note=after lunch", timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert 'cuff-9: bp {"sys": 171, "dia": 99, "note": "after lunch"}: stored' in done.stdout
    import sqlite3

    with sqlite3.connect(broken_llm.state / "fayd.db") as conn:
        rows = conn.execute(
            "SELECT sensor, data FROM device_events WHERE device = 'cuff-9'"
        ).fetchall()
        user = conn.execute("SELECT user FROM devices WHERE id = 'cuff-9'").fetchone()[0]
    assert [(s, json.loads(d)) for s, d in rows] == [
        ("bp", {"sys": 171, "dia": 99, "note": "after lunch"})
    ] * 2
    assert user == "mum"
