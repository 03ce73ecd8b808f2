"""install.sh: it parses, lints, documents itself, and --system lays out the right files.

A real run builds a venv and llama-cpp-python (minutes), so --system is exercised with
FAYD_ROOT (a staging prefix: no users, chown, apt or systemctl) and FAYD_INSTALL_SKIP_PYTHON
(no venv, pip or models) from a copy of the checkout's install files.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "install.sh"
BASH = shutil.which("bash") or "/bin/bash"


def run(
    *args: str, env: dict[str, str] | None = None, script: Path = SCRIPT
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("FAYD_", "PYTHON"))}
    return subprocess.run(
        [BASH, str(script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_bash_parses_it() -> None:
    done = subprocess.run([BASH, "-n", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_is_clean() -> None:
    done = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_help() -> None:
    done = run("--help")
    assert done.returncode == 0, done.stderr
    for word in ("--system", "FAYD_ROOT", "PYTHON", "CMAKE_ARGS", ".venv", "/opt/fayd/venv"):
        assert word in done.stdout


def test_unknown_option_fails_with_usage() -> None:
    done = run("--frobnicate")
    assert done.returncode != 0
    assert "unknown option: --frobnicate" in done.stderr
    assert "Usage:" in done.stderr


def test_the_unit_runs_what_system_mode_installs() -> None:
    unit = (ROOT / "systemd" / "fayd.service").read_text()
    text = SCRIPT.read_text()
    assert "ExecStart=/opt/fayd/venv/bin/fayd run --config /etc/fayd/fayd.toml" in unit
    assert 'venv="$FAYD_ROOT/opt/fayd/venv"' in text
    assert 'etc="$FAYD_ROOT/etc/fayd"' in text and '"$etc/fayd.toml"' in text


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The files --system reads, copied so the test does not depend on the rest of the tree."""
    copy = tmp_path / "checkout"
    for name in ("install.sh", "pyproject.toml", "systemd/fayd.service", "udev/99-fayd.rules"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    example = copy / "fayd" / "fayd.example.toml"
    example.parent.mkdir()
    example.write_text("# the example config\n")
    return copy


def test_system_mode_into_a_staging_root(checkout: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "root"
    env = {"FAYD_ROOT": str(prefix), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    done = run("--system", env=env, script=checkout / "install.sh")
    assert done.returncode == 0, done.stdout + done.stderr

    unit = prefix / "etc/systemd/system/fayd.service"
    rules = prefix / "etc/udev/rules.d/99-fayd.rules"
    assert unit.read_bytes() == (ROOT / "systemd/fayd.service").read_bytes()
    assert rules.read_bytes() == (ROOT / "udev/99-fayd.rules").read_bytes()
    modules = (prefix / "etc/modules-load.d/fayd.conf").read_text().split()
    assert {"usbserial", "cdc_acm"} <= set(modules)

    config = prefix / "etc/fayd/fayd.toml"
    assert config.read_text() == "# the example config\n"
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o750
    assert stat.S_IMODE((prefix / "var/lib/fayd").stat().st_mode) == 0o750
    assert "not enabled" in done.stdout
    assert not (prefix / "opt/fayd/venv").exists()


def test_system_mode_again_keeps_the_users_config(checkout: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "root"
    env = {"FAYD_ROOT": str(prefix), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    assert run("--system", env=env, script=checkout / "install.sh").returncode == 0
    config = prefix / "etc/fayd/fayd.toml"
    config.write_text("# edited by the user\n")
    done = run("--system", env=env, script=checkout / "install.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert config.read_text() == "# edited by the user\n"
    assert "kept as it is" in done.stdout


def test_system_mode_refuses_an_incomplete_checkout(checkout: Path, tmp_path: Path) -> None:
    (checkout / "udev" / "99-fayd.rules").unlink()
    env = {"FAYD_ROOT": str(tmp_path / "root"), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    done = run("--system", env=env, script=checkout / "install.sh")
    assert done.returncode != 0
    assert "udev/99-fayd.rules is missing" in done.stderr
    assert not (tmp_path / "root").exists()  # it stopped before writing anything


def test_lang_zh_sets_auto_in_a_new_system_config(checkout: Path, tmp_path: Path) -> None:
    (checkout / "fayd" / "fayd.example.toml").write_text(
        '[speech]\n# asr_language = "en"\nasr_threads = 2\n[llm]\nthreads = 1\n'
    )
    prefix = tmp_path / "root"
    env = {"FAYD_ROOT": str(prefix), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    done = run("--system", "--lang", "zh", env=env, script=checkout / "install.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    config = prefix / "etc/fayd/fayd.toml"
    text = config.read_text()
    assert text.startswith('[speech]\nasr_language = "auto" #'), text
    assert text.endswith("asr_threads = 2\n[llm]\nthreads = 1\n")
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    # Run again: the value is there now, and stays as it is.
    again = run("--system", "--lang=zh", env=env, script=checkout / "install.sh")
    assert again.returncode == 0 and config.read_text() == text
    assert "kept:" in again.stdout


def test_lang_zh_never_overwrites_the_households_language(checkout: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "root"
    env = {"FAYD_ROOT": str(prefix), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    config = prefix / "etc/fayd/fayd.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[speech]\nasr_language = "en"\n')
    done = run("--system", "--lang", "zh", env=env, script=checkout / "install.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert config.read_text() == '[speech]\nasr_language = "en"\n'
    # A config without the section gets one.
    config.write_text("# mine\n")
    assert run("--system", "--lang", "zh", env=env, script=checkout / "install.sh").returncode == 0
    assert config.read_text().startswith('# mine\n\n[speech]\nasr_language = "auto"')


def test_lang_takes_only_zh() -> None:
    done = run("--lang", "fr")
    assert done.returncode != 0 and "--lang takes zh" in done.stderr
    assert "--lang zh" in run("--help").stdout


def test_without_lang_the_system_config_is_left_alone(checkout: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "root"
    env = {"FAYD_ROOT": str(prefix), "FAYD_INSTALL_SKIP_PYTHON": "1"}
    done = run("--system", env=env, script=checkout / "install.sh")
    assert done.returncode == 0 and "asr_language" not in done.stdout
    assert (prefix / "etc/fayd/fayd.toml").read_text() == "# the example config\n"


def test_developer_mode_installs_the_chinese_models_always() -> None:
    # A real developer run takes minutes (llama.cpp): its order is checked in the text. The
    # tests need Whisper base and the Chinese voice, so they come without --lang too; the
    # daemon's language is only printed, never set, in developer mode.
    body = SCRIPT.read_text().split("developer_install() {", 1)[1].split("\n}\n", 1)[0]
    assert body.index('install_models "$venv"') < body.index('install_chinese_models "$venv"')
    assert 'if [ -n "$LANG_ZH" ]' in body and "set_asr_language" not in body
