"""fayd.auth without a daemon: the token file, the guard's decisions, and device keys
computed the same by fayd and by the firmware on MicroPython's unix port."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from fayd.auth import (
    HttpGuard,
    TokenUnreadable,
    allowed_hosts,
    ensure_token,
    mqtt_password,
    ota_signature,
    read_token,
    verify_ota_signature,
)
from fayd.auth.device_keys import ota_message
from fayd.testing.firmware import FIRMWARE, micropython


def test_the_token_is_made_once_private_and_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    token = ensure_token(tmp_path / "state")
    assert len(token) >= 32 and ensure_token(tmp_path / "state") == token
    path = tmp_path / "state" / "api_token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("short\n")  # cut short (a crash while it was written): made again
    assert ensure_token(tmp_path / "state") not in ("short", token)


def test_under_systemd_the_group_may_read_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))
    ensure_token(tmp_path)
    assert stat.S_IMODE((tmp_path / "api_token").stat().st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file: run as a user to check")
def test_an_unreadable_token_says_what_to_do(tmp_path: Path) -> None:
    ensure_token(tmp_path)
    (tmp_path / "api_token").chmod(0)
    with pytest.raises(TokenUnreadable, match="join its group"):
        read_token(tmp_path)


def test_a_missing_token_says_the_daemon_makes_it(tmp_path: Path) -> None:
    with pytest.raises(TokenUnreadable, match="creates it when it starts"):
        read_token(tmp_path)


def scope(method: str = "GET", **headers: str) -> dict:
    raw = [(k.lower().replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    return {"type": "http", "method": method, "headers": raw}


GUARD = HttpGuard(None, "t" * 32, allowed_hosts("127.0.0.1", 8731))
OK = {"host": "127.0.0.1:8731", "authorization": "Bearer " + "t" * 32}


@pytest.mark.parametrize(
    ("request_scope", "status"),
    [
        (scope(**OK), None),
        (scope(**{**OK, "host": "localhost:8731"}), None),
        (scope(**{**OK, "host": "[::1]:8731"}), None),
        (scope("POST", **OK, content_type="application/json; charset=utf-8"), None),
        (scope(**{**OK, "origin": "http://127.0.0.1:8731"}), None),  # a page fayd serves
        (scope(**{**OK, "host": "127.0.0.1:8732"}), 403),  # another port: another server
        (scope(**{**OK, "host": "evil.example:8731"}), 403),
        (scope(**{**OK, "host": ""}), 403),
        (scope(**{**OK, "origin": "http://127.0.0.1:8731.evil.example"}), 403),
        (scope(**{**OK, "sec_fetch_site": "same-site"}), 403),
        (scope(**{**OK, "authorization": "Bearer " + "t" * 31}), 401),
        (scope(**{**OK, "authorization": "bearer " + "t" * 32}), 401),
        (scope("POST", **OK), 415),  # no Content-Type
        (scope("POST", **OK, content_type="application/x-www-form-urlencoded"), 415),
        (scope("POST", **OK, content_type="multipart/form-data; boundary=x"), 415),
    ],
)
def test_the_guard_decides(request_scope: dict, status: int | None) -> None:
    refusal = GUARD.refusal(request_scope)
    assert (refusal[0] if refusal else None) == status, refusal


class OneSession:
    def csrf_of(self, session: str) -> str | None:
        return "c" * 32 if session == "s" * 32 else None


LOCKED = HttpGuard(
    None,
    "t" * 32,
    allowed_hosts("127.0.0.1", 8731),
    sessions=OneSession(),
    public=("/login", "/static/"),
    origins=("http://192.168.1.30:8080",),
    shared=("/avatar/audio/",),
)
HOST = {"host": "127.0.0.1:8731"}
SESSION = {**HOST, "cookie": "other=1; fayd_session=" + "s" * 32}
JSON = {"content_type": "application/json"}


def at(path: str, method: str = "GET", kind: str = "http", query: str = "", **headers: str):
    return {**scope(method, **headers), "path": path, "type": kind, "query_string": query.encode()}


@pytest.mark.parametrize(
    ("request_scope", "status"),
    [
        (at("/api/status", **SESSION), None),  # a live session reads
        (at("/api/care/alerts.ack", "POST", **SESSION, **JSON, x_csrf_token="c" * 32), None),
        (at("/api/care/alerts.ack", "POST", **SESSION, **JSON), 403),  # no CSRF token
        (at("/api/care/alerts.ack", "POST", **SESSION, **JSON, x_csrf_token="c" * 31), 403),
        (at("/api/status", **{**HOST, "cookie": "fayd_session=" + "x" * 32}), 401),  # expired
        (at("/api/status", **{**HOST, "cookie": "fayd_session="}), 401),
        (at("/login", **HOST), None),  # public: the login page
        (at("/login", "POST", **HOST, **JSON), None),
        (at("/login", "POST", **HOST, content_type="application/x-www-form-urlencoded"), 415),
        (at("/login", **HOST, origin="http://evil.example"), 403),  # public, still same-origin
        (at("/static/app.js", **HOST), None),
        (at("/staticx", **HOST), 401),  # a prefix only where it ends in "/"
        (at("/loginx", **HOST), 401),
        (at("/ws", kind="websocket", query="token=" + "t" * 32, **HOST), None),
        (at("/ws", kind="websocket", query="token=" + "t" * 31, **HOST), 401),
        (at("/api/status", query="token=" + "t" * 32, **HOST), 401),  # query only for sockets
        # an invited avatar frontend, cross-site by the browser's account, with the token
        (
            at(
                "/ws",
                kind="websocket",
                query="token=" + "t" * 32,
                origin="http://192.168.1.30:8080",
                sec_fetch_site="cross-site",
                **HOST,
            ),
            None,
        ),
        (at("/ws", kind="websocket", origin="http://192.168.1.30:8080", **HOST), 401),
        (
            at(
                "/ws",
                kind="websocket",
                query="token=" + "t" * 32,
                origin="http://x.example",
                **HOST,
            ),
            403,
        ),
    ],
)
def test_sessions_public_paths_and_invited_pages(request_scope: dict, status: int | None) -> None:
    refusal = LOCKED.refusal(request_scope)
    assert (refusal[0] if refusal else None) == status, refusal


AUDIO = "/avatar/audio/" + "a" * 32 + ".wav"


@pytest.mark.parametrize(
    ("request_scope", "status"),
    [
        (at(AUDIO, **HOST), None),  # a capability URL: its path is the secret
        (at(AUDIO, "HEAD", **HOST), None),
        # an avatar page's <audio>, from wherever the page is served
        (at(AUDIO, **HOST, sec_fetch_site="cross-site"), None),
        (at(AUDIO, **HOST, origin="http://192.168.1.31:8080", sec_fetch_site="cross-site"), None),
        (at(AUDIO, host="evil.example:8731"), 403),  # DNS rebinding: still the box's name
        (at(AUDIO, host=""), 403),
        (at(AUDIO, "POST", **HOST, **JSON), 401),  # GET only
        (at(AUDIO, "DELETE", **HOST), 401),
        (at(AUDIO, kind="websocket", **HOST), 401),
        (at("/avatar/audiox", **HOST), 401),  # the prefix only
        (at("/avatar/", **HOST), 401),
    ],
)
def test_shared_capability_urls_need_the_host_alone(
    request_scope: dict, status: int | None
) -> None:
    refusal = LOCKED.refusal(request_scope)
    assert (refusal[0] if refusal else None) == status, refusal


def test_a_wildcard_bind_answers_to_loopback_names_and_given_ones() -> None:
    hosts = allowed_hosts("0.0.0.0", 80, ["fayd-box.local"])
    assert hosts == {"127.0.0.1:80", "localhost:80", "[::1]:80", "fayd-box.local:80"}
    assert "192.168.1.5:80" in allowed_hosts("192.168.1.5", 80)


FIRMWARE_KEYS = r"""
import sys
sys.path.insert(0, "%(fw)s")
from fayd_fw import auth
key = "%(key)s"
print(auth.mqtt_password(key))
print(auth.hmac_sha256(b"k" * 100, b"a long key is hashed first"))
files = [("fayd_fw/b.py", 30, "%(sha)s"), ("version.py", 21, "%(sha)s")]
sig = auth.hmac_sha256(key.encode(), auth.ota_message("dev-1", "0.2.0", files))
print(sig)
signed = [auth.ota_signed(key, d, "0.2.0", files, sig) for d in ("dev-1", "dev-2")]
print(*signed)
"""


@pytest.mark.skipif(micropython() is None, reason="MicroPython unix port missing")
def test_the_firmware_derives_the_same_values(tmp_path: Path) -> None:
    import hashlib
    import hmac

    key, sha = "c0ffee" * 10 + "abcd", "ab" * 32
    script = tmp_path / "keys.py"
    script.write_text(FIRMWARE_KEYS % {"fw": FIRMWARE, "key": key, "sha": sha})
    run = subprocess.run(
        [str(micropython()), str(script)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    files = [("version.py", 21, sha), ("fayd_fw/b.py", 30, sha)]  # any order: sorted inside
    assert lines[0] == mqtt_password(key)
    assert (
        lines[1] == hmac.new(b"k" * 100, b"a long key is hashed first", hashlib.sha256).hexdigest()
    )
    assert lines[2] == ota_signature(key, "dev-1", "0.2.0", files)
    assert lines[3] == "True False"  # bound to the device it was made for
    assert verify_ota_signature(key, "dev-1", "0.2.0", files, lines[2])
    assert not verify_ota_signature(key, "dev-1", "0.2.1", files, lines[2])
    assert not verify_ota_signature(key, "dev-1", "0.2.0", [*files, ("x.py", 1, sha)], lines[2])
    assert (
        ota_message("d", "1", [("b", 2, "x"), ("a", 1, "y")]) == b"fayd-ota-v1\nd\n1\na 1 y\nb 2 x"
    )
