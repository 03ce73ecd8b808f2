"""Shared fixtures: a real mosquitto on a free loopback port, and fayd itself as a
subprocess on embedded defaults in a temporary state folder. Every wait is bounded."""

from __future__ import annotations

import asyncio
import getpass
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fayd.models import resolve
from fayd.speech.audio import pcm16_to_float, resample
from fayd.testing import harness
from fayd.testing.care import Posts
from fayd.testing.firmware import FIRMWARE_LIB, FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess, free_port

# Test daemons share the rebuildable files a start makes (fayd.testing.harness.CACHED):
# only the first of a run pays the ~5 s for them. Tests of those files pass
# shared_cache=False.
harness.SHARE_CACHE = True
# Two pytest workers run daemons side by side on 2 cores: a model thread each, not two that
# wait on each other at every layer (these test files ran 11 % faster so, measured).
harness.DAEMON_ENV = {"FAYD_LLM_THREADS": "1", "FAYD_SPEECH_ASR_THREADS": "1"}

MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
#: A daemon on a broker not its own (mqtt.url) answers only devices added on it; tests of
#: other things that use devices never added (firmware with no key, odd ids) say so.
ANY_DEVICE = {"FAYD_MQTT_ONLY_ADDED": "false"}
needs_mosquitto = pytest.mark.skipif(
    MOSQUITTO is None, reason="mosquitto binary not installed (./install.sh installs it)"
)


def wait_port(port: int, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on {port} after {within_s} s")


class Broker:
    """A real mosquitto on loopback that a test can stop and start again."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\nuser {getpass.getuser()}\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert MOSQUITTO
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.port)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    b = Broker(tmp_path)
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon with the real default models, shared by the end-to-end tests."""
    if MOSQUITTO is None:
        pytest.skip("mosquitto binary not installed (./install.sh installs it)")
    d = DaemonProcess(tmp_path_factory.mktemp("fayd-state")).start()
    yield d
    assert d.stop() == 0, d.log_text()


@pytest.fixture
def make_daemon(tmp_path: Path) -> Iterator[type]:
    """Start daemons with special settings; each is stopped after the test."""
    started: list[DaemonProcess] = []

    def make(env: dict[str, str] | None = None, wait_ready: bool = True) -> DaemonProcess:
        d = DaemonProcess(tmp_path / f"state{len(started)}", env)
        started.append(d)
        return d.start(wait_ready)

    yield make  # type: ignore[misc]
    for d in started:
        d.stop()


# --- the real default models, loaded once per test run ------------------------------------
# Speech is made at test time with the Piper voice (clear enough for Whisper) or espeak-ng +
# sox (a second, robotic voice), never read from checked-in audio.

SPOKEN = "Please turn on the kitchen light and play some music."
KEY_WORDS = {"kitchen", "light", "music"}


@pytest.fixture(scope="session")
def key_words() -> set[str]:
    """Words of :data:`SPOKEN` that a transcript must contain."""
    return KEY_WORDS


@pytest.fixture(scope="session")
def piper_tts():
    """The default voice without its random noise, so every run hears the same audio."""
    from fayd.speech.tts import PiperTts

    files = resolve("tts").files
    return PiperTts(files["model"], files["config"], threads=2, noise_scale=0, noise_w_scale=0)


@pytest.fixture(scope="session")
def whisper_asr():
    from fayd.speech.asr import WhisperAsr

    return WhisperAsr(resolve("asr").files["model"], language="en", threads=2)


@pytest.fixture(scope="session")
def local_llm():
    from fayd.llm.local import LocalLlm

    # One thread: llama.cpp's threads wait on each other at every layer, so on a busy 2-core
    # machine (other tests, a compiler) two threads ran ~8x slower than one (measured).
    return LocalLlm(resolve("llm").files["model"], n_ctx=2048, threads=1, seed=1234)


@pytest.fixture(scope="session")
def vad_model_path() -> Path:
    return resolve("vad").files["model"]


@pytest.fixture(scope="session")
def piper_speech_16k(piper_tts) -> np.ndarray:
    """:data:`SPOKEN` in the Piper voice, as 16 kHz float32 (what the VAD and ASR take)."""
    pcm = b"".join(piper_tts.synthesize(SPOKEN))
    return resample(pcm16_to_float(pcm), piper_tts.sample_rate, 16000)


@pytest.fixture(scope="session")
def espeak_speech_16k(tmp_path_factory) -> np.ndarray:
    """:data:`SPOKEN` by espeak-ng, converted by sox to 16 kHz mono 16-bit."""
    from fayd.testing.speech import ESPEAK_INSTALL, espeak_16k, missing_espeak_tools

    if missing_espeak_tools():
        pytest.skip(f"espeak-ng and sox are needed ({ESPEAK_INSTALL})")
    return espeak_16k(SPOKEN, tmp_path_factory.mktemp("espeak") / "spoken.wav")


@pytest.fixture(scope="session")
def speak(piper_tts):
    """text → 16 kHz float32 Piper speech with ``pad_s`` of silence on each side."""

    def make(text: str, pad_s: float = 1.0) -> np.ndarray:
        pcm = b"".join(piper_tts.synthesize(text))
        speech = resample(pcm16_to_float(pcm), piper_tts.sample_rate, 16000)
        pad = np.zeros(int(16000 * pad_s), dtype=np.float32)
        return np.concatenate([pad, speech, pad])

    return make


# --- memory (issue 4): the real MiniLM embedder, loaded once ------------------------------


@pytest.fixture(scope="session")
def embedder():
    from fayd.embedding import Embedder

    files = resolve("embed").files
    return Embedder(files["model"], files["tokenizer"], threads=1)


@pytest.fixture(scope="session")
def router(embedder):
    """The real router (issue 12): the shipped qa.csv and intents, the MiniLM embedder."""
    from fayd.agent.features import all_skills
    from fayd.agent.language.intents import IntentClassifier, load_examples
    from fayd.agent.understand.qa import DEFAULT_QA, QaTable
    from fayd.agent.understand.router import Router

    qa = QaTable.load(DEFAULT_QA, all_skills().names)
    return Router(embedder, IntentClassifier(embedder, load_examples([])), qa)


# --- serial: PTY pairs made by socat (issue 5) ---------------------------------------------

SOCAT = shutil.which("socat")


class PtyPair:
    """Two connected pseudo-terminals made by socat: ``a`` for fayd, ``b`` for the device.

    ``stop()`` is an unplugged cable (socat exits, both PTYs hang up, the links vanish) and
    ``start()`` again, with the same names, a replug. Every socat started is waited for.
    """

    def __init__(self, folder: Path, a: str = "ttyFAYD0", b: str = "device0") -> None:
        self.a = folder / a
        self.b = folder / b
        self.log = folder / f"socat-{a}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, within_s: float = 10.0) -> PtyPair:
        assert SOCAT and self.proc is None
        for link in (self.a, self.b):  # left behind only if socat was killed hard
            link.unlink(missing_ok=True)
        # socat's notices go to a file, not a pipe: nothing can fill up and block it.
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [
                    SOCAT,
                    "-d",
                    "-d",
                    f"pty,raw,echo=0,link={self.a}",
                    f"pty,raw,echo=0,link={self.b}",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        deadline = time.monotonic() + within_s
        while b"starting data transfer loop" not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"socat did not start: {self.log.read_text()}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def pty_pair(tmp_path: Path) -> Iterator[PtyPair]:
    if SOCAT is None:
        pytest.skip("socat not installed (./install.sh installs it)")
    pair = PtyPair(tmp_path).start()
    yield pair
    pair.stop()


# --- firmware (issue 5): the MicroPython firmware on the unix port ------------------------


@pytest.fixture
def firmware(tmp_path: Path) -> Iterator:
    """Start firmware processes with a config; each is stopped (and waited for) after the test."""
    if micropython() is None or not (FIRMWARE_LIB / "umqtt" / "simple.py").exists():
        pytest.skip("MicroPython unix port or umqtt missing: sh firmware/tools/host_setup.sh")
    started: list[FirmwareProcess] = []

    def make(config: dict, name: str = "fw") -> FirmwareProcess:
        fw = FirmwareProcess(tmp_path / name, config)
        started.append(fw)
        return fw.start()

    yield make
    for fw in started:
        fw.stop()


class Frames:
    """What the devices were sent, as the transport would send it (a FrameSender)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []

    def send(self, device: str, frame: object) -> bool:
        self.sent.append((device, frame))
        return True

    def of(self, device: str, kind: type) -> list:
        """The frames of ``kind`` sent to ``device``."""
        return [f for d, f in self.sent if d == device and isinstance(f, kind)]


async def frames_until(device, done, within_s: float = 120.0, got: list | None = None) -> list:
    """Read a simulated device's frames into ``got`` (fresh, or the history so far) until
    ``done(got)``. Pass one history through a test: a reply's closing text frame can come
    before the event the test waits on first."""
    got = [] if got is None else got
    async with asyncio.timeout(within_s):
        while not done(got):
            got.append(await device.received.get())
    return got


def is_text_end(item: tuple) -> bool:
    kind, frame, _ = item
    return kind == "human" and frame.key == "text" and frame.is_end


@pytest.fixture
def posts() -> Iterator[Posts]:
    """A loopback json:// endpoint caregivers' notifications reach (the care tests)."""
    p = Posts()
    yield p
    p.close()


# --- the suite's order: the longest files first ---------------------------------------------

#: Seconds each of the slowest files took (--durations=0 on 2 cores, summed per file). The
#: workers take whole files (--dist loadfile): started last, a 2-minute file would leave the
#: other workers idle at the end; started first, the short files fill in around it.
SLOWEST_FILES = {
    "test_reminders_e2e.py": 147,
    "test_homeassistant.py": 80,
    "test_endpointing_e2e.py": 70,
    "test_care_e2e.py": 68,
    "test_firmware_mqtt.py": 67,
    "test_care_rules_e2e.py": 64,
    "test_log_privacy.py": 60,
    "test_db_damage.py": 54,
    "test_firmware_sensors.py": 52,
    "test_edges.py": 52,
    "test_tools_e2e.py": 50,
    "test_status_truth.py": 50,
    "test_startup_errors.py": 48,
    "test_firmware_alarms.py": 45,
    "test_serial_auth.py": 43,
    "test_firmware_contract.py": 43,
    "test_memory_extract.py": 42,
    "test_provision.py": 41,
    "test_memory_index.py": 38,
    "test_care_checkin_e2e.py": 35,
    "test_household_e2e.py": 34,
    "test_care_before_disk.py": 34,
    "test_mcp_client_faults.py": 33,
    "test_daemon_e2e.py": 33,
    "test_cli_errors.py": 33,
    "test_offline.py": 31,
    "test_poison.py": 30,
    "test_openai_endpoint.py": 32,
    "test_mcp_daemon.py": 23,
    "test_voice_zh_e2e.py": 27,
    "test_web_browser.py": 18,
    "test_speech_asr_languages.py": 17,
    "test_speech_tts_zh.py": 14,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (SLOWEST_FILES), the others after in their own order."""
    items.sort(key=lambda item: -SLOWEST_FILES.get(item.path.name, 0))
