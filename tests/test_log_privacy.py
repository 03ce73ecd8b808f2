"""Logs without words or secrets (docs/security.md, "Logs"): the real daemon, its broker, a
simulated device, a caregiver reached through Apprise and the CLI. What people said (typed,
spoken, remembered, a reminder, a timer, a call for help, a chat with the model) and every
secret (the API token, a device's key and MQTT password, a caregiver URL's password) are
looked for in the daemon's whole log; with ``[log] words`` and DEBUG the words are there,
the secrets still not."""

from __future__ import annotations

import asyncio
import logging
import re
import sys
from typing import Any

import pytest

from fayd.config import load_config
from fayd.errors import ConfigError
from fayd.logwords import PrivacyFilter, hide_secrets, words
from fayd.testing.care import Posts, wait_for
from fayd.testing.harness import DaemonProcess

from .conftest import needs_mosquitto

#: Words said in the turns below, each found nowhere else.
MARKERS = ("zebramarker", "quokkamarker", "walrusmarker", "capybara", "narwhalmarker")
PIN = re.compile(r"(?<!\d)4711(?!\d)")
CAREGIVER_SECRET = "hunter2-caregiver-secret"
#: A turn's INFO line: number, device, user, source, intent, lengths, timings.
TURN_LINE = re.compile(
    r"INFO +fayd\.agent\.conversation: turn \d+ on (\S+) for (\S+) \((\w+)\): "
    r"(\S+) via \S+ [\d.]+; (\d+) chars → (\d+) chars in \d+ sentences?; \d+ ms"
)


def care(daemon: DaemonProcess, *args: str) -> None:
    done = daemon.cli("care", *args, timeout=60)
    assert done.returncode == 0, done.stderr


def say(daemon: DaemonProcess, text: str, user: str = "mum") -> str:
    done = daemon.cli("say", "--user", user, text, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def secrets_of(daemon: DaemonProcess, device: dict[str, Any]) -> dict[str, str]:
    return {
        "the API token": (daemon.state / "api_token").read_text().strip(),
        "the device key": device["key"],
        "the device's MQTT password": device["mqtt_password"],
        "the caregiver URL's password": CAREGIVER_SECRET,
    }


def no_secrets(log: str, secrets: dict[str, str]) -> None:
    assert all(len(s) >= 16 for s in secrets.values()), "a secret too short to look for"
    found = [what for what, secret in secrets.items() if secret in log]
    assert not found, f"in the log: {found}"


async def device_turns(daemon: DaemonProcess, speak: Any) -> None:
    """Typed and spoken turns on a device of mum's, and a timer's alarm said to her."""
    async with daemon.sim("kitchen-1") as kitchen:
        await kitchen.hello(roles=("mic", "speaker"), user="mum")
        await kitchen.say_text("Set a timer for 5 seconds for the capybara eggs")
        set_reply = await kitchen.collect_reply()
        assert "timer" in set_reply.text.lower(), set_reply.text
        alarm = await kitchen.collect_reply(within_s=120)  # fayd speaks first: the alarm
        assert alarm.text
        await kitchen.speak(speak("What time is it, please?"))
        heard = await kitchen.collect_reply()
        assert heard.text


@needs_mosquitto
def test_the_log_names_turns_by_number_intent_and_length_never_their_words_or_secrets(
    make_daemon: Any, posts: Posts, speak: Any
) -> None:
    daemon: DaemonProcess = make_daemon()
    url = f"json://anna:{CAREGIVER_SECRET}@127.0.0.1:{posts.port}/anna"
    care(daemon, "caregivers", "add", "anna", url)
    asyncio.run(device_turns(daemon, speak))
    device = daemon.add_device("kitchen-1")  # the same key again
    care(daemon, "rules", "add", "help", "--user", "mum", "--kind", "event", "--sensor",
         "emergency", "--ladder", "anna")  # fmt: skip
    say(daemon, "Remember that my bank PIN is 4711 zebramarker")
    say(daemon, "Remind me to feed the quokkamarker tomorrow at 9")
    said = say(daemon, "Help! I've fallen over and I can't get up, walrusmarker")
    assert "letting your family know" in said
    wait_for(lambda: len(posts.to("anna")) == 1, 30)  # Apprise used the URL with its secret
    assert "walrusmarker" in posts.to("anna")[0]["message"]  # the caregiver is told the words
    say(daemon, "Tell me one nice thing about the narwhalmarker")
    secrets = secrets_of(daemon, device)
    pid = daemon.proc.pid if daemon.proc else 0
    assert daemon.stop() == 0
    log = daemon.log_text()

    assert not [m for m in MARKERS if m in log.lower()], log
    if pid != 4711:  # the one number the log could hold by chance
        assert not PIN.search(log), log
    no_secrets(log, secrets)
    assert "PIN" not in log and "fallen" not in log.lower()
    # What operators need is there: each turn by its number, intent, lengths and timings.
    turns = [m.groups() for m in TURN_LINE.finditer(log)]
    sources = {(device, user, source) for device, user, source, *_ in turns}
    assert {("kitchen-1", "mum", "text"), ("kitchen-1", "mum", "voice")} <= sources, turns
    assert ("cli", "mum", "text") in sources, turns
    intents = [intent for *_, intent, _, _ in turns]
    assert {"timer.set", "emergency", "chitchat"} <= set(intents), intents
    asked = [int(q) for *_, q, _ in turns]
    assert len("Remember that my bank PIN is 4711 zebramarker") in asked
    assert re.search(r"device kitchen-1 heard \d+ chars in \d+ ms", log)
    assert re.search(r"timer \S+ said to mum on kitchen-1: \d+ chars", log)
    assert re.search(r"care alert \S+ \(help, emergency\) for mum: <\d+ chars>", log)


@needs_mosquitto
@pytest.mark.parametrize("shown", [False, True], ids=["words-off", "words-on"])
def test_at_debug_the_words_are_logged_only_when_asked_for_and_secrets_never(
    make_daemon: Any, posts: Posts, shown: bool
) -> None:
    env = {"FAYD_LOG_WORDS": str(shown).lower(), "FAYD_LOG_LEVEL": "DEBUG"}
    daemon: DaemonProcess = make_daemon(env)
    device = daemon.add_device("hall-1")
    url = f"json://anna:{CAREGIVER_SECRET}@127.0.0.1:{posts.port}/anna"
    care(daemon, "caregivers", "add", "anna", url)
    say(daemon, "Remember that my bank PIN is 4711 zebramarker", user="ann")  # ann is known
    care(daemon, "rules", "add", "help", "--user", "ann", "--kind", "event", "--sensor",
         "emergency", "--ladder", "anna")  # fmt: skip
    say(daemon, "Help! I've fallen over and I can't get up, walrusmarker", user="ann")
    wait_for(lambda: len(posts.to("anna")) == 1, 30)  # Apprise's DEBUG lines: its payload
    secrets = secrets_of(daemon, device)
    assert daemon.stop() == 0
    log = daemon.log_text()

    assert TURN_LINE.search(log), log  # the INFO line is the same either way
    no_secrets(log, secrets)
    with_words = [line for line in log.splitlines() if re.search("zebra|walrus", line)]
    if not shown:  # DEBUG alone (Piper's, Apprise's lines too) shows no words
        assert not with_words, with_words
        return
    assert re.search(r"turn \d+: heard 'Remember that my bank PIN is 4711 zebramarker'", log)
    assert any("walrusmarker" in line for line in with_words), with_words
    # Only DEBUG lines carry them: the INFO and WARNING lines are as with words off.
    assert all(" DEBUG " in line for line in with_words), with_words


# --- the filter and the settings, without a daemon ------------------------------------------


def _record(level: int, msg: str, *args: object, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise OSError("cannot reach mqtt://fayd:s3cr3t-pw@10.0.0.2:1883")
        except OSError:
            info = sys.exc_info()
    return logging.LogRecord("fayd.x", level, __file__, 1, msg, args, info)


def _shown(record: logging.LogRecord, show_words: bool) -> str | None:
    if not PrivacyFilter(show_words).filter(record):
        return None
    return logging.Formatter("%(levelname)s %(message)s").format(record)


@pytest.mark.parametrize("level", [logging.INFO, logging.WARNING, logging.ERROR])
def test_words_are_a_placeholder_above_debug_even_when_shown(level: int) -> None:
    for show in (False, True):
        line = _shown(_record(level, "heard %s", words("my PIN is 4711")), show)
        assert line is not None and line.endswith("heard <14 chars>")


def test_words_at_debug_only_when_shown() -> None:
    assert _shown(_record(logging.DEBUG, "heard %s", words("hello")), False) == (
        "DEBUG heard <5 chars>"
    )
    assert _shown(_record(logging.DEBUG, "heard %s", words("hello")), True) == "DEBUG heard 'hello'"
    # Apprise's DEBUG lines hold a notification's payload: gone unless words are shown.
    payload = logging.LogRecord(
        "apprise", logging.DEBUG, __file__, 1, "JSON Payload: %s", ("x",), None
    )
    assert not PrivacyFilter(False).filter(payload)
    assert PrivacyFilter(True).filter(payload)


def test_secrets_are_masked_at_every_level_tracebacks_included() -> None:
    assert hide_secrets("json://anna:pw@127.0.0.1:9/x") == "json://anna:***@127.0.0.1:9/x"
    assert hide_secrets("ntfy://host/topic?token=abc&x=1") == "ntfy://host/topic?token=***&x=1"
    assert hide_secrets("Authorization: Bearer abc.def") == "Authorization: Bearer ***"
    assert hide_secrets("json://127.0.0.1:9/x at 12:30") == "json://127.0.0.1:9/x at 12:30"
    for show in (False, True):
        line = _shown(_record(logging.DEBUG, "failed: %s", "mqtt://u:pw1@h", exc=True), show)
        assert line is not None and "pw1" not in line and "s3cr3t-pw" not in line
        assert "mqtt://u:***@h" in line and "mqtt://fayd:***@10.0.0.2:1883" in line


def test_a_wrong_setting_is_named_without_its_secret() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(environ={"FAYD_MQTT_PASSWORD": "hunter2\x00x"})
    assert "hunter2" not in str(info.value) and "NUL" in str(info.value)
    with pytest.raises(ConfigError) as info:
        load_config(environ={"FAYD_LLM_URL": "ftp://me:hunter2@host"})
    assert "hunter2" not in str(info.value) and "ftp://me:***@host" in str(info.value)


def test_the_words_setting_is_off_by_default() -> None:
    assert load_config(environ={}).log.words is False
    assert load_config(environ={"FAYD_LOG_WORDS": "on"}).log.words is True
