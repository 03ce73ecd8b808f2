"""Every HTTP door of the real daemon, attacked as a web page in the household's browser or a
LAN neighbour would: no token, a wrong one, a cross-site ``text/plain`` POST, a foreign
``Origin`` or ``Host`` (DNS rebinding), ``Sec-Fetch-Site: cross-site``. Each is refused and
nothing changes; the CLI, with the token, gets in."""

from __future__ import annotations

import json
import sqlite3
import stat

import httpx
import pytest

from fayd.auth import TOKEN_FILE, read_token
from fayd.testing.harness import DaemonProcess

ROUTES = [
    ("GET", "/api/status", None),
    ("POST", "/api/say", {"text": "Say hello to the whole house"}),
    ("POST", "/api/devices/kitchen-1/ota", {"version": "6.6.6", "files": [], "signature": "x"}),
    ("POST", "/api/devices/reload", {}),
    ("POST", "/api/care/alerts.ack", {"id": "care-1", "by": "evil"}),
    ("POST", "/api/care/caregivers.add", {"name": "evil", "urls": ["json://evil.example/x"]}),
]


def attacks(token: str, api: str) -> list[tuple[str, dict[str, str], int]]:
    """(what, headers, the status it must get)."""
    auth = {"Authorization": f"Bearer {token}"}
    host = api.removeprefix("http://")
    return [
        ("no token", {}, 401),
        ("a wrong token", {"Authorization": "Bearer " + "A" * 43}, 401),
        ("the token in another scheme", {"Authorization": f"Basic {token}"}, 401),
        (
            "a foreign Host (DNS rebinding)",
            {**auth, "Host": f"evil.example:{host.split(':')[1]}"},
            403,
        ),
        ("a foreign Host, same port, no token", {"Host": "rebind.evil.example"}, 403),
        ("a foreign Origin", {**auth, "Origin": "http://evil.example"}, 403),
        ("Origin null (a sandboxed page)", {**auth, "Origin": "null"}, 403),
        ("a cross-site fetch", {**auth, "Sec-Fetch-Site": "cross-site"}, 403),
    ]


def messages(daemon: DaemonProcess) -> int:
    conn = sqlite3.connect(daemon.state / "fayd.db", timeout=10)
    try:
        return conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_every_route_refuses_requests_a_web_page_can_make(
    daemon: DaemonProcess, method: str, path: str, body: dict | None
) -> None:
    api = daemon.runtime["api"]
    token = read_token(daemon.state)
    before = messages(daemon)
    for what, headers, status in attacks(token, api):
        sent = httpx.request(method, api + path, json=body, headers=headers, timeout=30)
        assert sent.status_code == status, (what, sent.status_code, sent.text)
        assert "error" in sent.json()
    if method == "POST":
        # The browser's own "simple" request: a text/plain body needs no CORS preflight.
        # With the token too (were it stolen), it is not JSON, so it is refused.
        for headers in ({}, {"Authorization": f"Bearer {token}"}):
            sent = httpx.post(
                api + path,
                content=json.dumps(body).encode(),
                headers={**headers, "Content-Type": "text/plain", "Origin": "http://evil.example"},
                timeout=30,
            )
            assert sent.status_code == 403, sent.text
            sent = httpx.post(
                api + path,
                content=json.dumps(body).encode(),
                headers={**headers, "Content-Type": "text/plain"},
                timeout=30,
            )
            assert sent.status_code == (415 if headers else 401), sent.text
    assert messages(daemon) == before  # no turn ran


def test_the_cli_gets_in_with_the_token(daemon: DaemonProcess) -> None:
    done = daemon.cli("status", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ready"]
    token = read_token(daemon.state)
    for host in ("127.0.0.1", "localhost"):
        url = daemon.runtime["api"].replace("127.0.0.1", host)
        ok = httpx.get(url + "/api/status", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200


def test_the_token_and_the_state_folder_are_private(daemon: DaemonProcess) -> None:
    token_mode = stat.S_IMODE((daemon.state / TOKEN_FILE).stat().st_mode)
    assert token_mode == 0o600
    assert stat.S_IMODE(daemon.state.stat().st_mode) & 0o077 == 0
    assert len(read_token(daemon.state)) >= 32
