"""``fayd models install``: pip-install the packages that ship the default models."""

from __future__ import annotations

import importlib
import shlex
import subprocess
import sys
from collections.abc import Iterable

from fayd.errors import ModelError
from fayd.models.manifest import Manifest, install_command


def install(
    roles: Iterable[str], manifest: Manifest | None = None, python: str | None = None
) -> None:
    """Run the pip commands for ``roles`` with pip's own output visible (it can take minutes
    and the user should see why). Raises ModelError when pip fails."""
    for argv in install_command(list(roles), manifest, python):
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
