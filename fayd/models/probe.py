"""Trying a model file in a child process before the daemon loads it.

Some runtimes end the whole process on a file they cannot use instead of raising:
sherpa-onnx calls exit() (missing metadata, an unsupported export), TFLite segfaults. A
script that loads the file runs first in a fresh interpreter, so only that child dies.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from fayd.children import die_with_parent
from fayd.errors import ModelError


def probe_in_child(
    script: str, args: Sequence[str], *, what: str, timeout: float, by: str = ""
) -> None:
    """Run the Python ``script`` with ``args`` (its ``sys.argv[1:]``) in a child process.

    Raises ModelError "``what``: loading took over …" when it outlives ``timeout`` seconds,
    and "``what`` is not usable``by``: <its last line of error output>" when it fails.
    """
    try:
        # run() kills and reaps the child on timeout: nothing is left orphaned.
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            # Dies with fayd if fayd is killed meanwhile (fayd.children); this thread
            # waits for it, so the forking thread outlives it as the signal needs.
            preexec_fn=die_with_parent(),
        )
    except subprocess.TimeoutExpired as exc:
        raise ModelError(f"{what}: loading took over {timeout:g} s") from exc
    if done.returncode != 0:
        output = done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}"
        raise ModelError(f"{what} is not usable{by}: {output.splitlines()[-1]}")
