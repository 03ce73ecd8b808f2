"""``fayd models check``: is each role's model installed, whole and the pinned version?

Sizes are always compared (a stat: free); sha256 only when asked, because hashing the default
set reads ~270 MB. Digests are cached by path + size + mtime so a second check is instant.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fayd.errors import ModelMissing
from fayd.models.manifest import Manifest, default_paths, install_hint, load_manifest, resolve

OK = "ok"
MISSING = "missing"
BAD_SIZE = "bad-size"
BAD_SHA = "bad-sha"


@dataclass(frozen=True)
class CheckResult:
    role: str
    status: str  # OK, MISSING, BAD_SIZE or BAD_SHA
    path: str  # the model's path, or the first file found wrong
    install_hint: str
    detail: str = ""
    #: The role is optional (not in the default set): its absence is no problem.
    optional: bool = False

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def problem(self) -> bool:
        """Something to fix: a required model not whole, or an optional one installed broken."""
        return not self.ok and not (self.optional and self.status == MISSING)


def sha256_file(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class DigestCache:
    """sha256 digests kept in ``<cache_dir>/model-digests.json``, keyed by path, size and
    mtime_ns (any rewrite of the file changes the key, so a stale digest is never used)."""

    def __init__(self, cache_dir: str | Path) -> None:
        self.file = Path(cache_dir) / "model-digests.json"
        self._data: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._data is None:
            try:
                self._data = dict(json.loads(self.file.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                self._data = {}  # a missing or damaged cache only costs a re-hash
        return self._data

    def sha256(self, path: Path) -> str:
        st = path.stat()
        key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        data = self._load()
        if key not in data:
            data[key] = sha256_file(path)
            self._save()
        return data[key]

    def _save(self) -> None:
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.file.with_name(f"{self.file.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self._data, indent=0, sort_keys=True), encoding="utf-8")
            tmp.replace(self.file)  # atomic: a concurrent reader sees the old or the new file
        except OSError:
            pass  # the cache is an optimisation; a read-only disk must not fail a check


def check(
    role: str,
    verify_sha: bool = False,
    *,
    cache_dir: str | Path | None = None,
    manifest: Manifest | None = None,
    override: str | Path | None = None,
) -> CheckResult:
    """Check one role. A user's own model (``override``) can only be checked for presence."""
    manifest = manifest or load_manifest()
    spec = manifest.role(role)
    hint = install_hint(role, manifest)
    if override is not None:
        try:
            found = resolve(role, override, manifest)
        except ModelMissing as exc:
            return CheckResult(role, MISSING, exc.path, exc.install_hint)
        return CheckResult(role, OK, str(found.files["model"]), hint, "user's own model")
    cache = DigestCache(cache_dir) if cache_dir is not None else None
    paths = default_paths(spec)
    opt = spec.optional
    for key, f in spec.files.items():
        base = paths[key]
        if base is None:
            shown = f"<{f.module}>/{f.path}"
            detail = f"package {f.module!r} not installed"
            return CheckResult(role, MISSING, shown, hint, detail, opt)
        for d in f.digests:
            target = base / d.path if d.path else base
            if not target.is_file():
                return CheckResult(role, MISSING, str(target), hint, "file not found", opt)
            size = target.stat().st_size
            if size != d.size:
                detail = f"size {size}, expected {d.size}"
                return CheckResult(role, BAD_SIZE, str(target), hint, detail, opt)
            if verify_sha:
                digest = cache.sha256(target) if cache is not None else sha256_file(target)
                if digest != d.sha256:
                    detail = f"sha256 {digest}, expected {d.sha256}"
                    return CheckResult(role, BAD_SHA, str(target), hint, detail, opt)
    return CheckResult(role, OK, str(paths["model"]), hint, spec.name, opt)


def check_all(
    verify_sha: bool = False,
    *,
    cache_dir: str | Path | None = None,
    manifest: Manifest | None = None,
    overrides: Mapping[str, str | Path | None] | None = None,
    roles: Iterable[str] | None = None,
) -> list[CheckResult]:
    """Check every role of the manifest (or ``roles``), in manifest order; an optional role
    that is not installed comes back MISSING with ``problem`` False."""
    manifest = manifest or load_manifest()
    overrides = overrides or {}
    return [
        check(r, verify_sha, cache_dir=cache_dir, manifest=manifest, override=overrides.get(r))
        for r in (roles if roles is not None else manifest.roles)
    ]
