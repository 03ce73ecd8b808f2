"""The model manifest: which package ships each role's default model, and where.

Every default model lives inside a registry package (fayd never downloads weights at run
time). A model file is found through the package's folder, located with
``importlib.util.find_spec`` — never by importing the package, because several of them import
heavy or unrelated things (torch, an LLM CLI) on import.
"""

from __future__ import annotations

import functools
import importlib.util
import shlex
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fayd.errors import ModelError, ModelMissing

#: The default set: what ``fayd models install`` fetches and ``check`` requires. The manifest
#: may add optional roles (``optional = true``, e.g. tts_zh) installed only when named.
ROLES = ("vad", "asr", "llm", "tts", "embed", "wake")


@dataclass(frozen=True)
class FileDigest:
    """Expected size and sha256 of one file; ``path`` is relative to its entry ("" = itself)."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelFile:
    """One named file (or directory) of a role, inside one package's folder."""

    key: str
    module: str
    path: str
    digests: tuple[FileDigest, ...]
    is_dir: bool = False
    override_name: str | None = None


@dataclass(frozen=True)
class Package:
    """A registry package that ships (part of) a model."""

    dist: str
    version: str
    module: str
    no_deps: bool = False

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class RoleSpec:
    """The default model of one role."""

    role: str
    name: str
    language: str
    licence: str
    engine: str
    packages: tuple[Package, ...]
    files: Mapping[str, ModelFile]
    notes: str = ""
    #: The setting that takes a user's own model instead ("" = none), and what it takes.
    setting: str = ""
    own: str = ""
    #: Not in the default set: installed only when named, no problem when absent.
    optional: bool = False


@dataclass(frozen=True)
class PartsFile:
    """A file of an alternative, put together from parts shipped in packages."""

    path: str  # in the alternative's folder
    parts: tuple[tuple[str, str], ...]  # (module, path inside its folder), in order
    size: int
    sha256: str


@dataclass(frozen=True)
class Choice:
    """An alternative to a role's default that ``fayd models install --choice`` fetches."""

    role: str
    key: str  # its name on the command line
    name: str
    language: str
    licence: str
    engine: str
    packages: tuple[Package, ...]
    files: tuple[PartsFile, ...]
    #: Settings to change besides the role's own (e.g. the ASR language).
    settings: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""


@dataclass(frozen=True)
class Manifest:
    source: Path
    roles: Mapping[str, RoleSpec] = field(default_factory=dict)
    #: role → name → alternative.
    choices: Mapping[str, Mapping[str, Choice]] = field(default_factory=dict)

    def choice(self, role: str, key: str) -> Choice:
        self.role(role)
        found = self.choices.get(role, {})
        if key not in found:
            known = ", ".join(found) or "none"
            raise ModelError(f"no choice {key!r} for the {role} model (known: {known})")
        return found[key]

    def default_roles(self) -> list[str]:
        """The roles installed and required by default (every role not ``optional``)."""
        return [name for name, spec in self.roles.items() if not spec.optional]

    def role(self, role: str) -> RoleSpec:
        try:
            return self.roles[role]
        except KeyError:
            known = ", ".join(self.roles) or "none"
            raise ModelError(f"unknown model role {role!r} (known: {known})") from None


@dataclass(frozen=True)
class ResolvedModel:
    """Where a role's model files are on disk. ``files["model"]`` is always present."""

    role: str
    name: str
    files: dict[str, Path]
    overridden: bool = False


def default_manifest_path() -> Path:
    # An installed wheel carries a copy beside this module; a source checkout has the
    # original at the repository root.
    packaged = Path(__file__).with_name("manifest.toml")
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "models" / "manifest.toml"


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Parse a manifest file (the default one when ``path`` is None; that one is cached)."""
    if path is None:
        return _default_manifest()
    return _parse(Path(path))


@functools.lru_cache(maxsize=1)
def _default_manifest() -> Manifest:
    return _parse(default_manifest_path())


def _parse(path: Path) -> Manifest:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelError(f"cannot read model manifest {path}: {exc}") from exc
    try:
        roles = {name: _parse_role(name, raw) for name, raw in data.get("roles", {}).items()}
        choices = {
            role: {key: _parse_choice(role, key, raw) for key, raw in found.items()}
            for role, found in data.get("choices", {}).items()
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"bad model manifest {path}: {exc!r}") from exc
    return Manifest(source=path, roles=roles, choices=choices)


def _parse_packages(raw: list[dict]) -> tuple[Package, ...]:
    return tuple(
        Package(p["dist"], str(p["version"]), p["module"], bool(p.get("no_deps", False)))
        for p in raw
    )


def _parse_choice(role: str, key: str, raw: dict) -> Choice:
    files = tuple(
        PartsFile(
            f["path"],
            tuple((part["module"], part["path"]) for part in f["parts"]),
            int(f["size"]),
            f["sha256"],
        )
        for f in raw["files"]
    )
    return Choice(
        role=role,
        key=key,
        name=raw["name"],
        language=raw.get("language", ""),
        licence=raw.get("licence", ""),
        engine=raw.get("engine", ""),
        packages=_parse_packages(raw["packages"]),
        files=files,
        settings=dict(raw.get("settings", {})),
        notes=raw.get("notes", ""),
    )


def _parse_role(role: str, raw: dict) -> RoleSpec:
    packages = _parse_packages(raw["packages"])
    files = {key: _parse_file(key, f) for key, f in raw["files"].items()}
    if "model" not in files:
        raise ValueError(f"role {role!r} has no files.model entry")
    return RoleSpec(
        role=role,
        name=raw["name"],
        language=raw.get("language", ""),
        licence=raw.get("licence", ""),
        engine=raw.get("engine", ""),
        packages=packages,
        files=files,
        notes=raw.get("notes", ""),
        setting=raw.get("setting", ""),
        own=raw.get("own", ""),
        optional=bool(raw.get("optional", False)),
    )


def _parse_file(key: str, raw: dict) -> ModelFile:
    contents = raw.get("contents")
    if contents is not None:
        digests = tuple(FileDigest(c["path"], int(c["size"]), c["sha256"]) for c in contents)
    else:
        digests = (FileDigest("", int(raw["size"]), raw["sha256"]),)
    return ModelFile(
        key=key,
        module=raw["module"],
        path=raw["path"],
        digests=digests,
        is_dir=contents is not None,
        override_name=raw.get("override_name"),
    )


# --- locating files ------------------------------------------------------------------------


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_paths(spec: RoleSpec) -> dict[str, Path | None]:
    """Each file's path inside its package, or None when the package is not installed."""
    out: dict[str, Path | None] = {}
    for key, f in spec.files.items():
        base = package_dir(f.module)
        out[key] = None if base is None else base / f.path
    return out


def install_hint(roles: str | Iterable[str], manifest: Manifest | None = None) -> str:
    """The exact command(s) that install the default model(s) of ``roles``."""
    roles = [roles] if isinstance(roles, str) else list(roles)
    commands = install_command(roles, manifest)
    pip = " && ".join(shlex.join(argv) for argv in commands)
    return f"fayd models install {' '.join(roles)}   (or: {pip})"


def install_command(
    roles: Iterable[str], manifest: Manifest | None = None, python: str | None = None
) -> list[list[str]]:
    """pip argv lists installing the packages of ``roles``: one call with dependencies, one
    with ``--no-deps`` for the packages whose own dependencies fayd must not pull in."""
    manifest = manifest or load_manifest()
    return pip_commands([p for role in roles for p in manifest.role(role).packages], python)


def pip_commands(packages: Iterable[Package], python: str | None = None) -> list[list[str]]:
    """pip argv lists installing ``packages`` (see install_command)."""
    python = python or sys.executable
    normal: list[str] = []
    no_deps: list[str] = []
    for pkg in packages:
        bucket = no_deps if pkg.no_deps else normal
        if pkg.requirement not in bucket:
            bucket.append(pkg.requirement)
    commands = []
    if normal:
        commands.append([python, "-m", "pip", "install", *normal])
    if no_deps:
        commands.append([python, "-m", "pip", "install", "--no-deps", *no_deps])
    return commands


def resolve(
    role: str,
    override: str | Path | None = None,
    manifest: Manifest | None = None,
    *,
    verify_size: bool = True,
) -> ResolvedModel:
    """Find a role's model files on disk.

    ``override`` is a user's own model file or directory: it replaces ``files["model"]`` and
    skips the package lookup for every file that has an ``override_name`` (e.g. a Piper
    voice's ``.json`` beside it). Raises ModelMissing (with the install command) when a file
    is absent, and ModelError when a packaged file has the wrong size (a different package
    version: its digests in the manifest no longer hold). Never imports model packages.
    """
    manifest = manifest or load_manifest()
    spec = manifest.role(role)
    if override is not None:
        return _resolve_override(spec, Path(override).expanduser(), manifest)
    files: dict[str, Path] = {}
    for key, path in default_paths(spec).items():
        files[key] = _require(spec, spec.files[key], path, manifest, verify_size)
    return ResolvedModel(role=role, name=spec.name, files=files)


def _resolve_override(spec: RoleSpec, model: Path, manifest: Manifest) -> ResolvedModel:
    hint = "fix the path, or drop the override to use the default model: " + install_hint(
        spec.role, manifest
    )
    if not model.exists():
        raise ModelMissing(spec.role, str(model), hint)
    files: dict[str, Path] = {"model": model}
    for key, f in spec.files.items():
        if key == "model":
            continue
        if f.override_name is not None:
            path = model.parent / f.override_name.format(model=model.name)
            if not path.exists():
                raise ModelMissing(spec.role, str(path), f"put the {key} file beside {model}")
            files[key] = path
        else:
            base = package_dir(f.module)
            files[key] = _require(spec, f, None if base is None else base / f.path, manifest)
    return ResolvedModel(role=spec.role, name=model.name, files=files, overridden=True)


def _require(
    spec: RoleSpec, f: ModelFile, path: Path | None, manifest: Manifest, verify_size: bool = True
) -> Path:
    if path is None or not path.exists():
        shown = str(path) if path is not None else f"<{f.module}>/{f.path}"
        raise ModelMissing(spec.role, shown, install_hint(spec.role, manifest))
    if verify_size:
        for d in f.digests:
            target = path / d.path if d.path else path
            if not target.is_file():
                raise ModelMissing(spec.role, str(target), install_hint(spec.role, manifest))
            size = target.stat().st_size
            if size != d.size:
                raise ModelError(
                    f"{spec.role} model file {target} has size {size}, expected {d.size}:"
                    f" reinstall it with: {install_hint(spec.role, manifest)}"
                )
    return path
