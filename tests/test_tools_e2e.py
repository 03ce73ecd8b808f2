"""The model's look-ups in the real daemon (fayd.agent.tools, docs/tools.md): a question whose
answer is only in the household's documents is answered from them, in their own words, and a
changed document is heard changed without a restart; the household's MCP server
(``mcp-server-time`` from PyPI) is started, shown by ``fayd status`` and offered to the
model, whose steps always parse; what the documents do not hold is never made up."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fayd.agent.tools import READ_ONLY_SKILLS
from fayd.testing.harness import DaemonProcess

from .conftest import needs_mosquitto

pytestmark = [needs_mosquitto, pytest.mark.models]

BOILER = """# Our boiler

The pressure gauge is on the front of the boiler, under the flap. When the heating is off
and the boiler is cold, the needle should be between {low} and {high} bar.

To top up the pressure, open the filling loop under the boiler: turn both small taps slowly
until the needle reads 1.2 bar, then close them.
"""


def kb(daemon: DaemonProcess, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "kb", *args],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def ask(daemon: DaemonProcess, text: str) -> dict:
    said = daemon.api("POST", "/api/say", json={"text": text, "user": "ann"}, timeout=120)
    assert said.status_code == 200, said.text
    return said.json()


def test_a_document_answers_in_its_own_words_and_a_change_is_heard(
    make_daemon, tmp_path: Path
) -> None:
    daemon = make_daemon()
    doc = tmp_path / "boiler.md"
    doc.write_text(BOILER.format(low=1, high=1.5), encoding="utf-8")
    assert "boiler.md: added" in kb(daemon, "add", str(doc))

    heard = ask(daemon, "What should the boiler pressure be?")
    assert "between 1 and 1.5 bar" in heard["reply"], heard
    assert heard["reply"].startswith('Your document "boiler" says:')
    calls = heard["decision"]["tools"]["calls"]
    assert calls[0]["tool"] == "kb_search" and calls[0]["source"] == "kb"  # cited in the turn
    assert "The pressure gauge" not in ask(daemon, "Do you like cats?")["reply"]
    # What the documents do not hold is not made up: no number but theirs.
    reply = ask(daemon, "What is the engineer's phone number for the boiler?")["reply"]
    assert not any(ch.isdigit() for ch in reply.replace("1.2", "").replace("1.5", "")), reply

    doc.write_text(BOILER.format(low=1.2, high=1.8), encoding="utf-8")
    assert "boiler.md: replaced" in kb(daemon, "add", str(doc))
    time.sleep(2.5)  # the daemon reads the list of documents at most every 2 s
    heard = ask(daemon, "What should the boiler pressure be?")
    assert "between 1.2 and 1.8 bar" in heard["reply"], heard
    assert "1.5 bar" not in heard["reply"]


def test_the_households_mcp_server_is_up_and_offered_to_the_model(make_daemon) -> None:
    servers = [
        {
            "name": "time",
            "command": [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"],
            "allow": ["get_current_time"],
        }
    ]
    daemon = make_daemon({"FAYD_TOOLS_MCP_SERVERS": json.dumps(servers)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = daemon.api("GET", "/api/status", timeout=30).json()
        server = status["tools"]["mcp_servers"][0]
        if server["state"] == "up":
            break
        time.sleep(0.5)
    assert server["state"] == "up" and server["tools"] == ["get_current_time"], server
    heard = ask(daemon, "What time is it in Tokyo right now?")
    loop = heard["decision"]["tools"]
    assert loop["invalid_json"] == 0 and loop["ended"] in ("none", "repeats", "steps"), loop
    made = [json.dumps([c["tool"], c["args"]], sort_keys=True) for c in loop["calls"]]
    assert len(made) == len(set(made))  # never the same call twice
    assert all(c["tool"] in ("time__get_current_time", *READ_ONLY_SKILLS) for c in loop["calls"])
    assert heard["reply"]  # an answer, whatever the small model made of it
