"""The household page's doors on the real daemon, attacked over HTTP (httpx): no session, a
wrong password, a cross-site POST, a POST with the session but without its CSRF token, a
session after logout and after a new password, wrong guesses one after another. Each is
refused and nothing changes; the password set with ``fayd web password`` gets in."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest

from fayd.auth.http_guard import SESSION_COOKIE
from fayd.testing.harness import DaemonProcess
from fayd.web.password import PASSWORD_FILE
from tests.conftest import needs_mosquitto

pytestmark = needs_mosquitto
PASSWORD = "correct horse battery"
DEVICE = "lamp-1"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("web-security")).start()
    d.add_device(DEVICE)
    yield d
    assert d.stop() == 0, d.log_text()


def set_password(daemon: DaemonProcess, password: str) -> subprocess.CompletedProcess[str]:
    """``fayd web password`` with the password on stdin (not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "fayd", "web", "password"],
        env=daemon.env,
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def browser(daemon: DaemonProcess) -> httpx.Client:
    return httpx.Client(base_url=daemon.runtime["api"], timeout=30)


def login(daemon: DaemonProcess, password: str = PASSWORD) -> tuple[httpx.Client, str]:
    """A logged-in client and its session's CSRF token."""
    client = browser(daemon)
    done = client.post("/login", json={"password": password})
    assert done.status_code == 200, done.text
    return client, client.get("/api/web/session").json()["csrf"]


def volume(daemon: DaemonProcess) -> int | None:
    return daemon.setting(DEVICE, "volume")


def test_without_a_password_nobody_logs_in_and_the_page_says_how_to_set_one(
    daemon: DaemonProcess,
) -> None:
    with browser(daemon) as client:
        page = client.get("/login")
        assert page.status_code == 200 and 'data-password="no"' in page.text
        assert "fayd web password" in page.text
        refused = client.post("/login", json={"password": "anything at all"})
        assert refused.status_code == 409 and "fayd web password" in refused.json()["error"]
        assert SESSION_COOKIE not in refused.cookies


def test_the_cli_sets_a_private_hash_and_refuses_a_short_password(daemon: DaemonProcess) -> None:
    short = set_password(daemon, "short")
    assert short.returncode != 0 and "at least 8" in short.stderr
    assert not (daemon.state / PASSWORD_FILE).exists()
    done = set_password(daemon, PASSWORD)
    assert done.returncode == 0, done.stderr
    path = daemon.state / PASSWORD_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.startswith("scrypt$") and PASSWORD not in text


def test_without_a_session_the_api_answers_401_and_the_page_sends_to_login(
    daemon: DaemonProcess,
) -> None:
    with browser(daemon) as client:
        for path in ("/api/status", "/api/web/people", "/api/web/events", "/api/web/session"):
            assert client.get(path).status_code == 401, path
        page = client.get("/")
        assert page.status_code == 303 and page.headers["location"] == "/login"
        login_page = client.get("/login")
        assert login_page.status_code == 200 and 'data-password="yes"' in login_page.text
        assert "frame-ancestors 'none'" in login_page.headers["content-security-policy"]
        assert client.get("/static/app.js").status_code == 200  # the assets are public
        # A forged cookie is no session.
        client.cookies.set(SESSION_COOKIE, "A" * 43)
        assert client.get("/api/status").status_code == 401
        assert client.get("/").status_code == 303


def test_a_wrong_password_is_refused_and_the_right_one_sets_a_strict_httponly_cookie(
    daemon: DaemonProcess,
) -> None:
    with browser(daemon) as client:
        wrong = client.post("/login", json={"password": PASSWORD + "!"})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        assert client.post("/login", content=b"password", headers={}).status_code == 415
        right = client.post("/login", json={"password": PASSWORD})
        assert right.status_code == 200
        cookie = right.headers["set-cookie"]
        flags = {part.strip().lower() for part in cookie.split(";")}
        assert cookie.startswith(f"{SESSION_COOKIE}=")
        assert {"httponly", "samesite=strict", "path=/"} <= flags
        assert client.get("/").status_code == 200
        assert client.get("/api/status").status_code == 200
        assert len(client.get("/api/web/session").json()["csrf"]) >= 32


def test_a_cross_site_post_is_refused_with_nothing_changed(daemon: DaemonProcess) -> None:
    client, csrf = login(daemon)
    url = f"/api/web/devices/{DEVICE}/settings"
    body = {"settings": {"volume": 11}}
    with closing(client):
        for headers in (
            {"Origin": "http://evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Origin": "null"},
        ):
            sent = client.post(url, json=body, headers={"X-CSRF-Token": csrf, **headers})
            assert sent.status_code == 403, (headers, sent.text)
        # A cross-site form posts text/plain: no preflight, so it is refused as such.
        form = client.post(url, content=b"{}", headers={"X-CSRF-Token": csrf})
        assert form.status_code == 415
        evil_login = client.post(
            "/login", json={"password": PASSWORD}, headers={"Origin": "http://evil.example"}
        )
        assert evil_login.status_code == 403
    assert volume(daemon) is None


def test_a_post_with_the_session_but_without_its_csrf_token_is_refused(
    daemon: DaemonProcess,
) -> None:
    client, csrf = login(daemon)
    url = f"/api/web/devices/{DEVICE}/settings"
    with closing(client):
        missing = client.post(url, json={"settings": {"volume": 22}})
        assert missing.status_code == 403 and "CSRF" in missing.json()["error"]
        wrong = client.post(url, json={"settings": {"volume": 22}}, headers={"X-CSRF-Token": "x"})
        assert wrong.status_code == 403
        other, other_csrf = login(daemon)  # another session's token is not this one's
        with closing(other):
            crossed = client.post(
                url, json={"settings": {"volume": 22}}, headers={"X-CSRF-Token": other_csrf}
            )
            assert crossed.status_code == 403
        ack = client.post("/api/care/alerts.ack", json={"id": "a-1", "by": "evil"})
        assert ack.status_code == 403
        delete = client.delete("/api/reminders/1")  # DELETE needs it too
        assert delete.status_code == 403
        assert volume(daemon) is None
        bad = client.post(url, json={"settings": {"volume": 200}}, headers={"X-CSRF-Token": csrf})
        assert bad.status_code == 400 and "0-100" in bad.json()["error"]
        done = client.post(url, json={"settings": {"volume": 40}}, headers={"X-CSRF-Token": csrf})
        assert done.status_code == 200, done.text
        assert done.json()["settings"]["volume"] == 40  # a device never seen: stored only
    assert volume(daemon) == 40


def test_logout_ends_the_session(daemon: DaemonProcess) -> None:
    client, csrf = login(daemon)
    with closing(client):
        sid = client.cookies[SESSION_COOKIE]
        assert client.post("/logout", json={}).status_code == 403  # without its token
        assert client.get("/api/status").status_code == 200
        out = client.post("/logout", json={}, headers={"X-CSRF-Token": csrf})
        assert out.status_code == 200
        assert SESSION_COOKIE not in client.cookies  # the browser forgets it
        client.cookies.set(SESSION_COOKIE, sid)  # kept by someone who copied it
        assert client.get("/api/status").status_code == 401
        assert client.get("/").status_code == 303


def test_a_new_password_ends_every_session_and_the_old_one_stops_working(
    daemon: DaemonProcess,
) -> None:
    client, _ = login(daemon)
    with closing(client):
        assert client.get("/api/status").status_code == 200
        assert set_password(daemon, PASSWORD + " two").returncode == 0
        assert client.get("/api/status").status_code == 401
    with browser(daemon) as fresh:
        assert fresh.post("/login", json={"password": PASSWORD}).status_code == 401
    again, _ = login(daemon, PASSWORD + " two")
    again.close()


def test_wrong_guesses_one_after_another_are_slowed_down(daemon: DaemonProcess) -> None:
    """Last in this module: the client waits after it (its address is 127.0.0.1)."""
    with browser(daemon) as client:
        answers = [client.post("/login", json={"password": f"guess {i}"}) for i in range(5)]
        codes = [a.status_code for a in answers]
        assert codes[:4] == [401, 401, 401, 401] and codes[4] == 429, codes
        assert int(answers[4].headers["retry-after"]) >= 1
        # Even the right password waits its turn: the wait is not a hint.
        right = client.post("/login", json={"password": PASSWORD + " two"})
        assert right.status_code == 429 and SESSION_COOKIE not in right.cookies
