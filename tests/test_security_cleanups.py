"""What fayd leaves behind and lets in: the embedded broker's folder in /tmp (password
hashes, saved alerts) goes when fayd stops; the state folder is open to no more than the
docs, the systemd unit and install.sh say; device ids made of dots or path characters are
refused by the CLI and by the hub, on a real broker and the real daemon."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import aiomqtt
import pytest

from fayd.auth.tokens import SERVICE_STATE_MODE, STATE_MODE
from fayd.protocol import Topics
from fayd.service.daemon import private_state_dir
from fayd.testing.harness import DaemonProcess
from fayd.transport.broker_files import broker_account

from .conftest import ANY_DEVICE, Broker, needs_mosquitto

ROOT = Path(__file__).parent.parent
TOPICS = Topics("fayd/v1")
BAD_IDS = (".", "..", "...", "a/b", "../etc", "a\\b")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@needs_mosquitto
@pytest.mark.skipif(
    os.geteuid() != 0 or broker_account().is_mine,
    reason="only fayd run as root keeps mosquitto's files in /tmp (and needs a 'fayd' or"
    " 'mosquitto' system user)",
)
def test_the_broker_folder_and_the_state_folder(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o775)  # as an older fayd or a careless mkdir left it
    daemon = DaemonProcess(state).start()
    try:
        assert mode(state) == STATE_MODE  # closed at start, group included
        left = json.loads((state / "broker.pid").read_text())
        folder = Path(left["conf"]).parent
        # Root's state folder is out of mosquitto's reach: its files live in /tmp.
        assert folder.parent == Path("/tmp") and (folder / "passwd").is_file()
        assert daemon.cli("devices", "add", "door-1").returncode == 0
    finally:
        assert daemon.stop() == 0, daemon.log_text()
    assert not folder.exists(), sorted(p.name for p in folder.iterdir())
    assert "could not" not in daemon.log_text()
    # Its retained messages are kept in the state folder, root's alone, for the next start.
    kept = state / "mosquitto" / "mosquitto.db"
    assert mode(kept) == 0o600 and kept.stat().st_uid == 0


@pytest.mark.parametrize(
    ("service", "given", "closed"),
    [(False, 0o777, STATE_MODE), (False, 0o750, STATE_MODE), (True, 0o777, SERVICE_STATE_MODE)],
)
def test_the_state_folder_is_closed_to_its_documented_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: bool, given: int, closed: int
) -> None:
    if service:  # what systemd's StateDirectory= sets
        monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    else:
        monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, given)
    private_state_dir(state)
    assert mode(state) == closed
    fresh = tmp_path / "fresh"
    private_state_dir(fresh)
    assert mode(fresh) & ~closed == 0


def test_the_code_the_unit_install_sh_and_the_docs_agree_on_the_state_folder() -> None:
    unit = (ROOT / "systemd" / "fayd.service").read_text()
    assert f"StateDirectoryMode=0{SERVICE_STATE_MODE:o}" in unit
    install = (ROOT / "install.sh").read_text()
    assert f'install -d -m 0{SERVICE_STATE_MODE:o} "${{as_state[@]}}" "$state"' in install
    doc = (ROOT / "docs" / "security.md").read_text()
    assert f"0{STATE_MODE:o}" in doc and f"0{SERVICE_STATE_MODE:o}" in doc


@pytest.mark.parametrize("device", BAD_IDS)
def test_the_cli_refuses_ids_of_dots_and_paths(tmp_path: Path, device: str) -> None:
    env = {**os.environ, "FAYD_PATHS_STATE_DIR": str(tmp_path / "state")}
    env.pop("STATE_DIRECTORY", None)
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "devices", "add", device, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout
    assert "bad device id" in done.stderr and not done.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "fayd", "devices", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert device not in listed.stdout


@needs_mosquitto
async def test_the_hub_refuses_frames_under_ids_of_dots(make_daemon, tmp_path: Path) -> None:
    # Another broker (mqtt.url), open to anyone: only the hub stands between such a topic
    # and fayd (on fayd's own broker no account of that name can log in).
    broker = Broker(tmp_path)
    broker.start()
    try:
        # Devices nobody added: this box answers them (a box that shares its broker does not).
        daemon = make_daemon({"FAYD_MQTT_URL": broker.url, **ANY_DEVICE})
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="mallory") as mallory:
            await mallory.subscribe("fayd/v1/dev/+/down/error", qos=1)
            for device in (".", ".."):
                await mallory.publish(TOPICS.up(device, "hello"), hello(device), qos=1)
                await mallory.publish(TOPICS.up(device, "heartbeat"), b"{}", qos=1)
            # A good topic whose hello names a device of dots.
            await mallory.publish(TOPICS.up("door-9", "hello"), hello(".."), qos=1)
            errors = await next_errors(mallory, 5)
        assert sorted(errors) == sorted(
            [(".", "topic"), (".", "topic"), ("..", "topic"), ("..", "topic"), ("door-9", "device")]
        ), errors
        listed = json.loads(daemon.cli("status", "--json").stdout)
        assert {d["id"] for d in listed["devices"]} & {".", ".."} == set()
        log = daemon.log_text()
        assert "bad device id '..'" in log and "bad device id '.'" in log
    finally:
        broker.stop()


def hello(device: str) -> bytes:
    return json.dumps({"v": 1, "device": device, "roles": ["sensor"]}).encode()


async def next_errors(client: aiomqtt.Client, count: int) -> list[tuple[str, str]]:
    """(device of the topic, field) of the next ``count`` error frames, each bad-id."""
    got: list[tuple[str, str]] = []
    async with asyncio.timeout(60):
        async for message in client.messages:
            parsed = TOPICS.parse(message.topic.value)
            assert parsed is not None
            frame = json.loads(bytes(message.payload))  # type: ignore[arg-type]
            assert frame["code"] == "bad-id", frame
            got.append((parsed[0], frame["field"]))
            if len(got) == count:
                return got
    return got
