"""The edges of issue 28: each bad input a home can produce is refused with a clear error
(exit 78 for a setting, exit 1 and one line for bad data, HTTP 400 for a request) or
handled, never "a bug in fayd" (exit 70, HTTP 500). Real parts: ``fayd`` as a subprocess,
the real daemon (fayd.testing.harness), a real mosquitto, real SQLite files."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from fayd.auth import read_token
from fayd.config import load_config
from fayd.errors import ConfigError
from fayd.protocol import SensorEvent, TextIn, encode
from fayd.reminders.say import fired, greeting
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import ANY_DEVICE, Broker, needs_mosquitto

#: A JSON array nested far deeper than Python's decoder can go (it raises RecursionError).
DEEP = "[" * 50_000 + "]" * 50_000


def fayd(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fayd", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=env["HOME"],
    )


def one_line(done: subprocess.CompletedProcess, code: int, *words: str) -> str:
    """Failed with ``code``, one line on stderr holding ``words``, no traceback."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """``fayd`` on a state folder of its own, without any setting of the caller's."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("FAYD_")}
    base.pop("STATE_DIRECTORY", None)
    return {**base, "HOME": str(tmp_path), "FAYD_PATHS_STATE_DIR": str(tmp_path / "state")}


# --- 1. a qa.csv row nested too deeply is refused alone, named; the start goes on ---------


@needs_mosquitto
def test_a_qa_csv_row_nested_too_deeply_is_refused_naming_file_and_row(
    make_daemon, tmp_path: Path
) -> None:
    """A household's qa.csv is taken row by row: the wrong one is named in the log, the
    others are answered (before the shipped rows)."""
    qa = tmp_path / "qa.csv"
    with qa.open("w", newline="", encoding="utf-8") as f:
        rows = csv.writer(f)
        rows.writerow(["question", "answer", "skill"])
        rows.writerow(["hello there", "Hello, nice to hear you.", ""])
        rows.writerow(["what time", "", f"skill:clock_time {DEEP}"])
    daemon = make_daemon({"FAYD_AGENT_QA_CSV": str(qa)})
    said = daemon.api("POST", "/api/say", json={"text": "hello there"}, timeout=60)
    assert said.json()["reply"] == "Hello, nice to hear you.", said.text
    assert f"{qa}:3: the skill's arguments are nested too deeply" in daemon.log_text()
    assert "Traceback" not in daemon.log_text()


# --- 2. the control API: 400 with a clear JSON error, never 500 ---------------------------


def post(daemon: DaemonProcess, path: str, body: bytes) -> httpx.Response:
    token = read_token(daemon.state)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return httpx.post(daemon.runtime["api"] + path, headers=headers, content=body, timeout=60)


@needs_mosquitto
@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"text": ' + DEEP[:30_000].encode() + DEEP[-30_000:].encode() + b"}", "nested"),
        (b'{"text": "hi", "n": 1e999}', "1e999 is out of range"),
        (b'{"text": "hi", "n": NaN}', "NaN is not JSON"),
        (b'{"text": "hi", "n": -Infinity}', "-Infinity is not JSON"),
    ],
)
def test_say_refuses_what_python_decodes_but_json_is_not(
    daemon: DaemonProcess, body: bytes, said: str
) -> None:
    answer = post(daemon, "/api/say", body)
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["error"]


RULE = {"name": "edge-rule", "user": "User", "kind": "event", "spec": {"event": "panic"}}


@needs_mosquitto
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"ladder": 5}, "ladder: must be a list of caregivers"),
        ({"ladder": [1]}, "ladder[0]: must be a caregiver or [caregiver, seconds"),
        ({"ladder": [["ann"]]}, "ladder[0]:"),
        ({"ladder": [[["ann"], 60]]}, "ladder[0]:"),
        ({"ladder": [None]}, "ladder[0]:"),
        ({"user": ["ann"]}, "user: must be a household member's name"),
    ],
)
def test_a_care_rule_of_the_wrong_shape_is_a_400(
    daemon: DaemonProcess, change: dict[str, Any], said: str
) -> None:
    answer = post(daemon, "/api/care/rules.add", json.dumps({**RULE, **change}).encode())
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["error"]


# --- 3, 4. memory: bad data is one line (exit 1); export survives stored names -------------


def test_memory_add_with_a_lone_surrogate_or_a_control_character_in_a_name(
    env: dict[str, str], tmp_path: Path
) -> None:
    lines = tmp_path / "nodes.jsonl"
    lines.write_text('{"content": "tea \\udfff at four", "importance": 3}\n')
    one_line(fayd(env, "memory", "add", "--jsonl", str(lines)), 1, "nodes.jsonl:1",
             "lone surrogate")  # fmt: skip
    lines.write_text('{"content": "tea", "importance": 3, "user": "ann\\u0000x"}\n')
    one_line(fayd(env, "memory", "add", "--jsonl", str(lines)), 1, "nodes.jsonl:1",
             "username", "without control characters")  # fmt: skip
    lines.write_text('{"content": ' + DEEP + "}\n")
    one_line(fayd(env, "memory", "add", "--jsonl", str(lines)), 1, "nested too deeply")


def fay_folder(root: Path, **change: Any) -> Path:
    node = {"node_id": 0, "node_type": "observation", "content": "tea at four",
            "importance": 3, "created": 1, "last_retrieved": 0, "pointer_id": None}  # fmt: skip
    (root / "memory_stream").mkdir(parents=True)
    text = json.dumps([{**node, **change}]).replace('"INF"', "Infinity")
    (root / "memory_stream" / "nodes.json").write_text(text)
    return root


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"created": 2**70}, "created must be an integer (64-bit)"),
        ({"node_id": -(2**64)}, "node_id must be an integer (64-bit)"),
        ({"pointer_id": [2**70]}, "pointer_id must be null or a list of node ids"),
        ({"importance": "INF"}, "importance must be a finite number"),
    ],
)
def test_import_fay_refuses_numbers_sqlite_cannot_store(
    env: dict[str, str], tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    folder = fay_folder(tmp_path / "fay", **change)
    one_line(fayd(env, "memory", "import-fay", str(folder)), 1, "node #0", said)


def test_export_fay_writes_a_user_name_that_cannot_name_a_folder(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Names stored before they were checked at the edge (written here into the database
    directly): a NUL, a slash, a dot-dot. Each user's stream is still written, in a folder
    of its escaped name, and comes back in with that name."""
    lines = tmp_path / "ok.jsonl"
    lines.write_text('{"content": "tea at four", "importance": 3, "user": "ann"}\n')
    assert fayd(env, "memory", "add", "--jsonl", str(lines)).returncode == 0
    db = sqlite3.connect(Path(env["FAYD_PATHS_STATE_DIR"]) / "fayd.db")
    row = db.execute("SELECT * FROM memory_nodes WHERE username = 'ann'").fetchone()
    columns = [c[1] for c in db.execute("PRAGMA table_info(memory_nodes)")]
    for stored in ("a\x00b", "x/y", ".."):
        values = dict(zip(columns, row, strict=True)) | {"id": None, "username": stored}
        marks = ", ".join("?" * len(values))
        db.execute(f"INSERT INTO memory_nodes ({', '.join(values)}) VALUES ({marks})",
                   list(values.values()))  # fmt: skip
    db.commit()
    db.close()
    done = fayd(env, "memory", "export-fay", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    folders = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert folders == ["%2E%2E", "a%00b", "ann", "x%2Fy"]
    for name in folders:
        assert (tmp_path / "out" / name / "memory_stream" / "nodes.json").is_file()
    again = {**env, "FAYD_PATHS_STATE_DIR": str(tmp_path / "state2")}
    done = fayd(again, "memory", "import-fay", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["users"] == {n: 1 for n in folders}


# --- 5. a control character in a reminder: stripped at creation, and when said ------------


def test_a_reminders_control_characters_are_stripped_when_added(env: dict[str, str]) -> None:
    done = fayd(env, "reminders", "add", "take your \x07pills\x1b[0m", "--at",
                "2099-01-01 09:00", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "take your pills [0m"


@needs_mosquitto
def test_a_reminder_with_a_nul_through_the_api(daemon: DaemonProcess) -> None:
    body = {"user": "User", "text": "call\x00 your son", "at": "2099-01-01T09:00"}
    answer = post(daemon, "/api/reminders", json.dumps(body).encode())
    assert answer.status_code == 200, answer.text
    assert answer.json()["text"] == "call your son"
    body["user"] = "ann\x00"
    answer = post(daemon, "/api/reminders", json.dumps(body).encode())
    assert answer.status_code == 400
    assert "user must be 1-64 characters without control characters" in answer.json()["error"]


def test_stored_text_is_said_without_its_control_characters(piper_tts) -> None:
    """A reminder stored before creation stripped them: the real voice says it (a NUL
    made Piper's phonemizer raise, and the device was told the voice was broken)."""
    words = fired("take \x00your pills\x1b", "medication", "", "en")
    assert words == "It's time to take your pills. Did you take them?"
    assert sum(len(chunk) for chunk in piper_tts.synthesize(words)) > 0
    morning = datetime(2026, 1, 5, 8, 0)
    said = greeting("ann\x00", morning, [(morning, "tea\x00 with jo")], "en")
    assert said == "Good morning, Ann! It's Monday 5 January. Today: at 08:00, tea with jo."


# --- 6. a text frame left retained on another broker is not answered at every start -------


@needs_mosquitto
def test_a_retained_text_frame_is_not_answered_at_start(make_daemon, broker: Broker) -> None:
    asyncio.run(_leave_retained_text(broker.url))
    answered, log = asyncio.run(_start_then_ask(make_daemon, broker.url))
    assert answered == ["what time is it"]
    assert "ignored the retained text frame of device old-1" in log


async def _leave_retained_text(url: str) -> None:
    async with SimDevice(url, "old-1") as device:
        await device.hello(roles=("screen",))
        await device.publish("text", encode(TextIn("what is the date today")), retain=True)


async def _start_then_ask(make_daemon, url: str) -> tuple[list[str], str]:
    """The device listens while fayd starts (and reads the broker's retained messages);
    then asks live. The questions fayd answered, from its own records, and its log."""
    async with SimDevice(url, "old-1") as device:
        await device.hello(roles=("screen",))
        daemon = await asyncio.to_thread(make_daemon, {"FAYD_MQTT_URL": url, **ANY_DEVICE})
        await device.say_text("what time is it")
        await device.collect_reply(120)
    done = await asyncio.to_thread(daemon.cli, "today", "--json")
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["items"]
    turns = [i["question"] for i in items if i["type"] == "turn" and i["device"] == "old-1"]
    return turns, daemon.log_text()


# --- 7, 8. the broker's URL: a space refused; a password never shown --------------------


@pytest.mark.parametrize("url", ["mqtt://a b:1883", "mqtt://a\tb", "mqtt://user:pw@a b:1883"])
def test_a_broker_url_with_a_space_in_its_host_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="a space or a control character") as caught:
        load_config(environ={"FAYD_MQTT_URL": url})
    assert "pw" not in str(caught.value)


def test_a_broker_host_that_is_no_name_is_refused() -> None:
    with pytest.raises(ConfigError, match="its host 'a%20b' is not a host name or address"):
        load_config(environ={"FAYD_MQTT_URL": "mqtt://a%20b:1883"})


@pytest.mark.parametrize("url", ["mqtt://my_broker:1883", "mqtt://[::1]:1883", "mqtt://10.0.0.2"])
def test_broker_urls_that_are_fine_stay_fine(url: str) -> None:
    assert load_config(environ={"FAYD_MQTT_URL": url}).mqtt.url == url


@needs_mosquitto
def test_a_password_in_the_broker_url_is_not_shown(make_daemon, broker: Broker) -> None:
    """Status (text and JSON) and the log show ``user:***@``; wrong or right, fayd logs in
    with mqtt.username/password (the URL's are not used)."""
    url = broker.url.replace("mqtt://", "mqtt://ann:s3cret-pw@")
    daemon = make_daemon({"FAYD_MQTT_URL": url, **ANY_DEVICE})
    broker.stop()  # a connection error quotes the URL too
    try:
        deadline = time.monotonic() + 60
        while "NOT connected" not in (status := daemon.cli("status")).stdout:
            assert time.monotonic() < deadline, status.stdout
            time.sleep(0.5)
        shown = url.replace("s3cret-pw", "***")
        assert f"broker: {shown}" in status.stdout
        for text in (status.stdout, daemon.cli("status", "--json").stdout, daemon.log_text()):
            assert "s3cret-pw" not in text
    finally:
        broker.start()


# --- 9. fayd today: escaped for the terminal, valid JSON, quiet into a closed pipe --------


@pytest.fixture(scope="module")
def odd_day(daemon: DaemonProcess) -> DaemonProcess:
    """A cuff's reading with an infinite number and a terminal escape in it, and enough
    events that the output is longer than a pipe holds."""
    asyncio.run(_odd_events(daemon))
    return daemon


async def _odd_events(daemon: DaemonProcess) -> None:
    async with daemon.sim("edge-cuff") as cuff:
        await cuff.hello(roles=("sensor",))
        odd = b'{"v":1,"seq":1,"sensor":"bp","data":{"sys":1e999,"note":"\\u001b[2J\\u0000"}}'
        await cuff.publish("event", odd)
        for seq in range(2, 602):  # each line ~250 bytes: 150 KB, more than a pipe holds
            event = SensorEvent(seq=seq, sensor="motion", data={"room": "hall " + "x" * 200})
            await cuff.publish("event", encode(event))
        acked = 0
        async with asyncio.timeout(120):
            while acked < 601:
                kind, _, _ = await cuff.received.get()
                acked += kind == "ack"


@needs_mosquitto
def test_today_escapes_control_characters_and_writes_valid_json(odd_day: DaemonProcess) -> None:
    text = odd_day.cli("today")
    assert text.returncode == 0, text.stderr
    line = next(li for li in text.stdout.splitlines() if "edge-cuff: bp" in li)
    assert line.endswith(r"sys=inf note=\x1b[2J\x00")
    assert not any(c in text.stdout for c in "\x1b\x00")
    done = odd_day.cli("today", "--json")
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    reading = next(
        i for i in items["items"] if (i.get("device"), i.get("sensor")) == ("edge-cuff", "bp")
    )
    assert reading["data"] == {"sys": None, "note": "\x1b[2J\x00"}


@needs_mosquitto
@pytest.mark.parametrize("args", [("today",), ("today", "--json"), ("--help",)])
def test_output_into_a_closed_pipe_ends_quietly(odd_day: DaemonProcess, args: tuple) -> None:
    """``fayd today | head -1``: the code a shell gives a command SIGPIPE stopped, nothing
    on stderr (``--help`` is short: it ends 0)."""
    fayd_cmd = subprocess.Popen(
        [sys.executable, "-m", "fayd", *args],
        env=odd_day.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert fayd_cmd.stdout is not None and fayd_cmd.stderr is not None
    assert fayd_cmd.stdout.readline()  # head -1
    fayd_cmd.stdout.close()
    stderr = fayd_cmd.stderr.read().decode()
    code = fayd_cmd.wait(120)
    assert stderr == ""
    assert code in (0, 141) and (code == 141) == (args != ("--help",))
