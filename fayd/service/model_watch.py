"""Notices a model file that breaks while fayd runs (an SD card's doing, a half-finished
copy over it): ``fayd status`` then says that model is broken, rather than ``ok`` for as
long as fayd runs. Each device loads the VAD anew, so a broken VAD file fails every new
microphone; the other models are in memory, but the next start would fail on the file.

Every CHECK_S the model files in use are looked at (a stat: free). One whose size or time
changed is checked again off the event loop: a default model against the manifest's sha256,
one's own by loading it as fayd would (fayd.service.model_verify). It stays broken until a check
passes (the file restored or reinstalled).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from fayd.config import Config
from fayd.models import check, load_manifest
from fayd.models.manifest import default_paths
from fayd.service.engines import DEFAULT_WAKE, Engines
from fayd.service.model_verify import verified

log = logging.getLogger(__name__)

CHECK_S = 5.0
#: A folder of one's own (a Whisper model) is looked at this deep, no further.
MAX_FILES = 64

Signature = tuple[tuple[str, int, int], ...]


class ModelWatch:
    def __init__(self, cfg: Config, engines: Engines, every_s: float = CHECK_S) -> None:
        self.cfg = cfg
        self.engines = engines
        self.every_s = every_s
        self.manifest = load_manifest()  # read once: it does not change while fayd runs
        #: role → why its file is broken now (cleared once it checks whole again).
        self.broken: dict[str, str] = {}
        self._seen: dict[str, Signature] = {}

    def roles(self) -> dict[str, list[Path]]:
        """role → the files of its model in use (the ones loaded without a problem)."""
        manifest = self.manifest
        found: dict[str, list[Path]] = {}
        for role, path in self.engines.files.items():
            if role in self.engines.problems or role not in manifest.roles or "://" in path:
                continue  # not loaded, or a server (llm.url)
            if role == "wake" and role not in self.engines.own and path != DEFAULT_WAKE:
                continue  # another bundled word: not the manifest's files
            if role in self.engines.own:
                found[role] = list(_files_of(Path(path)))
            else:
                spec = manifest.role(role)
                paths = default_paths(spec)
                found[role] = [
                    base / d.path if d.path else base
                    for key, f in spec.files.items()
                    if (base := paths[key]) is not None
                    for d in f.digests
                ]
        return found

    async def run(self) -> None:
        self._seen = {role: _signature(files) for role, files in self.roles().items()}
        while True:
            await asyncio.sleep(self.every_s)
            await self.look()

    async def look(self) -> None:
        """Check again each model whose files changed since they were last looked at."""
        for role, files in self.roles().items():
            now = _signature(files)
            if now == self._seen.get(role):
                continue
            self._seen[role] = now
            problem = await asyncio.to_thread(self._problem, role)
            if problem and self.broken.get(role) != problem:
                log.error("the %s model broke while fayd runs: %s", role, problem)
            elif not problem and role in self.broken:
                log.warning("the %s model file is whole again", role)
            if problem:
                self.broken[role] = problem
            else:
                self.broken.pop(role, None)

    def _problem(self, role: str) -> str | None:
        """Why ``role``'s file in use is not whole now; None when it is."""
        if role in self.engines.own:
            path = self.engines.files[role]
            whole, detail = verified(self.cfg, role, path)
            return None if whole else f"{path} changed while fayd runs: {detail}"
        cache = self.cfg.state_dir / "cache"
        found = check(role, verify_sha=True, cache_dir=cache, manifest=self.manifest)
        if found.ok:
            return None
        return (
            f"{found.path} changed while fayd runs: {found.status} ({found.detail});"
            f" reinstall it with: {found.install_hint}"
        )


def _files_of(path: Path) -> Iterator[Path]:
    if not path.is_dir():
        yield path
        return
    for n, (folder, _, names) in enumerate(os.walk(path)):
        for name in sorted(names)[:MAX_FILES]:
            yield Path(folder) / name
        if n >= MAX_FILES:
            return


def _signature(files: list[Path]) -> Signature:
    """Each file's size and modification time (-1 when it is gone)."""
    found = []
    for path in files:
        try:
            st = path.stat()
            found.append((str(path), st.st_size, st.st_mtime_ns))
        except OSError:
            found.append((str(path), -1, -1))
    return tuple(found)
