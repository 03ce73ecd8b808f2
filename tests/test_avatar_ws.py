"""Fay's avatar WebSocket on the real daemon (fayd.doors.avatar), with a real WebSocket
client from PyPI acting as a Fay Live2D/UE frontend: it registers, types, gets each reply
as Fay's ``human`` frames, fetches the speech over HTTP; and is attacked at the handshake."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import wave
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from fayd.auth import read_token
from fayd.testing.harness import DaemonProcess

INVITED = "http://avatar.example:8080"
#: OVR LipSync's visemes (FAY-FORMATS.md).
VISEMES = {"sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou"}
#: Questions a skill answers (no model wait): the clock's.
ASK_EN = "What time is it?"
ASK_ZH = "现在几点？"
WAIT_S = 180  # one reply on a busy 2-core machine; not a speed check


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    if shutil.which("mosquitto") is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    env = {"FAYD_API_ORIGINS": INVITED}
    d = DaemonProcess(tmp_path_factory.mktemp("fayd-avatar"), env).start()
    yield d
    assert d.stop() == 0, d.log_text()


def ws_url(daemon: DaemonProcess, token: str | None = None) -> str:
    url = daemon.runtime["api"].replace("http://", "ws://") + "/ws"
    return url + (f"?token={token}" if token is not None else "")


def token_of(daemon: DaemonProcess) -> str:
    return read_token(daemon.state)


async def frontend(daemon: DaemonProcess, user: str = "Alice", output: bool = True) -> Any:
    ws = await websockets.connect(ws_url(daemon, token_of(daemon)), open_timeout=30)
    await ws.send(json.dumps({"Username": user, "Output": output}))
    return ws


async def reply(ws: Any, text: str, output: bool = True) -> list[dict]:
    """The frames of one reply to ``text``: up to the audio end frame (Output true) or the
    text end frame (Output false: no audio frames at all)."""
    await ws.send(json.dumps({"Text": text}))
    frames: list[dict] = []
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
        frames.append(frame)
        data = frame["Data"]
        if data.get("IsEnd") == 1 and data["Key"] == ("audio" if output else "text"):
            return frames


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_reply_arrives_as_fay_frames_with_its_speech_over_http(daemon: DaemonProcess) -> None:
    async def go() -> list[dict]:
        async with await frontend(daemon) as ws:
            return await reply(ws, ASK_EN)

    frames = run(go())
    assert all(f["Topic"] == "human" and f["Username"] == "Alice" for f in frames)
    keys = [f["Data"]["Key"] for f in frames]
    assert frames[0]["Data"] == {"Key": "log", "Value": "Thinking..."}
    assert keys[-2:] == ["text", "audio"]  # the text's end, then the reply's end
    assert frames[-1]["Data"]["IsEnd"] == 1 and frames[-1]["Data"]["HttpValue"] == ""
    texts = [f["Data"] for f in frames if f["Data"]["Key"] == "text"]
    audios = [f["Data"] for f in frames[:-1] if f["Data"]["Key"] == "audio"]
    assert texts[0]["IsFirst"] == 1 and texts[-1]["IsEnd"] == 1
    assert audios and audios[0]["IsFirst"] == 1
    assert [a["Text"] for a in audios] == [t["Value"] for t in texts[:-1]]
    for audio in audios:
        assert audio["IsEnd"] == 0 and "Sentiment" in audio
        assert audio["Value"] == audio["HttpValue"]
        # Fetched as a page's <audio> does: no token.
        got = httpx.get(audio["HttpValue"], timeout=30)
        assert got.status_code == 200 and got.headers["content-type"] == "audio/wav"
        with wave.open(io.BytesIO(got.content)) as wav:
            seconds = wav.getnframes() / wav.getframerate()
            assert wav.getnchannels() == 1 and wav.getsampwidth() == 2
        assert audio["Time"] == pytest.approx(seconds, abs=0.001) and seconds > 0.3
        lips = audio["Lips"]
        assert lips and {lip["Lip"] for lip in lips} <= VISEMES
        assert {lip["Lip"] for lip in lips} - {"sil"}  # the mouth moves
        times = [lip["Time"] for lip in lips]
        assert times == sorted(times) and times[-1] <= seconds * 1000


def test_a_chinese_question_thinks_in_chinese(daemon: DaemonProcess) -> None:
    async def go() -> list[dict]:
        async with await frontend(daemon, "小明") as ws:
            return await reply(ws, ASK_ZH)

    frames = run(go())
    assert frames[0]["Data"] == {"Key": "log", "Value": "思考中..."}
    assert frames[0]["Username"] == "小明"
    assert any(f["Data"]["Key"] == "audio" and f["Data"]["Text"] for f in frames)


def test_output_false_gets_text_only(daemon: DaemonProcess) -> None:
    async def go() -> list[dict]:
        async with await frontend(daemon, "Bob", output=False) as ws:
            first = await reply(ws, ASK_EN, output=False)
            # A second reply: anything of the first one's audio would arrive before its end.
            return first + await reply(ws, "Hello, who are you?", output=False)

    frames = run(go())
    assert [f["Data"]["Key"] for f in frames].count("text") >= 4
    assert not [f for f in frames if f["Data"]["Key"] == "audio"]


def test_a_frontend_leaving_mid_reply_harms_nothing(daemon: DaemonProcess) -> None:
    async def go() -> list[dict]:
        stays = await frontend(daemon, "Carol")
        leaves = await frontend(daemon, "Carol")
        await leaves.send(json.dumps({"Text": "Tell me a short fact about the moon."}))
        await asyncio.wait_for(leaves.recv(), WAIT_S)  # thinking: the reply has begun
        await leaves.close()
        frames = []
        while not (
            frames and frames[-1]["Data"].get("IsEnd") and frames[-1]["Data"]["Key"] == "audio"
        ):
            frames.append(json.loads(await asyncio.wait_for(stays.recv(), WAIT_S)))
        # The same user's next turn still runs, for the one still there.
        frames += await reply(stays, ASK_EN)
        await stays.close()
        return frames

    frames = run(go())
    assert sum(1 for f in frames if f["Data"]["Key"] == "log") == 2
    assert daemon.api("GET", "/api/status", timeout=30).status_code == 200


def test_bad_messages_get_an_error_frame_and_the_socket_goes_on(daemon: DaemonProcess) -> None:
    async def go() -> tuple[list[dict], list[dict]]:
        async with await frontend(daemon, "Dora") as ws:
            errors = []
            for bad in ("{not json", "[1, 2]", json.dumps({"Hello": 1}), b"\x00\x01"):
                await ws.send(bad)
                errors.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            await ws.send(json.dumps({"Username": "Eve", "Text": "hi"}))  # not this socket's
            errors.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            await ws.send(json.dumps({"Text": "   "}))
            errors.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            return errors, await reply(ws, ASK_EN)

    errors, frames = run(go())
    assert [e["Topic"] for e in errors] == ["error"] * 6
    messages = [e["Data"]["Message"] for e in errors]
    assert "not JSON" in messages[0] and "JSON object" in messages[1]
    assert "nothing to do" in messages[2] and "binary" in messages[3]
    assert "'Dora'" in messages[4] and "empty" in messages[5]
    assert frames[-1]["Data"]["IsEnd"] == 1  # the socket still works


def test_a_message_over_the_limit_closes_the_socket(daemon: DaemonProcess) -> None:
    async def go() -> ConnectionClosed:
        async with await frontend(daemon, "Hal") as ws:
            await ws.send(json.dumps({"Text": "x" * 70_000}))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 30)
            return closed.value

    closed = run(go())
    assert closed.rcvd is not None and closed.rcvd.code == 1009  # message too big
    assert daemon.api("GET", "/api/status", timeout=30).status_code == 200


@pytest.mark.parametrize(
    ("first", "why"),
    [
        ("{oops", "not JSON"),
        (json.dumps({"Output": True}), "register first"),
        (json.dumps({"Username": "a\nb"}), "Username"),
        (json.dumps({"Username": ""}), "Username"),
        (json.dumps({"Username": "Al", "Output": "yes"}), "Output"),
        (b"\x00", "JSON text"),
    ],
)
def test_a_bad_registration_is_closed_with_its_reason(
    daemon: DaemonProcess, first: str, why: str
) -> None:
    async def go() -> ConnectionClosed:
        async with websockets.connect(ws_url(daemon, token_of(daemon))) as ws:
            await ws.send(first)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 30)
            return closed.value

    closed = run(go())
    assert closed.rcvd is not None and closed.rcvd.code == 1008
    assert why in closed.rcvd.reason


def connected(daemon: DaemonProcess) -> int:
    return daemon.log_text().count("avatar frontend for")


def test_the_handshake_is_refused_without_the_lock(daemon: DaemonProcess) -> None:
    token = token_of(daemon)
    port = int(daemon.runtime["api"].rsplit(":", 1)[1])
    attempts = [
        ("no token", ws_url(daemon), {}),
        ("a wrong token", ws_url(daemon, "A" * 43), {}),
        (
            "the token in another scheme",
            ws_url(daemon),
            {"additional_headers": {"Authorization": f"Basic {token}"}},
        ),
        # DNS rebinding: the page reaches the box under the attacker's name
        (
            "a foreign Host",
            f"ws://evil.example:{port}/ws?token={token}",
            {"host": "127.0.0.1", "port": port},
        ),
        ("a cross-site page", ws_url(daemon, token), {"origin": "http://evil.example"}),
        ("a sandboxed page", ws_url(daemon, token), {"origin": "null"}),
    ]
    before = connected(daemon)

    async def go() -> None:
        for what, url, options in attempts:
            with pytest.raises(InvalidStatus) as refused:
                async with websockets.connect(url, open_timeout=30, **options):
                    pass
            assert refused.value.response.status_code == 403, what

    run(go())
    assert connected(daemon) == before  # none got in


def test_an_invited_page_and_a_native_client_get_in(daemon: DaemonProcess) -> None:
    token = token_of(daemon)

    async def go() -> list[list[dict]]:
        replies = []
        options = [
            (ws_url(daemon, token), {"origin": INVITED}),  # the Live2D page on the LAN
            (ws_url(daemon), {"additional_headers": {"Authorization": f"Bearer {token}"}}),  # UE
        ]
        for url, extra in options:
            async with websockets.connect(url, open_timeout=30, **extra) as ws:
                await ws.send(json.dumps({"Username": "Fay", "Output": False}))
                replies.append(await reply(ws, ASK_EN, output=False))
        return replies

    for frames in run(go()):
        assert frames[-1]["Data"] == {"Key": "text", "Value": "", "IsFirst": 0, "IsEnd": 1}


def test_the_audio_urls_are_capabilities(daemon: DaemonProcess) -> None:
    api = daemon.runtime["api"]
    wrong = api + "/avatar/audio/" + "0" * 32 + ".wav"
    assert httpx.get(wrong, timeout=30).status_code == 404
    assert httpx.get(api + "/avatar/audio/../api/status", timeout=30).status_code in (401, 404)
    assert httpx.get(api + "/avatar/audio/nothex.wav", timeout=30).status_code == 404

    async def go() -> str:
        async with await frontend(daemon, "Gus") as ws:
            frames = await reply(ws, ASK_EN)
        return next(f["Data"]["HttpValue"] for f in frames if f["Data"].get("HttpValue"))

    url = run(go())
    path = url.removeprefix(api)
    assert httpx.get(url, timeout=30).status_code == 200
    port = api.rsplit(":", 1)[1]
    foreign = httpx.get(url, headers={"Host": f"evil.example:{port}"}, timeout=30)
    assert foreign.status_code == 403  # the lock still wants the box's own name
    assert httpx.post(api + path, json={}, timeout=30).status_code == 401  # GET only
