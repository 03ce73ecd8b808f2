"""The README and CI must not drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

from fayd.cli.main import build_parser

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_cli_command_is_documented() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in sub.choices:
        assert f"fayd {name}" in README, f"`fayd {name}` is not in README.md"
    for action in ("list", "check", "install"):
        assert f"fayd models {action}" in README
    assert "fayd sim device" in README


def test_ci_runs_the_readme_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = re.findall(r"^(\S.*?)\s+#", README.split("## Two commands")[1], re.M)
    install, tests = commands[0], commands[1]
    assert install.startswith("./install.sh")
    assert "./install.sh\n" in ci
    assert tests in ci


def test_documented_settings_exist() -> None:
    from fayd.config import load_config

    cfg = load_config(environ={})
    for section, key in re.findall(r"FAYD_([A-Z]+)_([A-Z_]+)=", README):
        assert hasattr(getattr(cfg, section.lower()), key.lower()), f"FAYD_{section}_{key}"
