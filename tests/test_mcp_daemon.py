"""MCP in the running daemon: streamable HTTP at /mcp on the API's port, with the official
MCP client (the SDK's streamable HTTP transport) and the token. Fay's memory tools, the
skills registry and the care tools; a reminder set over MCP is the control API's too; every
attack on the door is refused with nothing written. And memory written by another process
(``fayd memory add``) is recalled by the running daemon at once, a deleted one no more."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2  # the MCP SDK's own HTTP client
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from fayd.agent.features import all_skills
from fayd.auth import read_token
from fayd.mcp import TOOL_NAMES
from fayd.mcp.care_tools import CARE_TOOLS
from fayd.testing.harness import DaemonProcess
from tests.conftest import needs_mosquitto

pytestmark = [pytest.mark.models, needs_mosquitto]

INSPECTOR = Path(__file__).parent / ".npm" / "node_modules" / ".bin" / "mcp-inspector"
PLUMBER = "the plumber comes on Tuesday morning"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("fayd-mcp")).start()
    yield d
    assert d.stop() == 0, d.log_text()


def url(daemon: DaemonProcess) -> str:
    return daemon.runtime["api"] + "/mcp"


def text(result: Any) -> Any:
    assert len(result.content) == 1
    return json.loads(result.content[0].text)


async def session(daemon: DaemonProcess, calls: list[tuple[str, dict]]) -> tuple[list, list]:
    """The tools listed, and each call's result (its JSON, and whether it is an error)."""
    token = read_token(daemon.state)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with Client(streamable_http_client(url(daemon), http_client=http)) as client:
        tools = (await client.list_tools()).tools
        done = []
        for name, args in calls:
            result = await client.call_tool(name, args)
            done.append((text(result), bool(result.is_error)))
    return tools, done


def count(daemon: DaemonProcess, table: str) -> int:
    with sqlite3.connect(daemon.state / "fayd.db", timeout=10) as db:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_every_tool_is_listed_with_the_registry_schemas(daemon: DaemonProcess) -> None:
    tools, _ = asyncio.run(session(daemon, []))
    by_name = {t.name: t for t in tools}
    skills = all_skills()
    assert set(by_name) == {*TOOL_NAMES, *skills.names, *(c[0] for c in CARE_TOOLS), "speak"}
    for skill in skills.by_name.values():  # the registry's own arguments, as it has them
        listed = by_name[skill.name].input_schema["properties"]
        for key, schema in (skill.schema.get("properties") or {}).items():
            assert listed[key] == schema, (skill.name, key)
        assert "username" in listed
    # Fay's tools as `fayd mcp` lists them (the same code).
    assert set(by_name["memory_remember"].input_schema["properties"]) == {
        "content",
        "kind",
        "source",
        "persistent",
        "extra_tags",
        "username",
    }


def test_remember_then_search_over_mcp(daemon: DaemonProcess) -> None:
    _, done = asyncio.run(
        session(
            daemon,
            [
                ("memory_remember", {"content": "Rose's cat is Biscuit", "username": "rose"}),
                ("memory_search", {"query": "what is the cat's name?", "username": "rose"}),
                ("memory_search", {"query": "what is the cat's name?", "username": "bob"}),
            ],
        )
    )
    (kept, bad), (found, _), (others, _) = done
    assert not bad and kept["ok"] and "source:mcp" in kept["tags"]
    assert found[0]["node_id"] == kept["node_id"]
    assert kept["node_id"] not in [n["node_id"] for n in others]  # rose's own, not bob's


def test_a_reminder_set_over_mcp_is_listed_by_the_control_api(daemon: DaemonProcess) -> None:
    said = "remind me to water the tomatoes tomorrow at 9am"
    _, done = asyncio.run(
        session(
            daemon,
            [
                ("set_reminder", {"said": said, "username": "rose"}),
                ("list_reminders", {"username": "rose"}),
                ("set_reminder", {"what": "water the tomatoes", "username": "rose"}),
            ],
        )
    )
    (kept, bad), (listed, _), (no_time, _) = done
    assert not bad and kept["ok"] and "tomorrow" in kept["said"], kept
    assert "water the tomatoes" in listed["said"]
    assert no_time["said"] == "When should I remind you?"  # the skill's own question
    rows = daemon.api("GET", "/api/reminders").json()["reminders"]
    mine = [r for r in rows if r["id"] == kept["detail"]["reminder"]]
    assert mine and mine[0]["username"] == "rose" and "tomatoes" in mine[0]["text"]
    assert mine[0]["source"] == said


def test_care_tools_and_bad_arguments(daemon: DaemonProcess) -> None:
    _, done = asyncio.run(
        session(
            daemon,
            [
                ("care_alerts_list", {}),
                ("care_rules_list", {}),
                ("care_alerts_ack", {"id": "care-404", "by": "anna"}),
                ("clock_time", {"username": "bad\u0007name"}),
                ("days_until", {"holiday": "someday"}),
                ("speak", {"device": "nowhere", "text": "Hello"}),
                ("set_reminder", {"said": "remind me at 3 to call Tom", "device": "../etc"}),
            ],
        )
    )
    (alerts, e1), (rules, e2), (ack, e3), (bad_user, e4), (bad_enum, e5), (speak, e6) = done[:6]
    assert alerts == {"alerts": []} and rules == {"rules": []} and not (e1 or e2)
    assert e3 and "care-404" in ack["error"]
    assert e4 and "username" in bad_user["error"]
    assert e5 and "holiday" in bad_enum["error"]
    assert e6 and "nowhere" in speak["error"]
    assert done[6][1] and "bad device id" in done[6][0]["error"]


def attacks(token: str, api: str) -> list[tuple[str, dict[str, str]]]:
    port = api.rsplit(":", 1)[1]
    auth = {"Authorization": f"Bearer {token}"}
    return [
        ("no token", {}),
        ("a wrong token", {"Authorization": "Bearer " + "A" * 43}),
        ("a foreign Host (DNS rebinding)", {**auth, "Host": f"evil.example:{port}"}),
        ("a cross-site Origin", {**auth, "Origin": "http://evil.example"}),
        ("a cross-site fetch", {**auth, "Sec-Fetch-Site": "cross-site"}),
    ]


def test_attacks_on_the_door_are_refused_and_write_nothing(daemon: DaemonProcess) -> None:
    token = read_token(daemon.state)
    api = daemon.runtime["api"]
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_remember", "arguments": {"content": "Evil was here"}},
    }
    before = count(daemon, "memory_nodes"), count(daemon, "reminders")
    accept = {"Accept": "application/json, text/event-stream"}
    for what, headers in attacks(token, api):
        for body in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
            call,
        ):
            sent = httpx.post(api + "/mcp", json=body, headers={**accept, **headers})
            assert sent.status_code in (401, 403), (what, sent.status_code, sent.text)
        got = httpx.get(api + "/mcp", headers={**accept, **headers})
        assert got.status_code in (401, 403), (what, got.status_code)
    assert (count(daemon, "memory_nodes"), count(daemon, "reminders")) == before
    assert "Evil was here" not in json.dumps(daemon.api("GET", "/api/reminders").json())


def say(daemon: DaemonProcess, user: str, text: str) -> str:
    done = daemon.cli("say", "--user", user, text, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_memory_added_by_another_process_is_recalled_without_a_restart(
    daemon: DaemonProcess,
) -> None:
    question = "when does the plumber come?"
    assert "Tuesday" not in say(daemon, "tom", question)  # tom's index is loaded now
    line = json.dumps({"content": f"tom said: {PLUMBER}"})
    added = subprocess.run(
        [
            sys.executable,
            "-m",
            "fayd",
            "memory",
            "add",
            "--jsonl",
            "-",
            "--user",
            "tom",
            "--no-llm",
        ],
        input=line,
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert added.returncode == 0, added.stderr
    node = json.loads(added.stdout.splitlines()[0])["node_id"]
    assert "Tuesday morning" in say(daemon, "tom", question)
    # Deleted by another process (fayd has no forget command yet: SQL, as one would):
    with sqlite3.connect(daemon.state / "fayd.db", timeout=10) as db:
        db.execute("DELETE FROM memory_nodes WHERE id = ?", [node])
    assert "Tuesday" not in say(daemon, "tom", question)


@pytest.mark.skipif(
    not INSPECTOR.exists(), reason="MCP Inspector not installed in tests/.npm (./install.sh)"
)
def test_the_mcp_inspector_lists_and_calls_over_http(daemon: DaemonProcess) -> None:
    token = read_token(daemon.state)
    argv = [str(INSPECTOR), "--cli", url(daemon), "--transport", "http"]
    argv += ["--header", f"Authorization: Bearer {token}"]
    listed = subprocess.run(
        [*argv, "--method", "tools/list"], capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    assert "set_timer" in {t["name"] for t in json.loads(listed.stdout)["tools"]}
    called = subprocess.run(
        [*argv, "--method", "tools/call", "--tool-name", "clock_date"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(json.loads(called.stdout)["content"][0]["text"])["said"].startswith("Today")
    refused = subprocess.run(
        [str(INSPECTOR), "--cli", url(daemon), "--transport", "http", "--method", "tools/list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0


async def test_speak_says_a_text_on_a_device(daemon: DaemonProcess) -> None:
    async with daemon.sim("kitchen-9") as sim:
        await sim.hello()
        for _ in range(200):  # until the daemon has the hello (bounded)
            devices = daemon.api("GET", "/api/status").json()["devices"]
            if any(d["id"] == "kitchen-9" for d in devices):
                break
            await asyncio.sleep(0.1)
        _, [(done, bad)] = await session(
            daemon,
            [("speak", {"device": "kitchen-9", "text": "Dinner is ready.", "username": "rose"})],
        )
        assert not bad and done["queued"], done
        reply = await sim.collect_reply(within_s=120)
    assert "Dinner is ready." in reply.text
