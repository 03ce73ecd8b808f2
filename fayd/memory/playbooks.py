"""Procedural memory (jiyi): playbooks, markdown files in a folder, read at context assembly.

``<folder>/*.md`` apply to everyone, ``<folder>/<user>/*.md`` to one user. A playbook's title
is its first ``# `` heading (else the file name); its summary, the first paragraph after it,
is what context assembly keeps when the whole file does not fit. Files are written by the
people who run fayd (the folder is the trust boundary), so they are not screened.
Read on every assembly: an edit applies at the next turn, no reload needed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: A larger file is skipped with a warning: a playbook is a page, not a manual.
MAX_BYTES = 16_000


@dataclass(frozen=True)
class Playbook:
    path: Path
    title: str
    summary: str
    body: str


def parse(path: Path, text: str) -> Playbook:
    lines = text.strip().splitlines()
    title = path.stem.replace("_", " ").replace("-", " ")
    if lines and lines[0].startswith("# "):
        title = lines.pop(0)[2:].strip()
    body = "\n".join(lines).strip()
    summary = body.split("\n\n", 1)[0].strip()
    return Playbook(path, title, summary, body)


def load(folder: str | Path | None, username: str | None = None) -> list[Playbook]:
    """The playbooks that apply to ``username``, by file name (shared ones first)."""
    if folder is None:
        return []
    root = Path(folder)
    dirs = [root] + ([root / username] if username and "/" not in username else [])
    out = []
    for d in dirs:
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.md")):
            try:
                if path.stat().st_size > MAX_BYTES:
                    log.warning("playbook %s is over %d bytes: skipped", path, MAX_BYTES)
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                log.warning("cannot read playbook %s: %s", path, exc)
                continue
            if text.strip():
                out.append(parse(path, text))
    return out
